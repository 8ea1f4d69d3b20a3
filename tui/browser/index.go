// Package browser is smcdump -I: an SMC-aware capture browser. A
// background pass builds an index (per frame its record offset, its
// connection and link from the tracker, its findings' severity); the
// packet list is virtual, so only the rows on screen are decoded, from
// their offsets, with their connection's handshake frames replayed first
// so CLC reassembly sees the SYNs it needs.
package browser

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/track"
)

// entry is one frame of the index, as the pass gives it to entries (which
// keeps it in less: see entryChunk).
type entry struct {
	off  int64           // record offset in the file or its decompressed copy; -1 when the frame is kept in raw
	conn int32           // tracker connection ID, 0 none
	link int16           // tracker link ID, 0 none
	sev  expert.Severity // of the frame's worst expert finding, 0 none
}

// maxContext bounds the frames kept per connection for replaying its
// handshake: SYN, SYN-ACK and the CLC segments come first.
const maxContext = 16

// layoutSpan is the record layout of the frames from frame `from` on, up
// to the next span: a classic pcap has one, a pcapng file one per
// section or interface change.
type layoutSpan struct {
	from   int32
	layout *capture.Layout
}

// Index is what the background pass learned about a capture.
type Index struct {
	path string
	// skips: the frames read after damage to the file (capture.SkipError).
	skips map[int32]*capture.SkipError
	live  bool // frames arrive from an interface (kept in memory)
	pipe  bool // the input cannot be read twice (a FIFO, stdin): a spool copies it
	tail  bool // a regular file followed as it grows, until the context ends
	// idleFn, set by the index pass, is what idle does (on the pass's
	// goroutine).
	idleFn func()
	limit  int // -c: index only the first limit frames (0: all)
	lt     layers.LinkType
	// digits is how many decimals of a frame's time the capture resolves
	// (capture.Frame.TimeDigits of its first frame), for the frames read
	// back: frame.time_epoch then shows what the file holds.
	digits uint8
	// shown is how many decimals the Time column prints
	// (capture.Frame.ColumnDigits of the first frame).
	shown uint8
	// spool is the decompressed copy of a gzip file, which records are
	// read back from; nil for a file read in place.
	spool *spool
	// noSpool says why a gzip file has no spool (its frames are then
	// kept in memory).
	noSpool string
	src     io.Closer // the gzip file, closed when the pass ends

	mu   sync.RWMutex
	ents entries
	// rel says which frames are SMC-relevant: the browser's lists of
	// them, and of all frames, are read from the index (frameList).
	rel     relevance
	layouts []layoutSpan
	raw     [][]byte // frames no record can be read back for (live, beyond a full spool)
	cis     []gopacket.CaptureInfo
	ctx     map[int32][]int32 // connection -> its first TCP frames
	// byFact maps a frame the first pass decoded as SMC by fact (its
	// queue pair known, the classifier not taking it) to the frame that
	// taught its queue pair; see qpTeachers.
	byFact map[int32]int32
	base   time.Time
	lastAt time.Time // when the last frame of a live input was indexed
	done   bool
	err    error
	snap   *track.Snapshot
	follow chan struct{} // closed and replaced when frames are appended
	// general: the pass decodes every frame whole (openFileAs).
	general bool
}

var (
	fConnID = lookup("smc.conn.id")
	fLinkID = lookup("smc.link.id")
)

func lookup(name string) decode.FieldID {
	d, ok := decode.LookupField(name)
	if !ok {
		panic("browser: no field " + name)
	}
	return d.ID
}

// Open starts indexing path in the background; the index fills while the
// user looks at the first frames.
func Open(ctx context.Context, path string) (*Index, error) { return OpenLimit(ctx, path, 0) }

// OpenLimit is Open for the first limit frames of the file (smcdump -c);
// 0 is every frame.
func OpenLimit(ctx context.Context, path string, limit int) (*Index, error) {
	return OpenInput(ctx, path, limit, false)
}

// OpenInput is OpenLimit for any input smcdump -r takes: a file, a FIFO,
// or stdin ("-"). A FIFO or stdin is read live: its frames are listed as
// they arrive, and its bytes are copied to a spool file as they are read
// (nothing can be read twice from a pipe), until the writer closes it.
// With tail, a regular file is followed as it grows (as tail -f) until
// the context ends. A live input is opened and sniffed in the background
// (opening a FIFO waits for its writer): its errors end the index pass
// (Progress) instead of being returned.
func OpenInput(ctx context.Context, path string, limit int, tail bool) (*Index, error) {
	return openInput(ctx, path, limit, tail, func() (*spool, error) { return newSpool(spoolDir()) })
}

func openInput(ctx context.Context, path string, limit int, tail bool, newSpool func() (*spool, error)) (*Index, error) {
	pipe := path == "-"
	if !pipe {
		st, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		pipe = !st.Mode().IsRegular()
	}
	if !pipe && !tail {
		return openFile(ctx, path, limit, newSpool)
	}
	x := &Index{path: path, limit: limit, pipe: pipe, tail: !pipe, ctx: map[int32][]int32{}, follow: make(chan struct{})}
	go func() {
		r, err := x.openStream(ctx, newSpool)
		if err != nil {
			x.mu.Lock()
			x.err, x.done = err, true
			x.notify()
			x.mu.Unlock()
			return
		}
		x.build(ctx, r)
	}()
	return x, nil
}

// openStream opens a live input (Index.pipe or Index.tail) for the index
// pass. The magic is read through a buffer the reader goes on from, so
// nothing read from a pipe to tell gzip from pcap is lost.
func (x *Index) openStream(ctx context.Context, newSpool func() (*spool, error)) (*capture.Reader, error) {
	in := os.Stdin
	if x.path != "-" {
		f, err := os.Open(x.path)
		if err != nil {
			return nil, err
		}
		in = f
	}
	// Closing the input wakes a read waiting for the writer when the
	// browser ends before it closes.
	stop := context.AfterFunc(ctx, func() { in.Close() })
	var src io.Reader = in
	if x.tail {
		src = &tailReader{f: in, ctx: ctx, idle: x.idle, poll: tailPoll}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	magic, _ := br.Peek(2)
	gzipped := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	var (
		r       *capture.Reader
		sp      *spool
		noSpool string
		err     error
	)
	switch {
	case gzipped:
		r, sp, noSpool, err = openSpooled(x.path, br, newSpool, true, x.idle)
	case x.tail:
		// The file itself holds every record: read back from it.
		r, err = capture.NewFileReader(x.path, br)
	default:
		s, serr := newSpool()
		if serr != nil {
			noSpool = "cannot copy: " + serr.Error()
			r, err = capture.NewFileReader(x.path, &idleReader{r: br, idle: x.idle})
			break
		}
		r, sp, _, err = spoolReader(x.path, s, br, true, x.idle)
	}
	if err != nil {
		stop()
		in.Close()
		return nil, err
	}
	x.mu.Lock()
	x.lt, x.spool, x.noSpool = r.LinkType(), sp, noSpool
	x.src = in
	if sp != nil {
		x.src = closers{sp.inflate, in}
		context.AfterFunc(ctx, func() { sp.f.Close() }) // not at the pass's end: rows are read back from it
	}
	x.mu.Unlock()
	return r, nil
}

// tailPoll is how often a followed file is looked at for more bytes.
const tailPoll = 100 * time.Millisecond

// tailReader reads a file that another program is still writing (tail
// -f): at its end it waits for more instead of returning io.EOF, until
// ctx ends.
type tailReader struct {
	f    *os.File
	ctx  context.Context
	idle func() // called before each wait: every whole record read is indexed
	poll time.Duration
	pos  int64
}

func (t *tailReader) Read(p []byte) (int, error) {
	for {
		n, err := t.f.Read(p)
		t.pos += int64(n)
		if n > 0 || !errors.Is(err, io.EOF) {
			return n, err
		}
		if st, err := t.f.Stat(); err == nil && st.Size() < t.pos {
			return 0, fmt.Errorf("cut to %d bytes while followed (at offset %d): the writer started over", st.Size(), t.pos)
		}
		if t.idle != nil {
			t.idle()
		}
		select {
		case <-t.ctx.Done():
			return 0, io.EOF
		case <-time.After(t.poll):
		}
	}
}

// idleReader calls idle before a read that may wait (a pipe read with no
// spool, whose bytes are not buffered ahead).
type idleReader struct {
	r    io.Reader
	idle func()
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.idle()
	return r.r.Read(p)
}

// idle is called by a live input's reader, on the index pass's goroutine,
// before it waits for bytes: every frame that arrived is indexed, so the
// list is told, and the tracker's panes catch up (at most every
// idleSnapshot).
func (x *Index) idle() {
	if x.idleFn != nil {
		x.idleFn()
	}
}

// idleSnapshot bounds how often a live input's idle moments take a
// tracker snapshot for the panes.
const idleSnapshot = 250 * time.Millisecond

// openFile indexes a regular file to its end, a gzip one through a spool
// made by newSpool.
func openFile(ctx context.Context, path string, limit int, newSpool func() (*spool, error)) (*Index, error) {
	return openFileAs(ctx, path, limit, newSpool, false)
}

// openFileAs is openFile; general makes the pass decode every frame whole
// (the reference the tests hold the direct path's frames to).
func openFileAs(ctx context.Context, path string, limit int, newSpool func() (*spool, error), general bool) (*Index, error) {
	x := &Index{path: path, limit: limit, ctx: map[int32][]int32{}, follow: make(chan struct{}), general: general}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	magic := make([]byte, 2)
	n, _ := io.ReadFull(f, magic)
	var r *capture.Reader
	if n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// gzip cannot be read at an offset: the pass writes what it
		// inflates to a temporary copy, which rows are read back from.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		r, x.spool, x.noSpool, err = openSpooled(path, f, newSpool, false, nil)
		if err != nil {
			f.Close()
			return nil, err
		}
		x.src = f
		if x.spool != nil {
			x.src = closers{x.spool.inflate, f}
		}
	} else {
		f.Close()
		r, err = capture.Open(path)
	}
	if err != nil {
		return nil, err
	}
	// The ICRC is checked here too (about 50 ns a RoCE frame): the tracker
	// finds bad ICRCs (roce.icrc.bad) for the expert pane only when it is.
	x.lt = r.LinkType()
	go x.build(ctx, r)
	if s := x.spool; s != nil {
		go func() { <-ctx.Done(); s.f.Close() }() // not x: an index dropped before its context ends is freed
	}
	return x, nil
}

// OpenLive indexes frames as they arrive on iface (kept in memory), with
// a capture filter and snap length as smcdump -i takes them, until limit
// frames (0: until the context ends).
func OpenLive(ctx context.Context, iface, bpf string, snaplen, limit int) (*Index, error) {
	r, err := capture.OpenLive(iface, bpf, snaplen)
	if err != nil {
		return nil, err
	}
	return openLive(ctx, iface, r, limit), nil
}

// openLive indexes a reader whose frames arrive over time.
func openLive(ctx context.Context, name string, r *capture.Reader, limit int) *Index {
	x := &Index{path: name, live: true, limit: limit, lt: r.LinkType(), ctx: map[int32][]int32{}, follow: make(chan struct{})}
	go x.build(ctx, r)
	go func() { <-ctx.Done(); r.Close() }()
	return x
}

// build is the background pass: capture, decode, track, one index entry
// per frame.
func (x *Index) build(ctx context.Context, r *capture.Reader) {
	defer r.Close()
	if x.src != nil {
		defer x.src.Close()
	}
	// The pass's goroutine is the tracker's only user (the panes get
	// snapshots): it follows the commonest SMC-R frames from the layers
	// the reader's direct path fills, the rest decoded whole.
	tr := track.New(track.Options{Unshared: true})
	if !x.general {
		r.SetDirectFeed(tr.FeedFast)
	}
	// A file's pass ends: its memory is held to what it keeps
	// (passMemory). An input that grows is indexed for as long as
	// the browser runs.
	endMemory := func() {}
	if !x.grows() {
		endMemory = passMem.start()
		defer endMemory()
	}
	var rec decode.Record
	var qps qpTeachers
	batch := 0
	var told, snapped int // frames the list and the panes' snapshot were last given
	var snapAt time.Time
	x.idleFn = func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		n := x.ents.len()
		if n != snapped && time.Since(snapAt) >= idleSnapshot {
			snapped, snapAt = n, time.Now()
			s := tr.Snapshot()
			x.snap = &s
			told = -1 // the panes too
		}
		if n != told {
			told = n
			x.notify()
		}
	}
	for ctx.Err() == nil {
		f, err := r.Next()
		if err == nil && x.limit > 0 && f.Number > x.limit {
			err = io.EOF
		}
		if err != nil {
			x.mu.Lock()
			if !errors.Is(err, io.EOF) {
				x.err = err
			}
			x.done = true
			if errors.Is(err, io.EOF) {
				end, _, _ := r.Recorded()
				tr.EndCapture(end)
				x.err = r.Damage() // read past: shown as the file's error
			}
			s := tr.Snapshot()
			x.snap = &s
			x.markFindings(&s)
			x.notify()
			x.mu.Unlock()
			endMemory()
			if !x.live {
				// The pass's garbage (decoded frames, the tracker's
				// working state) is gone now; give its pages back, so
				// the browser's resident size is what it keeps, not
				// the high-water mark of the pass.
				debug.FreeOSMemory()
			}
			return
		}
		if !f.Direct() { // a Direct frame was fed by the reader
			tr.Feed(f)
		}
		rec.Reset()
		tr.AppendFields(f, &rec)
		e := entry{off: r.RecordOffset()}
		layout := r.Layout()
		if v, ok := rec.First(fConnID); ok {
			e.conn = int32(v.U)
		}
		if v, ok := rec.First(fLinkID); ok {
			e.link = int16(v.U)
		}
		e.sev, _ = track.FrameFindings(&rec)
		x.mu.Lock()
		if x.ents.len() == 0 {
			x.base, x.digits, x.shown = f.CI.Timestamp, f.TimeDigits(), f.ColumnDigits()
		}
		n := int32(x.ents.len()) + 1
		switch {
		case layout == nil || e.off < 0 || x.rawFrom() != 0 || x.noSpool != "" || (x.spool != nil && !x.spool.holds(r.RecordEnd())):
			// Nothing to read this frame back from: kept whole (and every
			// frame after it: entries.add).
			e.off = -1
			x.raw = append(x.raw, bytes.Clone(f.Data))
			x.cis = append(x.cis, f.CI)
		case len(x.layouts) == 0 || x.layouts[len(x.layouts)-1].layout != layout:
			x.layouts = append(x.layouts, layoutSpan{n, layout})
		}
		x.ents.add(e, r.RecordEnd())
		if se, ok := f.RecordErr.(*capture.SkipError); ok {
			// Damage read past before it: a fact of the sequential
			// read, which reading the record back does not make.
			if x.skips == nil {
				x.skips = map[int32]*capture.SkipError{}
			}
			x.skips[n] = se
		}
		if x.grows() {
			x.lastAt = time.Now()
		}
		x.rel.add(int(n)-1, f.SMCRelevant())
		if t := qps.learn(f, n); t != 0 {
			if x.byFact == nil {
				x.byFact = map[int32]int32{}
			}
			x.byFact[n] = t
		}
		if e.conn != 0 && f.TCP != nil {
			if c := x.ctx[e.conn]; len(c) < maxContext {
				x.ctx[e.conn] = append(c, n)
			}
		}
		batch++
		relimit := false
		if batch == 4096 {
			batch = 0
			relimit = !x.grows()
			x.notify()
			// A snapshot copies the tracker's state (every kept
			// connection and link, their histories): every 4096
			// frames it was a third of the pass. The panes are
			// refreshed as often as a live input's idle moments do.
			if now := time.Now(); now.Sub(snapAt) >= idleSnapshot {
				snapAt = now
				s := tr.Snapshot()
				x.snap = &s
			}
		}
		x.mu.Unlock()
		if relimit {
			passMem.update()
		}
	}
}

// markFindings gives the frames the snapshot's findings name (the first
// and last of each) their severity: findings decided after their frames
// went by (a request that was never answered) carry none of their own.
// Callers hold mu.
func (x *Index) markFindings(s *track.Snapshot) {
	for _, f := range s.Findings() {
		for _, n := range [2]int{f.First, f.Last} {
			if n >= 1 && n <= x.ents.len() {
				x.ents.setSeverity(n-1, max(x.ents.severity(n-1), f.Severity()))
			}
		}
	}
}

// Severity is the severity of frame n's worst expert finding, 0 for none.
func (x *Index) Severity(n int) expert.Severity {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n < 1 || n > x.ents.len() {
		return expert.SeverityNone
	}
	return x.ents.severity(n - 1)
}

// notify wakes whoever waits for new frames (the live list). Callers hold mu.
func (x *Index) notify() {
	close(x.follow)
	x.follow = make(chan struct{})
}

// grows reports that frames arrive over time (an interface, a pipe, a
// followed file): the list follows its tail.
func (x *Index) grows() bool { return x.live || x.pipe || x.tail }

// LastFrame is when the last frame of an input that grows was indexed,
// zero before the first.
func (x *Index) LastFrame() time.Time {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.lastAt
}

// LimitReached says the pass stopped at the -c limit.
func (x *Index) LimitReached() bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.limit > 0 && x.ents.len() >= x.limit
}

// Limit is the -c limit on the frames indexed, 0 for none.
func (x *Index) Limit() int { return x.limit }

// Progress returns the frames indexed so far, whether the pass is done and
// the error that ended it.
func (x *Index) Progress() (n int, done bool, err error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.ents.len(), x.done, x.err
}

// closers closes each in turn.
type closers []io.Closer

func (cs closers) Close() error {
	var err error
	for _, c := range cs {
		if e := c.Close(); err == nil {
			err = e
		}
	}
	return err
}

// Kept says where the frames are read back from when not from the file
// itself: spooled is the size of the decompressed copy of a gzip file in
// dir, why says why it stopped or could not be made, inMemory is the
// frames kept whole, from frame rawFrom on.
func (x *Index) Kept() (dir string, spooled int64, why string, inMemory int, rawFrom int32) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	switch {
	case x.spool != nil:
		dir, spooled, why = x.spool.dir, x.spool.size(), x.spool.stopped()
	case x.noSpool != "":
		why = x.noSpool
	}
	return dir, spooled, why, len(x.raw), x.rawFrom()
}

// rawFrom is the first frame kept in raw, 0 none. Callers hold mu.
func (x *Index) rawFrom() int32 { return int32(x.ents.raw) }

// Changed returns a channel closed when frames are appended.
func (x *Index) Changed() <-chan struct{} {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.follow
}

// Snapshot is the tracker's state at the end of the pass (or of its last
// batch while it runs).
func (x *Index) Snapshot() *track.Snapshot {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.snap
}

// Conn returns the connection of frame n (1-based), 0 for none.
func (x *Index) Conn(n int) (conn, link int) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if n < 1 || n > x.ents.len() {
		return 0, 0
	}
	p := x.ents.pair(n - 1)
	return int(p.conn), int(p.link)
}

// Relevant lists the SMC-relevant frames (smcdump's default selection)
// indexed so far, in a new slice (the browser reads them from the index).
func (x *Index) Relevant() []int32 { return x.relevantList().slice() }

// All lists every frame indexed so far, in a new slice.
func (x *Index) All() []int32 { return x.allList().slice() }

// Follow lists the frames of connection conn: its TCP handshake and CLC,
// its CDCs and RDMA WRITEs, and the LLC messages of its links (the frames
// the tracker attributed to the connection or, for LLC, to one of its
// links).
func (x *Index) Follow(conn int) []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	// Every pair in the blocks' dictionaries is some frame's.
	links := map[int16]bool{}
	for _, p := range x.ents.pairs {
		if int(p.conn) == conn && p.link != 0 {
			links[p.link] = true
		}
	}
	var out []int32
	x.ents.matching(func(p connLink) bool {
		return int(p.conn) == conn || (p.conn == 0 && p.link != 0 && links[p.link])
	}, func(i int) { out = append(out, int32(i+1)) })
	return out
}

// LinkGroup lists the frames of a link group: those of its links and of
// its connections.
func (x *Index) LinkGroup(links, conns []int) []int32 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	ls, cs := map[int16]bool{}, map[int32]bool{}
	for _, l := range links {
		ls[int16(l)] = true
	}
	for _, c := range conns {
		cs[int32(c)] = true
	}
	var out []int32
	x.ents.matching(func(p connLink) bool {
		return (p.link != 0 && ls[p.link]) || (p.conn != 0 && cs[p.conn])
	}, func(i int) { out = append(out, int32(i+1)) })
	return out
}

// Filter runs a display filter over the whole capture (a second pass,
// decoding only what the filter needs) and returns the matching frames.
func (x *Index) Filter(ctx context.Context, flt *filter.Filter) ([]int32, error) {
	ids := flt.Fields()
	tracked := false
	for _, id := range ids {
		tracked = tracked || !capture.FrameField(id)
	}
	// A whole file is read ahead in batches and matched on every CPU; an
	// input that grows is read no further than its frames indexed (upTo),
	// one at a time.
	batches := !tracked && filterJobs() > 1 && !x.grows() && !x.general
	r, upTo, err := x.pass()
	if errors.Is(err, errNoFrames) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var tr *track.Tracker
	if tracked {
		frameIDs := capture.FrameFields(ids)
		ids = append(slices.Clip(ids), track.FieldDemand()...)
		r.SetFieldDemand(ids)
		// The tracker is this pass's alone: it follows the commonest
		// SMC-R frames by its fast path, from the layers the direct path
		// fills, and adds its fields to a record of the filter's frame
		// fields alone (as smcdump -Y does).
		tr = track.New(track.Options{Unshared: true})
		if plan, ok := capture.CompileDirect(frameIDs); ok && !x.general {
			r.SetDirect(plan)
			r.SetDirectRecords(true)
			r.SetDirectFeed(tr.FeedFast)
		}
	} else {
		r.SetFieldDemand(ids)
		r.SetDepth(capture.DemandDepth(ids)) // the tracker reads every layer
		if plan, ok := capture.CompileDirect(ids); ok && !x.general {
			// The commonest SMC-R frames are matched on the values read
			// at their fixed offsets: no layer decoded, no record but
			// the filter's fields.
			r.SetDirect(plan)
			r.SetDirectRecords(true)
		}
		if batches {
			return filterBatches(ctx, r, flt, upTo, filterJobs())
		}
	}
	var out []int32
	for ctx.Err() == nil {
		f, err := r.Next()
		if err == nil && upTo > 0 && f.Number > upTo {
			err = io.EOF
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		if tr != nil {
			if !f.Direct() { // a Direct frame was fed by the reader (SetDirectFeed)
				tr.Feed(f)
			}
			tr.AppendFields(f, f.Fields())
		}
		rec := f.Fields()
		rec.Frame = f.Data // "frame contains"
		if flt.Match(rec) {
			out = append(out, int32(f.Number))
		}
		if f.Number == upTo {
			return out, nil // not a read into a live input's next, unfinished record
		}
	}
	return out, ctx.Err()
}

// pass opens the capture for a second pass over every frame (a filter, a
// sort by a decoded column, a stream): the file again, its decompressed
// copy, or the frames in memory. upTo is the last frame the pass may read
// (0: to the end): a live input's are the frames indexed when it began,
// the only ones certain to be whole in the file or its copy. A file is
// read by read(2): a pass in batches (filterBatches) reads it into
// chunks its batches hold (capture.Reader.ReadBatch), not through a
// mapping, whose page faults cost more on a virtual machine.
func (x *Index) pass() (r *capture.Reader, upTo int, err error) {
	x.mu.RLock()
	rawFrom, done, n := x.rawFrom(), x.done, x.ents.len()
	x.mu.RUnlock()
	upTo = x.limit
	if x.grows() {
		if n == 0 {
			return nil, 0, errNoFrames
		}
		upTo = n
	}
	switch {
	case rawFrom == 1: // every frame in memory (live)
		r, err = capture.NewReader(x.path, x.rawSource(), x.lt)
		return r, upTo, err
	case x.spool != nil && rawFrom == 0 && (done || x.grows()):
		r, err = capture.NewFileReader(x.path, x.spool.reader())
		return r, upTo, err
	case x.pipe:
		_, _, why, _, _ := x.Kept()
		return nil, 0, fmt.Errorf("%s cannot be read again: its copy stopped at frame %d (%s)", x.Name(), rawFrom, why)
	}
	r, err = capture.Open(x.path)
	return r, upTo, err
}

// errNoFrames: a live input has no frame yet to pass over.
var errNoFrames = errors.New("no frame has arrived yet")

// Name is the input's name for the status line and messages: the file's
// base name, stdin for "-".
func (x *Index) Name() string {
	if x.path == "-" {
		return "stdin"
	}
	return filepath.Base(x.path)
}

// rawSource replays the frames kept in memory (all of them: live).
func (x *Index) rawSource() *frameSource {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &frameSource{digits: x.digits}
	for i := range x.raw {
		s.frames = append(s.frames, rawFrame{x.cis[i], x.raw[i], int32(i + 1)})
	}
	return s
}

type rawFrame struct {
	ci   gopacket.CaptureInfo
	data []byte
	n    int32 // its number in the capture (0: its place in the replay)
}

type frameSource struct {
	frames []rawFrame
	i      int
	digits uint8
}

// Resolution tells capture.NewReader the capture's time resolution, which
// the frames alone do not carry.
func (s *frameSource) Resolution() gopacket.TimestampResolution {
	return gopacket.TimestampResolution{Base: 10, Exponent: -int(s.digits)}
}

func (s *frameSource) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if s.i == len(s.frames) {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	f := s.frames[s.i]
	s.i++
	return f.data, f.ci, nil
}

// FrameNumber implements capture.NumberedSource.
func (s *frameSource) FrameNumber() int {
	if n := s.frames[s.i-1].n; n != 0 {
		return int(n)
	}
	return s.i
}

// recordReader reads frames back from their records in the file (or its
// decompressed copy), or from memory, without decoding them.
type recordReader struct {
	x    *Index
	f    *os.File // the file, when read in place
	recs *capture.Records
	span int // the layout span last used: reads mostly go forward
	ci   gopacket.CaptureInfo
	// last is the frame last read from a record (recs.End is where it
	// ends), 0 none: reads mostly go forward, and walking the records
	// from a block's first (entries.record) can start there.
	last int32
}

func (x *Index) newRecordReader() (*recordReader, error) {
	rr := &recordReader{x: x}
	switch {
	case x.spool != nil:
		name := x.path + " (decompressed)"
		switch {
		case x.path == "-":
			name = "stdin (its copy)"
		case x.pipe:
			name = x.path + " (its copy)"
		}
		rr.recs = capture.NewRecords(name, x.spool.reader())
	case !x.live && !x.pipe:
		f, err := os.Open(x.path)
		if err != nil {
			return nil, err
		}
		rr.f, rr.recs = f, capture.NewRecords(x.path, f)
	}
	return rr, nil
}

func (rr *recordReader) Close() error {
	if rr.f != nil {
		return rr.f.Close()
	}
	return nil
}

// read returns frame n (1-based): its capture info and bytes, valid until
// the next read.
func (rr *recordReader) read(n int32) (gopacket.CaptureInfo, []byte, error) {
	off, layout, err := rr.offset(n)
	if off < 0 && err == nil {
		x := rr.x
		x.mu.RLock()
		defer x.mu.RUnlock()
		from := x.rawFrom()
		return x.cis[n-from], x.raw[n-from], nil
	}
	rr.last = 0
	var data []byte
	if err == nil {
		data, err = rr.recs.Read(off, layout, &rr.ci)
	}
	if err != nil {
		return rr.ci, nil, fmt.Errorf("frame %d: %w", n, err)
	}
	rr.last = n
	return rr.ci, data, nil
}

// offset returns the offset of frame n's record and its layout, -1 for a
// frame kept in memory. The table keeps the offset of a frame before it
// (entries.record): the record headers are read on from there, or from
// the end of the frame last read when that is on the way.
func (rr *recordReader) offset(n int32) (int64, *capture.Layout, error) {
	x := rr.x
	x.mu.RLock()
	off, skip := x.ents.record(int(n) - 1)
	if off < 0 {
		x.mu.RUnlock()
		return -1, nil, nil
	}
	sp := x.layouts
	if rr.span >= len(sp) || sp[rr.span].from > n || (rr.span+1 < len(sp) && sp[rr.span+1].from <= n) {
		rr.span, _ = slices.BinarySearchFunc(sp, n, func(s layoutSpan, n int32) int { return int(s.from - n) })
		if rr.span == len(sp) || sp[rr.span].from > n {
			rr.span-- // the span that starts before n
		}
	}
	layout := sp[rr.span].layout
	x.mu.RUnlock()
	if rr.last != 0 && rr.last < n && rr.last >= n-int32(skip) {
		off, skip = rr.recs.End(), int(n-rr.last-1)
	}
	off, err := rr.recs.Skip(off, layout, skip)
	return off, layout, err
}

// Decode decodes frames ns (1-based) for display, replaying first the
// handshake frames of their connections, and calls fn for each of them in
// frame order. The frame is valid only during the call (the reader reuses
// its layers).
func (x *Index) Decode(ns []int32, fn func(n int32, f *capture.Frame)) error {
	want := map[int32]bool{}
	set := map[int32]bool{}
	x.mu.RLock()
	with := func(n, before int32) {
		set[n] = true
		if c := x.ents.conn(int(n) - 1); c != 0 {
			for _, k := range x.ctx[c] {
				if k < before {
					set[k] = true
				}
			}
		}
	}
	for _, n := range ns {
		if n < 1 || int(n) > x.ents.len() {
			continue
		}
		want[n] = true
		with(n, n)
		// The frames that taught the reader the queue pair of a frame
		// decoded by fact, with their own handshakes (a teacher may be
		// a CLC Accept).
		for t, k := x.byFact[n], 0; t != 0 && k < 8; t, k = x.byFact[t], k+1 {
			with(t, t)
		}
	}
	x.mu.RUnlock()
	order := make([]int32, 0, len(set))
	for n := range set {
		order = append(order, n)
	}
	slices.Sort(order)
	rr, err := x.newRecordReader()
	if err != nil {
		return err
	}
	defer rr.Close()
	x.mu.RLock()
	src := &frameSource{digits: x.digits}
	x.mu.RUnlock()
	for _, n := range order {
		ci, data, err := rr.read(n)
		if err != nil {
			return err
		}
		src.frames = append(src.frames, rawFrame{ci, bytes.Clone(data), n})
	}
	r, err := capture.NewReader(x.path, src, x.lt)
	if err != nil {
		return err
	}
	defer r.Close()
	for i := 0; ; i++ {
		fr, err := r.Next()
		if err != nil {
			return nil
		}
		if n := order[i]; want[n] {
			x.mu.RLock()
			if se := x.skips[n]; se != nil {
				fr.RecordErr = se
			}
			x.mu.RUnlock()
			fn(n, fr)
		}
	}
}
