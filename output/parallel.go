package output

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime/pprof"
	"time"
	"unsafe"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/inorder"
)

// -j N: the frames of a file are read in batches, one goroutine at a time
// (capture.Reader.ReadBatch, which carries the decode state forward),
// decoded, filtered and printed on N goroutines, each batch into an output
// buffer of its own, and the buffers written in capture order (package
// inorder). Every frame's text is what the one-goroutine loop prints for
// it; what depends on the frames before (the first JSON frame has no
// comma, -c stops after N frames) is settled in order, by the writer.

// Default batch sizes: a batch is worth its hand-offs from a few hundred
// frames on; the frames and output in flight are at most parallelBatches
// per goroutine of them.
const (
	defaultBatchFrames = 1024
	parallelBatches    = 3
)

// jsonBatchFrames is the batch size of JSON output: ~1.5 KB a frame, so
// that 1024-frame batches held 9-18 MiB of output in flight on two
// goroutines (a peak RSS of 65-89 MiB on 200 MiB of frames) and the
// garbage collector marked it; 256 frames took 10-16 % less time on two
// CPUs and half the memory. (Text lines are ~100 bytes, for which smaller
// batches only add hand-offs.)
const jsonBatchFrames = 256

// maxJobs bounds -j: each goroutine has a decoder and batches of its own
// (-j 1000000 took 9 GiB before the first frame), and goroutines past the
// CPUs only wait.
const maxJobs = 256

// pbatch is a batch of frames and what a worker made of them.
type pbatch struct {
	cb capture.Batch
	// With a tracker, what it made of each frame, fed in order by the
	// reader: cand[i], frame i is a candidate for the output (loop's
	// test before the filter); its tracker fields (when the output reads
	// them) are tf's fields tfEnd[i-1] to tfEnd[i], their bytes copied
	// to tfBytes.
	cand    []bool
	tf      decode.Record
	tfEnd   []int
	tfBytes []byte
	out     outBuf
	// nsel frames were selected, their output ending at end in out; with
	// -c or -w (worker.each), ends[k] is where the output of the k-th
	// ends, and sel[k] is its index in cb.
	nsel, end int
	ends      []int
	sel       []int
	err       error // a worker's error, after the selected frames
	// skipsBefore is how many places of damage the batches before this
	// one were read past (capture.Batch.Skips).
	skipsBefore int
}

// outBuf is a batch's output: its worker's writer flushes into it.
type outBuf struct{ b []byte }

func (o *outBuf) Write(p []byte) (int, error) {
	o.b = append(o.b, p...)
	return len(p), nil
}

// parallel reports whether this run may decode on several goroutines, and
// how many: files only (a live capture or a pipe delivers frames as they
// come, and a batch would hold them back). The tracker is fed every frame
// in order by the reader, ahead of the output: -z views with -c, which
// describe the frames up to the last one printed, are made on one
// goroutine.
//
// A run stays on one goroutine whatever Jobs says when workers would only
// decode again what the reader did (idle: -q without -Y or -w), and when
// its reads wait on a writer (waits: a pipe or FIFO, stdin): a batch would
// hold its first frame back until its writer had written the batch's last.
func (o *Options) parallel(tr Tracker, idle, waits bool) int {
	if idle || waits {
		return 1
	}
	jobs := o.Jobs
	if jobs == 0 {
		jobs = usableCPUs()
	}
	if jobs < 2 || o.Iface != "" || o.Read == "-" || o.eagerLate || (tr != nil && len(o.Views) > 0 && o.Count > 0) {
		return 1
	}
	return jobs
}

// tracking is the reader's side of a run with a tracker: it feeds every
// frame, in order, and notes in the batch what the workers need of it.
type tracking struct {
	feed     feeder
	tr       Tracker
	findings interface{ HasFindings(*capture.Frame) bool }
	fields   bool // the output reads the tracker's fields
	all      bool // -a
	// fieldsHint and bytesHint: room for the tracker's fields and their
	// bytes in a batch, from the batches before (see sizeHint).
	fieldsHint, bytesHint sizeHint
}

// sizeHint is room for one of a batch's buffers: half as much again as
// the most a batch has needed. A batch's buffers start empty, and append
// grows a large slice a quarter at a time: each of the batches in flight
// allocated several times what it kept (-j 2 -T json: ~30 MB over a run,
// which made the garbage collector run and fault fresh pages in), where
// the batches after the first can start with room enough.
type sizeHint struct{ n int }

// maxRoom bounds a hint, in bytes: one batch of huge frames must not make
// every batch in flight hold as much (past it, each grows by append, as
// much as it needs).
const maxRoom = 4 << 20

// note records that a batch needed n elements of size bytes each.
func (h *sizeHint) note(n, size int) {
	if n > h.n {
		h.n = min(n+n/2, maxRoom/size)
	}
}

// room returns b, empty, with room for the hint (b itself when it has).
func room[T any](b []T, h sizeHint) []T {
	if cap(b) < h.n {
		return make([]T, 0, h.n)
	}
	return b[:0]
}

// read notes what batch b, just read, needed.
func (t *tracking) read(b *pbatch) {
	t.fieldsHint.note(len(b.tf.IDs), int(unsafe.Sizeof(decode.Value{})))
	t.bytesHint.note(len(b.tfBytes), 1)
}

// visit is ReadBatch's visit for batch b.
func (t *tracking) visit(b *pbatch) func(f *capture.Frame, i int) {
	b.cand, b.tfEnd = b.cand[:0], b.tfEnd[:0]
	b.tf.IDs, b.tf.Vals = room(b.tf.IDs, t.fieldsHint), room(b.tf.Vals, t.fieldsHint)
	b.tfBytes = room(b.tfBytes, t.bytesHint)
	return func(f *capture.Frame, i int) {
		if !f.Direct() { // a Direct frame was fed by the reader (SetDirectFeed)
			t.feed.Feed(f)
		}
		cand := t.all || f.SMCRelevant() || (t.findings != nil && t.findings.HasFindings(f))
		b.cand = append(b.cand, cand)
		if cand && t.fields {
			b.tf.Want = f.FieldWant()
			n := len(b.tf.IDs)
			t.tr.AppendFields(f, &b.tf)
			for j := n; j < len(b.tf.Vals); j++ {
				if v := &b.tf.Vals[j]; v.B != nil {
					// The tracker's bytes change with later frames.
					start := len(b.tfBytes)
					b.tfBytes = append(b.tfBytes, v.B...)
					v.B = b.tfBytes[start:len(b.tfBytes):len(b.tfBytes)]
				}
			}
		}
		b.tfEnd = append(b.tfEnd, len(b.tf.IDs))
	}
}

// worker is one decoding goroutine's own state.
type worker struct {
	o   *Options
	dec *capture.BatchDecoder
	flt *filter.Filter
	bw  *bufio.Writer
	p   printer
	// direct is the fields printer's direct plan (nil when the path is off).
	direct *fieldsPrinter
	// json is the JSON printer, appending to the batch's output itself.
	json *jsonPrinter
	// tracked: the reader fed a tracker and noted each frame's
	// candidacy, and its fields when fields is set (pbatch).
	tracked, fields bool
	// each: where each selected frame's output ends, and which it is,
	// are noted (pbatch.ends, sel): -c may end the output inside a
	// batch, and -w writes frame by frame.
	each bool
	// out is room for the output of a batch this worker prints.
	out sizeHint
}

func (o *Options) newWorker(r *capture.Reader, flt *filter.Filter, main printer) (*worker, error) {
	size := 1 << 16
	if o.Format == FormatJSON || o.Format == FormatJSONL {
		// The JSON printer appends to the batch's output itself
		// (worker.json): the writer is never used.
		size = 16
	}
	wk := &worker{o: o, dec: r.NewBatchDecoder(), bw: bufio.NewWriterSize(nil, size), each: o.Count > 0 || o.Write != ""}
	if flt != nil {
		// A filter may keep scratch state of its own while it matches.
		f, err := filter.Compile(o.DisplayFilter)
		if err != nil {
			return nil, fmt.Errorf("-Y: %w", err)
		}
		wk.flt = f
	}
	if main == nil {
		return wk, nil
	}
	p, err := o.printer(wk.bw)
	if err != nil {
		return nil, err
	}
	switch p := p.(type) {
	case *jsonPrinter:
		p.n = 1 // every frame after a comma: the writer drops the first one's
		wk.json = p
	case *fieldsPrinter:
		if mp := main.(*fieldsPrinter); mp.direct != nil {
			p.direct = wk.dec.DirectPlan()
			wk.direct = p
			// run prints such frames by AppendColumns alone.
			wk.dec.SetColumnsOnly(true)
		}
	}
	wk.p = p
	return wk, nil
}

// appendTracked adds to rec the tracker's fields the reader noted of the
// batch's i-th frame.
func (b *pbatch) appendTracked(rec *decode.Record, i int) {
	from := 0
	if i > 0 {
		from = b.tfEnd[i-1]
	}
	rec.IDs = append(rec.IDs, b.tf.IDs[from:b.tfEnd[i]]...)
	rec.Vals = append(rec.Vals, b.tf.Vals[from:b.tfEnd[i]]...)
}

// run decodes, selects and prints b's frames as loop does.
func (wk *worker) run(b *pbatch) {
	b.out.b = room(b.out.b, wk.out)
	b.ends, b.sel, b.err = b.ends[:0], b.sel[:0], nil
	b.nsel, b.end = 0, 0
	wk.bw.Reset(&b.out)
	if wk.json != nil {
		wk.json.dst = &b.out // it writes nothing else: bw stays empty
	}
	wk.dec.Reset(&b.cb)
	defer func() {
		if err := wk.bw.Flush(); err != nil && b.err == nil {
			b.err = err
		}
		wk.out.note(len(b.out.b), 1)
	}()
	o := wk.o
	for f := wk.dec.Next(); f != nil; f = wk.dec.Next() {
		if wk.direct != nil && f.Direct() {
			// Appended to the batch's output itself: through the
			// writer, each line was copied twice more.
			fp := wk.direct
			if wk.bw.Buffered() > 0 {
				wk.bw.Flush() // into the batch's output: cannot fail
			}
			b.out.b = append(fp.direct.AppendColumns(b.out.b, f, fp.sep, fp.quote), '\n')
		} else {
			i := wk.dec.Index()
			switch {
			case !wk.tracked:
				if !o.All && !f.SMCRelevant() {
					continue
				}
			case !b.cand[i]:
				continue
			case wk.fields:
				// Whole before the filter, as loop's eagerLate: the
				// fields describe the tracker right after the frame.
				b.appendTracked(f.Fields(), i)
			}
			if wk.flt != nil {
				rec := f.Fields()
				rec.Frame = f.Data
				if !wk.flt.Match(rec) {
					continue
				}
				switch {
				case !o.wholeSelected:
					wk.dec.SettleICRC(f)
				case wk.dec.Whole(f) && wk.fields:
					b.appendTracked(f.Fields(), i) // a new record
				}
			}
			if wk.p != nil {
				if err := wk.p.frame(f); err != nil {
					b.err = err
					return
				}
			}
		}
		b.nsel, b.end = b.nsel+1, len(b.out.b)+wk.bw.Buffered()
		if wk.each {
			b.ends = append(b.ends, b.end)
			b.sel = append(b.sel, wk.dec.Index())
		}
	}
}

// frameBytes is the room a batch's output starts with, per frame: about
// what a frame of the kernel's captures prints in the output's format.
func (o *Options) frameBytes() int {
	switch o.Format {
	case FormatJSON, FormatJSONL:
		return 2048
	case FormatFields:
		return 64
	}
	return 128
}

// ploop is loop on jobs goroutines (see parallel), an inorder.Pass: with
// a tracker, the batch's reader feeds it every frame in order (tracking);
// p is the printer whose begin and end frame the output.
func (o *Options) ploop(ctx context.Context, r *capture.Reader, flt *filter.Filter, tr Tracker, late *lateFields, w *capture.Writer, p printer, bw *bufio.Writer, jobs int, headers func(*capture.Frame) bool) error {
	size := o.batchFrames
	switch {
	case size > 0:
	case o.Format == FormatJSON || o.Format == FormatJSONL:
		size = jsonBatchFrames
	default:
		size = defaultBatchFrames
	}
	var track *tracking
	if tr != nil {
		track = &tracking{feed: feedTarget(tr), tr: tr, fields: late != nil, all: o.All}
		if flt != nil {
			// As loop: with -Y, a frame with a finding is a candidate.
			track.findings, _ = tr.(interface{ HasFindings(*capture.Frame) bool })
		}
	}
	workers := make([]*worker, jobs)
	for i := range workers {
		var err error
		if workers[i], err = o.newWorker(r, flt, p); err != nil {
			return err
		}
		workers[i].tracked, workers[i].fields = track != nil, late != nil
		// A worker's first batch starts with room for frames of the
		// usual size; the batches after it, for what it has needed.
		workers[i].out = sizeHint{n: size * o.frameBytes()}
		if headers != nil {
			// The workers print the text lines of the direct path's
			// frames from the layers it fills (Run's headers).
			workers[i].dec.SetDirectFeed(headers)
		}
	}
	if p != nil {
		if err := p.begin(); err != nil {
			return err
		}
	}
	jp, _ := p.(*jsonPrinter)
	if jp != nil && !jp.array {
		jp = nil
	}
	pl := &pipeline{o: o, ctx: ctx, w: w, bw: bw, jp: jp,
		prog: progress{on: o.Progress, w: o.Stderr, last: time.Now(), prefix: o.prefix()}}
	// The labels tell the reader's time from the workers' in a profile:
	// what is left to one goroutine at a time.
	readLabels := pprof.WithLabels(ctx, pprof.Labels("smcdump", "reader"))
	workLabels := pprof.WithLabels(ctx, pprof.Labels("smcdump", "worker"))
	skips := 0 // the reader's: places of damage read past so far
	pass := inorder.Pass[*pbatch]{
		// Their number bounds the frames and output held at once.
		Jobs: jobs, InFlight: parallelBatches * jobs,
		New: func() *pbatch { return &pbatch{} },
		Read: func(b *pbatch) bool {
			pprof.SetGoroutineLabels(readLabels)
			defer pprof.SetGoroutineLabels(workLabels)
			var visit func(*capture.Frame, int)
			if track != nil {
				visit = track.visit(b)
			}
			r.ReadBatch(&b.cb, size, visit)
			if track != nil {
				track.read(b)
			}
			b.skipsBefore = skips
			skips += b.cb.Skips(b.cb.Len())
			if !b.cb.First.IsZero() {
				o.base = b.cb.First // before any worker prints a time
			}
			return b.cb.Err != nil
		},
		Work: func(job int, b *pbatch) {
			workers[job].run(b)
		},
		Write: pl.write,
	}
	pass.Run()
	pl.prog.clear()
	if jp != nil {
		jp.n = pl.selected // end closes the array after them
	}
	o.shown = pl.selected
	return pl.err
}

// pipeline is what ploop's writer keeps from batch to batch.
type pipeline struct {
	o        *Options
	ctx      context.Context
	w        *capture.Writer
	bw       *bufio.Writer
	jp       *jsonPrinter // the JSON array's printer (nil for other outputs)
	err      error        // the run's outcome, once stopped
	selected int
	frames   int
	prog     progress
}

// write writes batch b, the next in capture order, and reports whether
// the run stops there, its outcome then in pl.err.
func (pl *pipeline) write(b *pbatch) (stop bool) {
	o := pl.o
	if pl.ctx.Err() != nil {
		return true
	}
	if err := o.emit(b, pl.w, pl.bw, pl.jp, &pl.selected); err != nil || (o.Count > 0 && pl.selected >= o.Count) {
		pl.err = err
		return true
	}
	for k := pl.frames>>16 + 1; k<<16 <= pl.frames+b.cb.Len(); k++ {
		pl.prog.tick(k << 16)
	}
	pl.frames += b.cb.Len()
	if b.err != nil {
		pl.err = b.err
		return true
	}
	if err := b.cb.Err; err != nil {
		if err == io.EOF {
			o.ended = true
		} else {
			pl.err = err
		}
		return true
	}
	return false
}

// emit writes a batch's selected frames (to -w and the output), the first
// JSON frame without its comma, up to -c's count.
func (o *Options) emit(b *pbatch, w *capture.Writer, bw *bufio.Writer, jp *jsonPrinter, selected *int) error {
	out := b.out.b
	nsel := b.nsel
	switch {
	case o.Count > 0 && *selected+nsel >= o.Count:
		nsel = o.Count - *selected
		out = out[:b.ends[nsel-1]]
		// The run ends at that frame: the damage read past after it,
		// in frames read ahead, is not the run's (Run).
		o.damageCut, o.damageTo = true, b.skipsBefore+b.cb.Skips(b.sel[nsel-1]+1)
	case b.err != nil:
		// The frame the worker failed on may have printed part of
		// its text.
		out = out[:b.end]
	}
	start := 0
	if jp != nil && *selected == 0 && nsel > 0 {
		start = 1 // the comma before the first frame
	}
	if w != nil {
		// Frame by frame: a -w error leaves the frame unprinted, as loop.
		for k, i := range b.sel[:nsel] {
			if err := o.write(w, &b.cb, i); err != nil {
				bw.Write(out[start:max(start, prefixEnd(b.ends, k))])
				*selected += k
				return err
			}
		}
	}
	bw.Write(out[start:])
	*selected += nsel
	return nil
}

// write writes batch b's i-th frame to -w, read again from its chunk.
func (o *Options) write(w *capture.Writer, b *capture.Batch, i int) error {
	f := b.Frame(i)
	if err := w.WriteFrame(&f); err != nil {
		return fmt.Errorf("-w: %w", err)
	}
	return nil
}

// prefixEnd is where the output of the frames before the k-th selected one ends.
func prefixEnd(ends []int, k int) int {
	if k == 0 {
		return 0
	}
	return ends[k-1]
}
