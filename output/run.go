package output

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/track"
)

// Format is the -T output format.
type Format string

// Output formats of -T; FormatText is the default line per frame.
const (
	FormatText   Format = "text"
	FormatJSON   Format = "json"
	FormatJSONL  Format = "jsonl"
	FormatFields Format = "fields"
)

// Tracker is the hook for the connection tracker (package track, wired by
// cmd/smcdump): it sees every frame read, before selection, in capture
// order; adds its own fields (smc.conn.*, ...) to a frame's record for -Y,
// -e and -V; and writes the -z views at the end.
type Tracker interface {
	Feed(f *capture.Frame)
	// AppendFields adds the tracker's fields for f, the frame just fed.
	AppendFields(f *capture.Frame, r *decode.Record)
	// WriteViews writes the -z views; format is "text" or "json".
	WriteViews(w io.Writer, specs []string, format string) error
}

// Options is one smcdump run, as given on the command line.
type Options struct {
	Read          string           // -r FILE ("-" is stdin)
	Iface         string           // -i IFACE (live)
	Write         string           // -w FILE (pcapng)
	Count         int              // -c N: stop after N selected frames (0 = all)
	All           bool             // -a: every frame, not only SMC-relevant ones (with -Y, a frame that carries a finding is relevant)
	Quiet         bool             // -q: print no frames (only -z views; -w still writes)
	Verbose       bool             // -V: field tree
	Hex           bool             // -x: hex dump
	Format        Format           // -T
	Fields        []string         // -e (with -T fields)
	Columns       []columns.Column // -o column.format:SPEC: the text lines' columns, as tshark's gui.column.format (nil: the default line)
	Separator     string           // -E separator= (default tab)
	Header        bool             // -E header=y
	Aggregator    string           // -E aggregator= joins several values of a field (default ",")
	Quote         byte             // -E quote=d|s: 0, '"' or '\''
	Occurrence    byte             // -E occurrence=f|l|a: first, last or all values (default all)
	Glossary      string           // -G: "fields" lists the field catalogue
	DisplayFilter string           // -Y
	CaptureFilter string           // -f (live only)
	Snaplen       int              // live snap length (0 = whole frames)
	Views         []string         // -z specs
	// Jobs is -j: the goroutines that decode a file (0: one per CPU the
	// process may run on; 1: the frames are read, decoded and printed on
	// the calling goroutine).
	Jobs int
	// shown counts the frames the run selected (printed or written).
	shown int
	// NewTracker builds the tracker for the -z specs (possibly none); nil
	// means neither -z nor tracker fields are available. Run creates it
	// only when views or tracker fields are asked for.
	NewTracker func(views []string) (Tracker, error)
	// Progress on Stderr for long reads (set when Stderr is a terminal).
	Progress bool
	// Program names the command in what Run itself writes to Stderr
	// (progress, dropped frames); its errors are returned unprefixed, for
	// the caller to print as "PROGRAM: error".
	Program string

	Stdout, Stderr io.Writer

	base time.Time // timestamp of the first frame read: text times are relative to it
	// noDirect keeps -T fields off the reader's direct path (tests compare
	// the two).
	noDirect bool
	// wholeSelected: the frames the direct path took are matched on its
	// values, and those selected decoded whole before they are printed
	// (Run: -Y with a printer that reads every layer).
	wholeSelected bool
	// eagerLate adds the tracker's fields to every frame right after it
	// is fed, as before lateFields (tests compare the two).
	eagerLate bool
	// batchFrames is the frames of a batch with Jobs > 1 (0: the
	// default; tests make it small), chunkBytes the chunks a pcap file
	// is read into for them (capture.Reader.SetChunkSize).
	batchFrames, chunkBytes int
	// ended: the loop read the capture to its end (or the live capture
	// was stopped), not only its first -c frames.
	ended bool
	// damageCut: -j's run ended at -c's last frame, after damageTo places
	// of damage read past (later ones were read ahead of it).
	damageCut bool
	damageTo  int
}

// UsageError is a command-line mistake (exit status 2).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ExitCode maps Run's result to smcdump's exit status: 0 success, 2 usage
// error or a capture file damaged part-way (truncated, corrupt record: the
// output is incomplete), 1 any other failure (unreadable, empty or
// non-capture file, live capture refused). Decode errors of single frames
// are shown in the output and do not fail the run.
func ExitCode(err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue), errors.Is(err, capture.ErrTruncatedFile), errors.Is(err, capture.ErrCorruptRecord),
		errors.Is(err, capture.ErrChanged):
		return 2
	}
	return 1
}

// ParseSeparatorOption applies one -E option, as tshark: separator=,
// header=, aggregator=, quote=, occurrence=. "/t" and "/s" stand for tab
// and space.
func (o *Options) ParseSeparatorOption(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return usagef("-E %q: want name=value", s)
	}
	switch k {
	case "separator":
		o.Separator = unescapeBlank(v)
	case "header":
		switch v {
		case "y", "yes", "1":
			o.Header = true
		case "n", "no", "0":
			o.Header = false
		default:
			return usagef("-E header=%q: want y or n", v)
		}
	case "aggregator":
		o.Aggregator = unescapeBlank(v)
	case "quote":
		switch v {
		case "d":
			o.Quote = '"'
		case "s":
			o.Quote = '\''
		case "n":
			o.Quote = 0
		default:
			return usagef("-E quote=%q: want d, s or n", v)
		}
	case "occurrence":
		switch v {
		case "f", "l", "a":
			o.Occurrence = v[0]
		default:
			return usagef("-E occurrence=%q: want f, l or a", v)
		}
	default:
		return usagef("-E %q: unknown option (separator=, header=, aggregator=, quote=, occurrence=)", k)
	}
	return nil
}

// unescapeBlank reads the -E spellings of tab and space.
func unescapeBlank(v string) string {
	switch v {
	case `/t`, `\t`:
		return "\t"
	case `/s`:
		return " "
	}
	return v
}

// printer writes one selected frame in the chosen format.
type printer interface {
	begin() error
	frame(f *capture.Frame) error
	end() error
}

// Run executes the options until the capture ends, Count frames were
// selected, or ctx is cancelled; output written so far is always
// completed (JSON arrays are closed).
func Run(ctx context.Context, o Options) error {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Glossary != "" {
		if o.Glossary != "fields" {
			return usagef("-G %q: only -G fields is supported", o.Glossary)
		}
		bw := bufio.NewWriter(o.Stdout)
		writeGlossary(bw)
		return bw.Flush()
	}
	if err := o.check(); err != nil {
		return err
	}
	var flt *filter.Filter
	if o.DisplayFilter != "" {
		var err error
		if flt, err = filter.Compile(o.DisplayFilter); err != nil {
			return &UsageError{Msg: "-Y: " + err.Error()}
		}
	}
	demand, tracked, printTracked := o.demand(flt)
	var tr Tracker
	if len(o.Views) > 0 || tracked {
		if o.NewTracker == nil {
			return usagef("-z and tracker fields are not available in this build")
		}
		var err error
		if tr, err = o.NewTracker(o.Views); err != nil {
			return &UsageError{Msg: "-z: " + err.Error()}
		}
	}

	// idle: no frame is printed, filtered or written (-q alone), and the
	// goroutines would have nothing to do.
	idle := o.Quiet && flt == nil && o.Write == ""
	r, err := o.open(ctx)
	if err != nil && ctx.Err() != nil && o.Iface == "" {
		// Stopped waiting for a FIFO's writer or a pipe's first bytes:
		// nothing was read, which prints as a capture of no frames
		// does (JSON's empty array, the views' empty tables), so that
		// what reads the output finds it whole.
		r, err = capture.NoFrames(o.Read), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // a live capture stopped before it began
		}
		return err
	}
	defer r.Close()
	r.SetChunkSize(o.chunkBytes)
	stop := context.AfterFunc(ctx, func() {
		if o.Iface != "" {
			r.Close() // unblocks a live read
		}
	})
	defer stop()

	printed := demand // without what the tracker reads besides
	if d, ok := tr.(interface{ FieldDemand() []decode.FieldID }); ok && demand != nil {
		demand = append(demand, d.FieldDemand()...)
	}
	r.SetFieldDemand(demand)
	if tr == nil { // the tracker reads every layer of every frame
		r.SetDepth(capture.DemandDepth(demand))
	}

	var w *capture.Writer
	if o.Write != "" {
		if w, err = capture.CreateFile(o.Write, r.LinkType()); err != nil {
			return fmt.Errorf("-w: %w", err)
		}
	}
	bw := bufio.NewWriterSize(o.Stdout, 1<<16)
	if r.Waits() {
		// A pipe or FIFO: what was read is shown before the read waits
		// on the writer (tcpdump -w - | smcdump -r -), not when 64 KiB of
		// output has gathered. An error writing is Flush's again at the end.
		r.OnWait(func() { _ = bw.Flush() })
	}
	p, err := o.printer(bw)
	if err != nil {
		return err
	}
	// A tracker whose fields are not printed follows the frames the
	// direct path takes by its fast path (FeedFast), from their headers.
	// Without a filter or -w, nothing else reads more of them than the
	// printer.
	fast, _ := feedTarget(tr).(fastFeeder)
	headersDo := flt == nil && w == nil && !o.noDirect && (tr == nil || fast != nil && !tracked)
	if fp, ok := p.(*fieldsPrinter); ok && headersDo {
		// Nothing but the columns is read of a frame: the reader may take
		// the commonest SMC-R frames by its fixed-offset path.
		// directRun writes lines straight into the output buffer: a line
		// that cannot fit there (a long -E separator) goes the general way.
		if plan, ok := capture.CompileDirect(printed); ok && 4*plan.LineRoom(fp.sep) <= bw.Size() {
			fp.direct = plan
			r.SetDirect(plan)
		}
	}
	// The default text line reads of the commonest SMC-R frames only the
	// layers the direct path fills (SetDirectFeed): no Ethernet or UDP
	// layer decoded, no record built. A tracker follows them by its fast
	// path; without one they are taken as they are.
	var headers func(*capture.Frame) bool
	tp, text := p.(*textPrinter)
	if headersDo && (text && tp.headersOnly() || p == nil && fast != nil) { // -q with views: the tracker alone reads them
		headers = takeFrame
	}
	// A display filter that reads no field the direct path cannot read
	// at its fixed offset is matched on those values for the commonest
	// SMC-R frames (the browser's whole-file filter does the same): their
	// record holds the filter's fields (and -T fields' columns) alone, a
	// text line is printed from the layers the direct path fills, and -w
	// writes a frame's bytes as read. The tracker, which followed such a
	// frame by its fast path, adds its fields to that record as to any
	// (lateFields).
	// A printer that reads more than the path fills (-V, -x, JSON) has the
	// frames the filter selected decoded whole (wholeSelected).
	_, fields := p.(*fieldsPrinter)
	lines := text && tp.headersOnly() && !printTracked
	if flt != nil && !o.noDirect && (tr == nil || fast != nil) && (p != nil || w != nil) {
		// A text line reads no field (its ICRC flag is the frame's ICRC
		// status, which the direct path checks): the filter's alone.
		ids := printed
		if !fields {
			ids = flt.Fields()
		}
		if plan, ok := capture.CompileDirect(capture.FrameFields(ids)); ok {
			r.SetDirect(plan)
			r.SetDirectRecords(true)
			if !fields && p != nil {
				headers = takeFrame
				o.wholeSelected = !lines
				// Only the frames printed show the ICRC's verdict: those
				// the filter leaves out are not checked (a tracker
				// checks every frame's).
				r.SetLazyICRC(tr == nil)
			}
		}
	}
	var late *lateFields
	if tr != nil && tracked {
		late = &lateFields{tr: tr, print: printTracked}
	}
	var runErr error
	if jobs := o.parallel(tr, idle, r.Waits()); jobs > 1 {
		if fast != nil {
			// The reader feeds the tracker; the frames it follows
			// from their headers cost it no whole decode.
			r.SetDirectFeed(fast.FeedFast)
		}
		runErr = o.ploop(ctx, r, flt, tr, late, w, p, bw, jobs, headers)
	} else {
		switch {
		case (r.Direct() || headers != nil) && fast != nil:
			r.SetDirectFeed(fast.FeedFast)
		case headers != nil:
			r.SetDirectFeed(headers)
		}
		runErr = o.loop(ctx, r, flt, feedTarget(tr), late, w, p)
	}
	if n, ok := r.Dropped(); ok && n > 0 {
		// As tshark does: a live capture that lost frames says so, since
		// the tracker's counts and -w's file are then incomplete.
		fmt.Fprintf(o.Stderr, "%s%s: %d frames dropped by the kernel\n", o.prefix(), r.Name(), n)
	}
	if p != nil {
		if err := p.end(); err != nil && runErr == nil {
			runErr = err
		}
	}
	end, dropped, recorded := r.Recorded()
	if recorded && dropped > 0 && o.ended {
		// The file says the capture point lost packets: what they held
		// is in no finding.
		fmt.Fprintf(o.Stderr, "%s%s: the capture recorded %d packets dropped by the interface or the OS (pcapng statistics)\n", o.prefix(), r.Name(), dropped)
	}
	if e, ok := tr.(interface{ EndCapture(time.Time) }); ok && o.ended {
		// The whole capture was read (or the live capture stopped): what
		// was pending at its end is a finding of its own, decided at the
		// end the file records where it does. Not after -c.
		e.EndCapture(end)
	}
	if tr != nil && len(o.Views) > 0 {
		if err := o.writeViews(bw, tr, p != nil); err != nil && runErr == nil {
			runErr = err
		}
	}
	if err := bw.Flush(); err != nil && runErr == nil {
		runErr = err
	}
	if w != nil {
		if err := w.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("-w: %w", err)
		}
	}
	if runErr == nil && o.ended && o.shown == 0 && p != nil && flt == nil && !o.All && r.Frames() > 0 && o.Iface == "" {
		// A capture none of whose frames is SMC-relevant prints nothing:
		// a user reading the wrong file, or one whose link type or
		// framing is not what its frames hold, is told why.
		fmt.Fprintf(o.Stderr, "%s%s: none of its %d frames is SMC (a SYN with the SMC option, CLC, RoCE); -a shows every frame\n", o.prefix(), r.Name(), r.Frames())
	}
	if runErr == nil {
		// Read to its end past damage: the file's error all the same,
		// the frames in the damaged bytes being missing from the output.
		if o.damageCut {
			runErr = r.DamageOf(o.damageTo)
		} else {
			runErr = r.Damage()
		}
	}
	return runErr
}

// prefix is "PROGRAM: " for Run's own lines on Stderr, or "".
func (o *Options) prefix() string {
	if o.Program == "" {
		return ""
	}
	return o.Program + ": "
}

func (o *Options) check() error {
	switch {
	case o.Read == "" && o.Iface == "":
		return usagef("nothing to read: give -r FILE (- for stdin) or -i IFACE")
	case o.Read != "" && o.Iface != "":
		return usagef("-r and -i exclude each other")
	case o.CaptureFilter != "" && o.Iface == "":
		return usagef("-f is a capture filter for -i; use -Y to filter a file")
	case o.Count < 0:
		return usagef("-c %d: want a positive count", o.Count)
	case o.Jobs < 0:
		return usagef("-j %d: want a number of goroutines (0: one per CPU)", o.Jobs)
	case o.Jobs > maxJobs:
		return usagef("-j %d: at most %d goroutines", o.Jobs, maxJobs)
	}
	if o.Format == FormatJSON || o.Format == FormatJSONL {
		for _, v := range o.Views {
			if name, _, err := track.ParseView(v); err == nil && name == track.ViewFollow {
				// Its bytes are written as they are followed, in a text
				// layout; yaml is its structured one.
				return usagef("-z %s: no JSON form; use smc,follow,CONN,yaml without -T json", v)
			}
		}
	}
	if len(o.Columns) > 0 && o.Format != "" && o.Format != FormatText {
		return usagef("-o column.format: the text lines' columns; -T %s takes none (-T fields takes -e)", o.Format)
	}
	switch o.Format {
	case "", FormatText, FormatJSON, FormatJSONL:
		if len(o.Fields) > 0 {
			return usagef("-e needs -T fields")
		}
	case FormatFields:
		if len(o.Fields) == 0 {
			return usagef("-T fields needs at least one -e FIELD")
		}
		for _, name := range o.Fields {
			if _, ok := decode.LookupField(name); !ok {
				return usagef("-e %q: unknown field (-G fields lists them)", name)
			}
		}
	default:
		return usagef("-T %q: want text, json, jsonl or fields", o.Format)
	}
	return nil
}

// open opens the capture: the interface, or the file (a pipe's or FIFO's
// read waiting for its writer ends with ctx). A file is read by read(2),
// never through a mapping: into a buffer it reuses by one goroutine, into
// chunks its batches hold by a parallel run (capture.Reader.ReadBatch).
// On a virtual machine whose page faults trap to the hypervisor, a 200 MB
// file's first touch of every mapped page cost more than the whole of
// -T fields' other work.
func (o *Options) open(ctx context.Context) (*capture.Reader, error) {
	if o.Iface != "" {
		return capture.OpenLive(o.Iface, o.CaptureFilter, o.Snaplen)
	}
	return capture.OpenContext(ctx, o.Read)
}

// printer picks the output format. With -w and no explicit -T/-V/-x the
// frames are only saved, as with tshark -w.
func (o *Options) printer(bw *bufio.Writer) (printer, error) {
	if o.Quiet { // -q: no frames in any format, only the -z views
		return nil, nil
	}
	switch o.Format {
	case FormatJSON:
		// With -z the frames and the views form one document:
		// {"frames": [...], "views": {...}}.
		return newJSONPrinter(bw, true, len(o.Views) > 0, &o.base), nil
	case FormatJSONL:
		return newJSONPrinter(bw, false, false, &o.base), nil
	case FormatFields:
		fp := &fieldsPrinter{w: bw, sep: o.Separator, header: o.Header, agg: o.Aggregator, quote: o.Quote, occurrence: o.Occurrence}
		if fp.sep == "" {
			fp.sep = "\t"
		}
		for _, name := range o.Fields {
			d, _ := decode.LookupField(name)
			fp.defs = append(fp.defs, d)
			fp.names = append(fp.names, name)
		}
		fp.index()
		return fp, nil
	}
	if o.Write != "" && o.Format == "" && !o.Verbose && !o.Hex {
		return nil, nil
	}
	return &textPrinter{w: bw, verbose: o.Verbose, hex: o.Hex, base: &o.base, cols: o.Columns}, nil
}

// demand says which fields the output reads: nil (all) for the formats
// that print whole records, else the -e columns and the -Y fields. tracked
// is set when some of them are the tracker's, or a full record is printed
// and a tracker is available; printTracked when the printer itself reads
// them (the filter asks for them on its own, filter.MatchLate).
func (o *Options) demand(flt *filter.Filter) (ids []decode.FieldID, tracked, printTracked bool) {
	if o.Verbose || o.Format == FormatJSON || o.Format == FormatJSONL {
		return nil, o.NewTracker != nil, o.NewTracker != nil
	}
	ids = []decode.FieldID{}
	if o.Format == FormatFields {
		for _, name := range o.Fields {
			d, _ := decode.LookupField(name)
			ids = append(ids, d.ID)
			if !capture.FrameField(d.ID) {
				printTracked = true
			}
		}
	} else if !o.Quiet {
		ids = append(ids, decode.FieldICRCOK) // text lines flag a bad ICRC
		for _, c := range o.Columns {
			if c.Kind == columns.Field {
				ids = append(ids, c.Field.ID)
				if !capture.FrameField(c.Field.ID) {
					printTracked = true
				}
			}
		}
	}
	if flt != nil {
		ids = append(ids, flt.Fields()...)
	}
	expert := false
	for _, id := range ids {
		if !capture.FrameField(id) {
			tracked = true
		}
		expert = expert || decode.Def(id).Owner == decode.OwnerTrackExpert
	}
	if expert {
		// roce.icrc.bad is one of the findings: the ICRC must be checked.
		ids = append(ids, decode.FieldICRCOK)
	}
	return ids, tracked, printTracked
}

// lateFields adds the tracker's fields to the current frame's record when
// they are first read, by the filter or the printer, instead of to every
// frame's: computing them costs as much as following the frame, and a
// filter such as "smc.cdc.seq == 5 and smc.conn.id" reads them on a few
// frames only. They describe the state right after the frame was fed, and
// the frame is done with before the next one is fed, so they come out the
// same whenever they are added; like the eager AppendFields they follow the
// frame's own fields in the record.
type lateFields struct {
	tr    Tracker
	f     *capture.Frame
	done  int  // the number of the frame whose fields were added to its record
	print bool // the printer reads them: add them to every printed frame
}

// next makes f the current frame, its tracker fields not yet added.
// The reader hands out the same Frame for every frame: no pointer is
// written (each costs a write barrier check), and a frame is told from
// the one before by its number.
func (l *lateFields) next(f *capture.Frame) {
	if l.f != f {
		l.f, l.done = f, 0
	}
}

// AppendLate adds the current frame's tracker fields to r, its record, once.
func (l *lateFields) AppendLate(r *decode.Record) {
	if l.done != l.f.Number {
		l.done = l.f.Number
		l.tr.AppendFields(l.f, r)
	}
}

// filterLate is what the filter is given to add late fields: nil without
// tracker fields (then none are read).
func (l *lateFields) filterLate() filter.Late {
	if l == nil {
		return nil
	}
	return l
}

// feeder is what the loop calls a tracker's Feed through.
type feeder interface{ Feed(f *capture.Frame) }

// feedTarget is the value whose Feed the loop calls for tr (nil without a
// tracker): a Tracker whose Feed is promoted from a field of its own (as
// zview.Tracker's is from *track.Tracker) names that field's value by a
// FeedTarget method, so that each frame costs one call, not two.
// takeFrame is the direct path's feed of a consumer that reads no more
// than its layers: every frame is taken.
func takeFrame(*capture.Frame) bool { return true }

// fastFeeder is a tracker that follows frames of the reader's direct path
// (track.Tracker.FeedFast).
type fastFeeder interface {
	FeedFast(f *capture.Frame) bool
}

func feedTarget(tr Tracker) feeder {
	if tr == nil {
		return nil
	}
	if t, ok := tr.(interface {
		FeedTarget() interface{ Feed(f *capture.Frame) }
	}); ok {
		return t.FeedTarget()
	}
	return tr
}

func (o *Options) loop(ctx context.Context, r *capture.Reader, flt *filter.Filter, tr feeder, late *lateFields, w *capture.Writer, p printer) error {
	if p != nil {
		if err := p.begin(); err != nil {
			return err
		}
	}
	prog := progress{on: o.Progress, w: o.Stderr, last: time.Now(), prefix: o.prefix()}
	defer prog.clear()
	selected := 0
	defer func() { o.shown = selected }()
	direct, _ := p.(*fieldsPrinter)
	if direct != nil && direct.direct == nil {
		direct = nil
	}
	// With -Y, a frame that carries a finding is a candidate even when it
	// is not SMC itself (-Y smc.expert must show every frame -z
	// smc,expert names); without -Y the listing is the SMC frames.
	findings, _ := tr.(interface{ HasFindings(*capture.Frame) bool })
	if flt == nil {
		findings = nil
	}
	flate := late.filterLate()
	if o.eagerLate {
		// The reference: every frame's record is whole before the filter,
		// which then needs no late fields (nor MayMatch).
		flate = nil
	}
	// -q with views and nothing else: a frame the reader's direct path
	// takes is the tracker's alone (fed by the reader), so the reader
	// feeds the run of them its buffer holds in one call (FeedBuffered)
	// before the next is read. -c counts frames shown, which such a run
	// would have to tell apart.
	feedRuns := p == nil && flt == nil && w == nil && late == nil && o.Count == 0
	// An interrupt is noticed within 256 reads: asking the context before
	// every frame cost 5 % of a -Y run. A live read waiting for frames
	// ends when Run's AfterFunc closes the reader.
	for polls := 0; ; polls++ {
		if polls&255 == 0 && ctx.Err() != nil {
			return nil
		}
		var (
			f   *capture.Frame
			err error
		)
		if direct != nil {
			// The frames the reader's direct path takes are printed in
			// runs, straight into the output buffer (no filter or -w in
			// this mode; a tracker was handed them by the reader,
			// SetDirectFeed); f is the one that ended the run.
			var n int
			f, n, err = direct.directRun(r, o.Count-selected)
			if selected += n; o.Count > 0 && selected >= o.Count {
				return nil
			}
			prog.tick(r.Frames())
			if f == nil && err == nil {
				continue
			}
		} else {
			if feedRuns && r.FeedBuffered() > 0 {
				prog.tick(r.Frames())
			}
			f, err = r.Next()
		}
		if err != nil {
			if err == io.EOF || (o.Iface != "" && ctx.Err() != nil) {
				o.ended = true
				return nil
			}
			if ctx.Err() != nil {
				return nil // a pipe's read that waited for its writer, ended by ctx
			}
			return err
		}
		if f.Number == 1 {
			o.base = f.CI.Timestamp
		}
		prog.tick(f.Number)
		if tr != nil {
			if !f.Direct() { // a Direct frame was fed by the reader (SetDirectFeed)
				tr.Feed(f)
			}
			if late != nil {
				late.next(f)
				if o.eagerLate {
					late.AppendLate(f.Fields())
				}
			}
		}
		if !o.All && !f.SMCRelevant() && (findings == nil || !findings.HasFindings(f)) {
			continue
		}
		if flt != nil {
			// Without late fields, Match: it inlines where MatchLate does
			// not. With them, MayMatch (inlined) rules out most frames
			// before MatchLate is called: the call alone cost a -Y with a
			// tracker field 4 %. One call of Fields for both, so that
			// the compiler inlines it for both or neither.
			rec := f.Fields()
			rec.Frame = f.Data // "frame contains"
			var ok bool
			if flate == nil {
				ok = flt.Match(rec)
			} else {
				ok = flt.MayMatch(rec) && flt.MatchLate(rec, flate)
			}
			if !ok {
				continue
			}
		}
		if o.wholeSelected {
			if r.Whole(f) && late != nil {
				late.done = 0 // a new record: its tracker fields are added again
			}
		} else {
			r.SettleICRC(f)
		}
		if w != nil {
			if err := w.WriteFrame(f); err != nil {
				return fmt.Errorf("-w: %w", err)
			}
		}
		if p != nil {
			if late != nil && late.print {
				late.AppendLate(f.Fields())
			}
			if err := p.frame(f); err != nil {
				return err
			}
		}
		selected++
		if o.Count > 0 && selected >= o.Count {
			return nil
		}
	}
}

// progress prints a frame counter on a terminal's stderr during long reads.
type progress struct {
	on     bool
	prefix string
	w      io.Writer
	last   time.Time
	shown  bool
}

func (p *progress) tick(n int) {
	if !p.on || n&0xffff != 0 {
		return
	}
	if now := time.Now(); now.Sub(p.last) > 250*time.Millisecond {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.w, "\r%s%d frames read", p.prefix, n)
	}
}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// writeViews writes the -z views after the frames. Text views follow the
// lines; -T json closes the document the frames opened (or writes one of its
// own after -q), so the output stays one valid JSON value; -T jsonl gives
// each view a line of its own.
func (o *Options) writeViews(bw *bufio.Writer, tr Tracker, framesOpen bool) error {
	switch o.Format {
	case FormatJSON, FormatJSONL:
	default:
		return tr.WriteViews(bw, o.Views, "text")
	}
	if o.Format == FormatJSON {
		if framesOpen {
			bw.WriteString(`,"views":{`)
		} else {
			bw.WriteString(`{"views":{`)
		}
	}
	var buf, compact bytes.Buffer
	for i, spec := range o.Views {
		buf.Reset()
		compact.Reset()
		if err := tr.WriteViews(&buf, []string{spec}, "json"); err != nil {
			return err
		}
		if err := json.Compact(&compact, buf.Bytes()); err != nil {
			return fmt.Errorf("-z %s: %w", spec, err)
		}
		name := appendJSONString(nil, spec)
		if o.Format == FormatJSONL {
			bw.WriteString(`{"view":`)
			bw.Write(name)
			bw.WriteString(`,"data":`)
			bw.Write(compact.Bytes())
			bw.WriteString("}\n")
			continue
		}
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n  ")
		bw.Write(name)
		bw.WriteByte(':')
		bw.Write(compact.Bytes())
	}
	if o.Format == FormatJSON {
		bw.WriteString("\n}}\n")
	}
	return nil
}
