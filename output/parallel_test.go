package output

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output/zview"
)

// parallelModes are the output modes -j is held to: each is run with -j 1
// and on several goroutines, and must print the same bytes.
func parallelModes() map[string]Options {
	fields := []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"}
	general := []string{"frame.number", "frame.time_relative", "frame.error", "tcp.srcport", "smc.clc.type", "smc.llc.type", "roce.icrc.ok", "smc.cdc.seq"}
	cols, err := columns.Parse("No.,Time,Source,Destination,Protocol,Length,Seq=smc.cdc.seq,smc.conn.id,smc.conn.outcome,Info", nil)
	if err != nil {
		panic(err)
	}
	plain, err := columns.Parse("No.,Time,Protocol,Len=frame.len,roce.bth.psn,Info", nil)
	if err != nil {
		panic(err)
	}
	return map[string]Options{
		"columns":       {Columns: cols},
		"columns-plain": {Columns: plain, All: true},
		"text":          {},
		"all":           {All: true},
		"verbose":       {Verbose: true},
		"hex":           {Hex: true, All: true},
		"fields":        {All: true, Format: FormatFields, Fields: fields},
		"fields-smc":    {Format: FormatFields, Fields: fields},
		"fields-gen":    {All: true, Format: FormatFields, Fields: general},
		"fields-E":      {All: true, Format: FormatFields, Fields: general, Separator: ",", Header: true, Quote: '"', Aggregator: ";"},
		"fields-occ":    {Format: FormatFields, Fields: general, Occurrence: 'l', Header: true},
		"json":          {All: true, Format: FormatJSON},
		"json-smc":      {Format: FormatJSON},
		"jsonl":         {Format: FormatJSONL, All: true},
		"filter":        {DisplayFilter: "smc.cdc.seq > 5 or smc.clc.type == 4"},
		"filter-all":    {All: true, DisplayFilter: "frame.len > 100 and not tcp"},
		"filter-json":   {Format: FormatJSON, DisplayFilter: "smc.llc or smc.clc or frame.error"},
		"filter-fields": {Format: FormatFields, Fields: fields, DisplayFilter: "roce.bth.opcode == 4"},
		// Matched on the direct path's values, then decoded whole.
		"filter-json-conn": {Format: FormatJSON, DisplayFilter: "smc.cdc.seq > 5 and smc.conn.id or roce.bth.opcode == 17"},
		"filter-verbose":   {Verbose: true, DisplayFilter: "roce.reth.len > 64 or smc.cdc.seq == 3"},
		"quiet":            {Quiet: true},
		"views":            {Quiet: true, Views: []string{"smc,conns"}},
		"views-text":       {Views: []string{"smc,expert"}},
		"tracked":          {Format: FormatFields, Fields: []string{"frame.number", "smc.conn.id"}},
		"filter-conn":      {DisplayFilter: "smc.cdc.seq > 2 and smc.conn.id == 1"},
		"expert":           {DisplayFilter: "smc.expert", Views: []string{"smc,expert"}},
		"json-views":       {Format: FormatJSON, Views: []string{"smc,conns", "smc,lgr"}},
		"jsonl-views":      {Format: FormatJSONL, Views: []string{"smc,conns"}},
		"verbose-views":    {Verbose: true, Hex: true, Views: []string{"smc,links"}},
	}
}

// raceModes are the modes the race detector runs (ten times slower): one
// of each printer, with and without the tracker.
var raceModes = map[string]bool{"columns": true, "fields": true, "fields-gen": true, "json-views": true, "expert": true, "tracked": true, "filter": true,
	"filter-json-conn": true}

// parallelRun runs o with jobs goroutines and batches of batch frames,
// also writing -w to a file of its own; it returns everything the run
// made: stdout, stderr, the error and the -w file.
func parallelRun(t *testing.T, o Options, j jrun, write bool) string {
	t.Helper()
	jobs, batch := j.jobs, j.batch
	o.Jobs, o.batchFrames, o.chunkBytes = jobs, batch, j.chunk
	o.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
	if write {
		o.Write = filepath.Join(t.TempDir(), fmt.Sprintf("w%d-%d.pcapng", jobs, batch))
	}
	out, errb, err := run(t, o)
	s := fmt.Sprintf("stdout:\n%s\nstderr:\n%s\nerr: %v (exit %d)\n", out, errb, err, ExitCode(err))
	if write {
		b, rerr := os.ReadFile(o.Write)
		if rerr != nil && !os.IsNotExist(rerr) {
			t.Fatal(rerr)
		}
		s += fmt.Sprintf("-w: %x\n", b)
	}
	return s
}

// jrun is a -j run: its goroutines, frames per batch, and the bytes of
// the chunks a pcap file is read into (0: the default).
type jrun struct{ jobs, batch, chunk int }

// checkParallel holds the runs to -j 1's output for capture path in every
// mode, and with the counts as -c (with -w).
func checkParallel(t *testing.T, path string, counts []int, runs ...jrun) {
	t.Helper()
	if raceDetector {
		runs = runs[:1]
	}
	for name, o := range parallelModes() {
		if raceDetector && !raceModes[name] {
			continue
		}
		o.Read = path
		want := parallelRun(t, o, jrun{1, 0, 0}, false)
		for _, j := range runs {
			if got := parallelRun(t, o, j, false); got != want {
				t.Errorf("%s %s: -j %d (batches of %d) differs from -j 1:\n%s", filepath.Base(path), name, j.jobs, j.batch, testutil.Diff([]byte(want), []byte(got)))
			}
		}
	}
	for _, name := range []string{"text", "fields", "json", "quiet", "filter", "tracked", "views"} {
		if raceDetector && !raceModes[name] {
			continue
		}
		o := parallelModes()[name]
		o.Read = path
		for _, c := range counts {
			o.Count = c
			want := parallelRun(t, o, jrun{1, 0, 0}, true)
			for _, j := range runs {
				if got := parallelRun(t, o, j, true); got != want {
					t.Errorf("%s %s -c %d -w: -j %d (batches of %d) differs from -j 1:\n%s", filepath.Base(path), name, c, j.jobs, j.batch, testutil.Diff([]byte(want), []byte(got)))
				}
			}
		}
	}
}

// TestParallelSamples: every capture of the repository prints the same
// with -j 2 or -j 3 (batches of 3 frames) as with -j 1, in every mode.
func TestParallelSamples(t *testing.T) {
	for i, path := range testutil.AllCaptures(t) {
		if raceDetector && i%3 != 0 {
			continue
		}
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			checkParallel(t, path, []int{2}, jrun{2 + i%2, 3, 512 * (i % 2)})
		})
	}
}

// bigParallelCapture is the Ethernet captures one after the other, a few
// thousand frames (later captures' frames are numbered on, their queue
// pairs and CLC streams met again mid-capture), and a copy with damaged
// frames.
func bigParallelCapture(t *testing.T) []byte {
	t.Helper()
	var all []rawFrame
	for _, path := range append(testutil.AllCaptures(t), mutatedCapture(t)) {
		fs, lt := testutil.ReadFrames(t, path)
		if lt == layers.LinkTypeEthernet {
			// Handshakes, link setup and the first data of each.
			all = append(all, fs[:min(len(fs), 250)]...)
		}
	}
	if len(all) < 3000 {
		t.Fatalf("only %d frames", len(all))
	}
	t.Logf("%d frames", len(all))
	if raceDetector {
		all = all[:3000]
	}
	b, err := os.ReadFile(writeFrames(t, "big.pcap", all))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParallelLarge: a large capture, cut mid-record, with a corrupt record
// header and gzip-compressed (frames copied out of a reused buffer), prints
// the same on several goroutines with many small batches in flight, -c
// ending at and around batch boundaries, errors at the same frame.
func TestParallelLarge(t *testing.T) {
	big := bigParallelCapture(t)
	offs := testutil.RecordOffsets(big)
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cutAt := offs[len(offs)*2/3] + 10 // inside a record header
	corrupt := bytes.Clone(big)
	binary.LittleEndian.PutUint32(corrupt[offs[len(offs)/2]+8:], 0x7fffffff) // a captured length no file has
	// Read past (capture.Reader.Damage): a length three bytes off, two
	// records damaged one after the other, and the last record's.
	misplaced := bytes.Clone(big)
	for _, k := range []int{len(offs) / 4, len(offs) / 3, len(offs)/3 + 1, len(offs) - 1} {
		binary.LittleEndian.PutUint32(misplaced[offs[k]+8:], binary.LittleEndian.Uint32(misplaced[offs[k]+8:])+3)
	}
	gzipped := func(b []byte) []byte {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(b)
		zw.Close()
		return gz.Bytes()
	}
	for _, c := range []struct {
		name string
		path string
	}{
		{"big", write("big.pcap", big)},
		{"cut", write("cut.pcap", big[:cutAt])},
		{"cut-data", write("cut-data.pcap", big[:offs[len(offs)/3]+16+20])},
		{"corrupt", write("corrupt.pcap", corrupt)},
		{"misplaced", write("misplaced.pcap", misplaced)},
		{"gzip", write("big.pcap.gz", gzipped(big))},
		{"gzip-misplaced", write("misplaced.pcap.gz", gzipped(misplaced))},
	} {
		if raceDetector && (c.name == "cut-data" || c.name == "big" || c.name == "gzip-misplaced") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// -c at and around the boundaries of batches of 16.
			counts, runs := []int{17}, []jrun{{2, 16, 4096}, {3, 1, 0}}
			switch {
			case raceDetector:
				counts = []int{16, 1000}
			case c.name == "big" || c.name == "corrupt":
				counts, runs = []int{1, 16, 17, 33, 1000}, append(runs, jrun{2, 64, 0})
			}
			checkParallel(t, c.path, counts, runs...)
		})
	}
}

// TestParallelJSONInterrupted: a cancelled run still closes the JSON
// array on several goroutines.
func TestParallelJSONInterrupted(t *testing.T) {
	o := parallelModes()["json"]
	o.Read, o.Jobs, o.batchFrames = testutil.Samples(t)[0], 2, 4
	var out bytes.Buffer
	o.Stdout, o.Stderr = &out, &out
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]\n") {
		t.Errorf("interrupted -T json is not a closed array: %q", s)
	}
}

// TestParallelFileShrinks truncates the capture while batches are in
// flight, read by read(2) in small chunks: the reader meets the new end
// early, and the run ends with the file's error after a prefix of what
// -j 1 prints of the whole file, or, where every frame was read before,
// with all of it; never a crash. With -w the saved frames are the first
// ones of the capture. (TestPcapngShrinks cuts a pcapng file.)
func TestParallelFileShrinks(t *testing.T) {
	name, data := shrinkable(t)
	full, _, err := run(t, Options{Read: name, All: true, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := testutil.ReadFrames(t, pingpong)
	for _, save := range []bool{false, true} {
		for _, jobs := range []int{2, 3} {
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			sw := &shrinker{w: &out, name: name}
			o := Options{Read: name, All: true, Jobs: jobs, batchFrames: 2, chunkBytes: 4096, Stdout: sw, Stderr: io.Discard}
			if save {
				o.Format, o.Write = FormatText, filepath.Join(t.TempDir(), "saved.pcapng")
			}
			err := Run(context.Background(), o)
			if !sw.done {
				t.Fatal("the output was never flushed during the read; the test needs a longer capture")
			}
			switch {
			case err == nil && out.String() != full:
				t.Errorf("-j %d: no error, but not the whole output", jobs)
			case err != nil && (!errors.Is(err, capture.ErrChanged) || ExitCode(err) != 2):
				t.Errorf("-j %d: error %v (exit %d), want the file's ErrChanged (exit 2)", jobs, err, ExitCode(err))
			case !strings.HasPrefix(full, out.String()):
				n := 0
				for n < out.Len() && n < len(full) && out.Bytes()[n] == full[n] {
					n++
				}
				t.Errorf("-j %d: the output before the error is not what -j 1 prints: from byte %d\n%q\nwant\n%q", jobs, n, out.Bytes()[max(0, n-200):min(out.Len(), n+200)], full[max(0, n-200):min(len(full), n+200)])
			}
			if save {
				r, err := capture.Open(o.Write)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for f, err := r.Next(); err == nil; f, err = r.Next() {
					if n >= len(want) || !bytes.Equal(f.Data, want[n].Data) {
						t.Fatalf("-j %d -w: saved frame %d is not the capture's", jobs, n+1)
					}
					n++
				}
				r.Close()
				t.Logf("-j %d -w: %d frames saved", jobs, n)
			}
			t.Logf("-j %d: %d of %d bytes, %v", jobs, out.Len(), len(full), err)
		}
	}
}

// TestParallelChoice: which runs spread over goroutines.
func TestParallelChoice(t *testing.T) {
	tr, err := zview.NewTracker([]string{"smc,conns"})
	if err != nil {
		t.Fatal(err)
	}
	if n := usableCPUs(); n < 1 {
		t.Fatalf("usableCPUs() = %d", n)
	}
	for _, c := range []struct {
		name string
		o    Options
		tr   Tracker
		want int
	}{
		{"-j 3", Options{Read: "f", Jobs: 3}, nil, 3},
		{"-j 1", Options{Read: "f", Jobs: 1}, nil, 1},
		{"default", Options{Read: "f"}, nil, usableCPUs()},
		{"stdin", Options{Read: "-", Jobs: 2}, nil, 1},
		{"live", Options{Iface: "eth0", Jobs: 2}, nil, 1},
		{"tracker", Options{Read: "f", Jobs: 2, Views: []string{"smc,conns"}}, tr, 2},
		{"views and -c", Options{Read: "f", Jobs: 2, Views: []string{"smc,conns"}, Count: 5}, tr, 1},
	} {
		if c.o.parallel(c.tr, true, false) != 1 {
			t.Errorf("%s: an idle run on more than one goroutine", c.name)
		}
		if c.o.parallel(c.tr, false, true) != 1 {
			t.Errorf("%s: a run reading a FIFO on more than one goroutine", c.name)
		}
		if got := c.o.parallel(c.tr, false, false); got != c.want {
			t.Errorf("%s: %d goroutines, want %d", c.name, got, c.want)
		}
	}
}

// ngBuilder writes pcapng blocks in one byte order, for the -j tests of
// what a pcapng file may hold.
type ngBuilder struct {
	b   []byte
	ord binary.AppendByteOrder
}

func (w *ngBuilder) block(typ uint32, body []byte) {
	n := 12 + (len(body)+3)&^3
	w.b = w.ord.AppendUint32(w.ord.AppendUint32(w.b, typ), uint32(n))
	w.b = append(w.b, body...)
	w.b = append(w.b, make([]byte, (4-len(body)%4)%4)...)
	w.b = w.ord.AppendUint32(w.b, uint32(n))
}

// section starts a section with interfaces of link types lts, times in
// nanoseconds.
func (w *ngBuilder) section(lts ...layers.LinkType) {
	shb := w.ord.AppendUint32(nil, 0x1A2B3C4D)
	shb = w.ord.AppendUint16(w.ord.AppendUint16(shb, 1), 0)
	w.block(0x0A0D0D0A, w.ord.AppendUint64(shb, ^uint64(0)))
	for _, lt := range lts {
		idb := w.ord.AppendUint16(nil, uint16(lt))
		idb = w.ord.AppendUint16(idb, 0)
		idb = w.ord.AppendUint32(idb, 262144)
		idb = w.ord.AppendUint16(w.ord.AppendUint16(idb, 9), 1) // if_tsresol
		idb = append(idb, 9, 0, 0, 0)
		w.block(1, w.ord.AppendUint32(idb, 0))
	}
}

func (w *ngBuilder) epb(iface uint32, f rawFrame) {
	ts := uint64(f.CI.Timestamp.UnixNano())
	b := w.ord.AppendUint32(nil, iface)
	b = w.ord.AppendUint32(w.ord.AppendUint32(b, uint32(ts>>32)), uint32(ts))
	b = w.ord.AppendUint32(b, uint32(len(f.Data)))
	b = w.ord.AppendUint32(b, uint32(max(f.CI.Length, len(f.Data))))
	w.block(6, append(b, f.Data...))
}

// TestParallelPcapng: the frames of a pcapng file, which -j reads in
// place from the chunks its batches hold (small ones too: blocks cut at a
// chunk's end) and decodes again on the workers, print the same
// with -j 2 and -j 3 as with -j 1: two sections of either byte order, an
// interface of a link type not decoded, simple packet and statistics
// blocks, damage read past (a block whose trailer disagrees, a packet of
// an interface no block described), and the file cut inside a block.
func TestParallelPcapng(t *testing.T) {
	whole := buildNgTest(t)
	dir := t.TempDir()
	// The big-endian section's header damaged: its byte-order magic (the
	// order read from its lengths) or its length (read past to its
	// interface): no frame lost either way.
	shb := bytes.LastIndex(whole, []byte{0x0a, 0x0d, 0x0d, 0x0a, 0, 0})
	if shb <= 0 || binary.BigEndian.Uint32(whole[shb+8:]) != 0x1a2b3c4d {
		t.Fatalf("no big-endian section header found (%d)", shb)
	}
	beMagic, beLength := bytes.Clone(whole), bytes.Clone(whole)
	binary.BigEndian.PutUint32(beMagic[shb+8:], 0x1a2b3c0d)
	binary.BigEndian.PutUint32(beLength[shb+4:], 30)
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"whole.pcapng", whole},
		{"cut.pcapng", whole[:len(whole)*3/4+5]},
		{"be-magic.pcapng", beMagic},
		{"be-length.pcapng", beLength},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if strings.HasPrefix(c.name, "be-") {
				if got, want := ngFrames(t, path), ngFrames(t, filepath.Join(dir, "whole.pcapng")); got != want {
					t.Errorf("%d frames, the whole file %d", got, want)
				}
			}
			checkParallel(t, path, []int{17, 1000}, jrun{2, 4, 1024}, jrun{2, 16, 0}, jrun{3, 1, 0})
		})
	}
}

// ngFrames counts the frames a Reader reads of path, up to its end or
// damage it cannot read past.
func ngFrames(t *testing.T, path string) int {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for _, err := r.Next(); err == nil; _, err = r.Next() {
		n++
	}
	return n
}

// buildNgTest is TestParallelPcapng's file.
func buildNgTest(t *testing.T) []byte {
	fs, _ := testutil.ReadFrames(t, testutil.Samples(t)[0])
	for _, path := range testutil.Samples(t)[1:] {
		more, lt := testutil.ReadFrames(t, path)
		if lt == layers.LinkTypeEthernet && len(fs) < 6000 {
			fs = append(fs, more[:min(len(more), 400)]...)
		}
	}
	if raceDetector {
		fs = fs[:1500]
	}
	half := len(fs) / 2
	le := &ngBuilder{ord: binary.LittleEndian}
	le.section(layers.LinkTypeEthernet, 147) // 147: DLT_USER0, not decoded
	for i, f := range fs[:half] {
		switch i {
		case 10:
			le.epb(1, f)
		case 20:
			le.block(3, append(binary.LittleEndian.AppendUint32(nil, uint32(len(f.Data))), f.Data...)) // SPB
		case 30:
			le.epb(0, f)
			binary.LittleEndian.PutUint32(le.b[len(le.b)-4:], 12) // its trailer disagrees
		case 40:
			le.epb(7, f) // an interface the section does not describe
		case 50:
			le.block(5, make([]byte, 12)) // ISB of interface 0, no options
			le.epb(0, f)
		default:
			le.epb(0, f)
		}
	}
	be := &ngBuilder{b: le.b, ord: binary.BigEndian}
	be.section(layers.LinkTypeEthernet)
	for _, f := range fs[half:] {
		be.epb(0, f)
	}
	return be.b
}

// TestParallelCountBeforeDamage: -c ending before a place of damage the
// reader read past in a batch read ahead is no error of the run, as with
// -j 1, which never reads that far; ending after it, it is.
func TestParallelCountBeforeDamage(t *testing.T) {
	path := filepath.Join(testutil.Root(t), "testdata", "expert", "capture-damaged.pcap") // damage before frame 24
	for _, c := range []int{10, 23, 24, 40} {
		o := Options{Read: path, All: true, Count: c}
		want := parallelRun(t, o, jrun{1, 0, 0}, false)
		if got := parallelRun(t, o, jrun{2, 16, 0}, false); got != want {
			t.Errorf("-c %d: -j 2 differs from -j 1:\n%s", c, testutil.Diff([]byte(want), []byte(got)))
		}
		if exit := strings.Contains(want, "(exit 2)"); exit != (c >= 24) {
			t.Errorf("-c %d: exit 2 is %v, want %v", c, exit, c >= 24)
		}
	}
}

// TestSizeHint: a batch's buffer starts with room for half again what the
// batches before needed, keeps a buffer that has the room, and one batch
// of huge frames does not make every batch hold more than maxRoom bytes.
func TestSizeHint(t *testing.T) {
	var h sizeHint
	if b := room([]byte(nil), h); b != nil {
		t.Errorf("room before any batch: %d bytes, want none", cap(b))
	}
	h.note(1000, 1)
	h.note(600, 1) // less than before: the hint stays
	b := room([]byte(nil), h)
	if len(b) != 0 || cap(b) != 1500 {
		t.Errorf("room after a batch of 1000: len %d cap %d, want 0 and 1500", len(b), cap(b))
	}
	b = append(b, "kept"...)
	if c := room(b, h); len(c) != 0 || &c[:1][0] != &b[0] {
		t.Error("a buffer with room enough was not kept, emptied")
	}
	h.note(1<<30, 8)
	if v := room([]word(nil), h); cap(v) != maxRoom/8 {
		t.Errorf("room after a huge batch: %d elements of 8 bytes, want %d", cap(v), maxRoom/8)
	}
}

// word is an element of 8 bytes.
type word [8]byte
