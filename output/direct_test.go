package output

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/output/zview"
)

// directFields are the catalogue's fields that -T fields can read on the
// reader's direct path (capture.CompileDirect), and frame.error, which a
// frame the path takes never has: every column the direct path fills.
func directFields(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, d := range decode.Fields() {
		if _, ok := capture.CompileDirect([]decode.FieldID{d.ID}); ok {
			names = append(names, d.Name)
		}
	}
	for _, must := range []string{"frame.number", "roce.bth.psn", "smc.cdc.seq", "roce.reth.va", "roce.aeth.msn", "ip.src", "eth.dst", "frame.error", "smc.clc.type"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+must+" ") {
			t.Fatalf("%s cannot be read on the direct path; the test expects it", must)
		}
	}
	return names
}

// runBoth runs -T fields on file by the direct path and without it and
// fails unless the outputs and errors are the same: on the goroutines
// o.Jobs says, or (0) on one and on two.
func runBoth(t *testing.T, o Options) {
	t.Helper()
	o.Format = FormatFields
	if o.Jobs != 0 {
		runBothAs(t, o)
		return
	}
	// One goroutine reads a file by read(2), the direct path's lines
	// from the stream's buffer (appendBuffered); two read it in chunks.
	for _, jobs := range []int{1, 2} {
		o.Jobs = jobs
		runBothAs(t, o)
	}
}

// runBothText is runBoth for the default text lines, which read the
// layers the direct path fills (Reader.SetDirectFeed), with and without
// the tracker's views, on one goroutine and on two.
func runBothText(t *testing.T, o Options) {
	t.Helper()
	o.Format = FormatText
	for _, jobs := range []int{1, 2} {
		o.Jobs = jobs
		runBothAs(t, o)
		tracked := o
		tracked.Views = trackerViews
		tracked.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
		runBothAs(t, tracked)
	}
}

// directFilters are -Y filters that the direct path matches on the
// values at its fixed offsets (every field of the first and third is one
// it reads; the second reads the tracker's fields too, which the tracker
// adds after following the frame by its fast path).
var directFilters = []string{
	"smc.cdc.seq >= 3 and roce.bth.psn > 100 or roce.aeth.msn > 2 or roce.reth.len > 64 or smc.cdc.flags.peer_conn_closed",
	"smc.conn.id and (smc.cdc.seq == 5 or roce.bth.opcode == 17) or smc.stream.offset > 1000 or smc.expert",
	"smc.llc or frame.error or tcp or ip.src == 10.10.0.1 and frame.len < 100",
	// Every frame: each line flags a bad ICRC, which the direct path
	// checks of a frame the filter selected only (Reader.SetLazyICRC).
	"frame.len > 0",
}

// runBothFiltered is runBothText with each of directFilters, and -T
// fields with them (columns the direct path reads, and those with a
// tracker field), JSON, -V and -x, on one goroutine and on two.
// With every set, each filter is run with every printer; else JSON, -V
// and -x only with the filter that reads the tracker's fields too.
func runBothFiltered(t *testing.T, o Options, every bool) {
	t.Helper()
	o.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
	for n, flt := range directFilters {
		o.DisplayFilter = flt
		runBothText(t, o)
		for _, jobs := range []int{1, 2} {
			f := o
			f.Jobs = jobs
			f.Fields = []string{"frame.number", "roce.bth.psn", "smc.cdc.seq", "ip.dst"}
			runBoth(t, f)
			f.Fields = []string{"frame.number", "smc.conn.id", "roce.reth.len", "smc.stream.offset"}
			runBoth(t, f)
			// -w alone: the bytes of the frames selected.
			runBothWrite(t, Options{Read: o.Read, All: o.All, Jobs: jobs, DisplayFilter: flt, Quiet: true, NewTracker: o.NewTracker})
			// Printers that read every layer: the selected frames are
			// decoded whole (Reader.Whole).
			if !every && n != 1 {
				continue
			}
			for _, w := range []Options{{Format: FormatJSON}, {Format: FormatText, Verbose: true}, {Format: FormatText, Hex: true}} {
				w.Read, w.All, w.Jobs, w.DisplayFilter, w.NewTracker = o.Read, o.All, jobs, flt, o.NewTracker
				runBothAs(t, w)
			}
		}
	}
}

// runBothWrite runs o (-q with -Y and -w) by the direct path and without
// it and fails unless the files written, the outputs and the errors are
// the same.
func runBothWrite(t *testing.T, o Options) {
	t.Helper()
	dir := t.TempDir()
	slow := o
	slow.noDirect = true
	o.Write, slow.Write = filepath.Join(dir, "direct.pcap"), filepath.Join(dir, "general.pcap")
	got, gotErr, err1 := run(t, o)
	want, wantErr, err2 := run(t, slow)
	a, _ := os.ReadFile(o.Write)
	b, _ := os.ReadFile(slow.Write)
	if got != want || gotErr != wantErr || (err1 == nil) != (err2 == nil) || !bytes.Equal(a, b) {
		t.Fatalf("%s -q -Y %q -w: direct %d bytes written (%v %q), general %d (%v %q)", o.Read, o.DisplayFilter, len(a), err1, gotErr, len(b), err2, wantErr)
	}
}

// runBothQuiet is runBoth for -q with the tracker's views, which it
// feeds the direct path's frames from their layers.
func runBothQuiet(t *testing.T, name string) {
	t.Helper()
	runBothAs(t, Options{Read: name, Quiet: true, Views: trackerViews,
		NewTracker: func(views []string) (Tracker, error) { return zview.NewTracker(views) }})
}

// runBothAs runs o by the direct path and without it and fails unless
// the outputs and errors are the same.
func runBothAs(t *testing.T, o Options) {
	t.Helper()
	slow := o
	slow.noDirect = true
	got, gotErr, err1 := run(t, o)
	want, wantErr, err2 := run(t, slow)
	if got != want || gotErr != wantErr || (err1 == nil) != (err2 == nil) || (err1 != nil && err1.Error() != err2.Error()) {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("%s: line %d differs:\ndirect:  %q\ngeneral: %q\n(%d columns)", o.Read, i+1, gl[i], wl[i], len(o.Fields))
			}
		}
		t.Fatalf("%s: direct %d lines (%v %q), general %d lines (%v %q)", o.Read, len(gl), err1, gotErr, len(wl), err2, wantErr)
	}
}

// trackerViews are the -z views whose tracker follows, with -T fields,
// the frames of the direct path from their headers (FeedFast).
var trackerViews = []string{"smc,conns", "smc,links", "smc,lgr", "smc,decline", "smc,expert"}

// runBothTracked is runBoth with the tracker and every view of it that
// takes the direct path's frames: the views, not only the lines, must be
// the same.
func runBothTracked(t *testing.T, o Options) {
	t.Helper()
	o.Views = trackerViews
	o.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
	runBoth(t, o)
}

// TestDirectMatchesRecord holds the direct path of -T fields to the
// general one (decoders and records), column for column, on every capture
// of the repository, with every column the direct path fills and the -E
// options that change a line.
func TestDirectMatchesRecord(t *testing.T) {
	cols := directFields(t)
	files := testutil.AllCaptures(t)
	for _, name := range files {
		runBoth(t, Options{Read: name, All: true, Fields: cols})
		runBoth(t, Options{Read: name, Fields: []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"}})
		runBoth(t, Options{Read: name, All: true, Fields: []string{"smc.cdc.seq", "frame.number", "smc.cdc.seq", "ip.dst"}, Separator: ", ", Quote: '"', Header: true, Count: 40})
		runBothTracked(t, Options{Read: name, All: true, Fields: []string{"frame.number", "roce.bth.psn", "smc.cdc.seq"}, Jobs: 1})
		runBothText(t, Options{Read: name})
		runBothText(t, Options{Read: name, All: true})
		runBothFiltered(t, Options{Read: name}, false)
		runBothQuiet(t, name)
	}
	// A line longer than the output buffer holds (the direct path once
	// looped on it without reading a frame).
	runBoth(t, Options{Read: pingpong, Fields: []string{"frame.number", "roce.bth.psn"}, Separator: strings.Repeat("x", 40000), Count: 30})
}

// TestDirectMutations runs both paths on frames of the reference
// pingpong capture damaged one byte at a time (and cut, padded,
// shortened), each after the unchanged capture so that the queue pairs
// known as SMC-R are those of a real run: a frame the direct path takes
// must print what the decoders make of it, and one it should not take
// (an LLC, a bad length, a reserved syndrome, a fragment) must go the
// general way, errors included.
func TestDirectMutations(t *testing.T) {
	var frames [][]byte
	for _, p := range readFrames(t, pingpong, -1) {
		frames = append(frames, p.Data)
	}
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1700000000, 0)
	write := func(data []byte, length int) {
		ts = ts.Add(time.Microsecond)
		ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(data), Length: length}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range frames {
		write(d, len(d))
	}
	n := 0
	for _, d := range frames[:80] {
		for i := 0; i < len(d) && i < 100; i++ {
			for _, v := range []byte{d[i] ^ 0x01, d[i] ^ 0x80, d[i] ^ 0x30, 0x00, 0xFF, 0xFE, 0x2C, 0x11, 0x04, 0x45, 0x08} {
				if v == d[i] {
					continue
				}
				m := bytes.Clone(d)
				m[i] = v
				write(m, len(m))
				n++
			}
		}
		write(d[:len(d)-1], len(d))                   // cut by the snap length
		write(d[:len(d)-4], len(d)-4)                 // shorter than its headers say
		write(append(bytes.Clone(d), 0, 0), len(d)+2) // padded
		write(d[:min(len(d), 50)], min(len(d), 50))
		n += 4
	}
	name := filepath.Join(t.TempDir(), "mutated.pcap")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d damaged frames", n)
	runBoth(t, Options{Read: name, All: true, Fields: directFields(t)})
	runBoth(t, Options{Read: name, All: true, Fields: []string{"frame.number", "roce.bth.opcode", "smc.cdc.seq", "frame.error"}})
	runBothTracked(t, Options{Read: name, All: true, Fields: []string{"frame.number", "smc.cdc.seq"}, Jobs: 1})
	runBothText(t, Options{Read: name, All: true})
	runBothFiltered(t, Options{Read: name, All: true}, true)
	runBothQuiet(t, name)

	// A CDC read by the direct path makes its queue pair known as SMC-R
	// as the general path does: the next SEND to it that the classifier
	// turns down (a CDC whose length byte is damaged) is a malformed CDC,
	// not opaque data, on both. Frame 23 is the first CDC.
	cdc := frames[22]
	bad := bytes.Clone(cdc)
	bad[55] = 43
	buf.Reset()
	w = pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	write(cdc, len(cdc))
	write(bad, len(bad))
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []string{"frame.number", "smc.cdc.seq", "frame.error"}
	out, _, _ := run(t, Options{Read: name, Format: FormatFields, All: true, Fields: cols})
	if !strings.Contains(out, "2\t\tCDC") {
		t.Fatalf("the damaged CDC after a CDC on its queue pair is not a CDC error:\n%s", out)
	}
	runBoth(t, Options{Read: name, All: true, Fields: cols})
}

// TestDirectBufferedDamage: records whose headers are damaged far into a
// file, past several of the stream buffer's refills (256 KiB each), where
// one goroutine prints the direct path's lines straight from that
// buffer: the frames after each place of damage, their numbers and the
// damage's file offsets in the errors are those the general path gives.
func TestDirectBufferedDamage(t *testing.T) {
	data, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	// pingpong's records four times over, after its file header.
	m := bytes.Clone(data)
	for range 3 {
		m = append(m, data[24:]...)
	}
	// Record offsets: the file header, then 16 bytes and the frame each.
	var offs []int
	for off := 24; off+16 <= len(m); off += 16 + int(binary.LittleEndian.Uint32(m[off+8:])) {
		offs = append(offs, off)
	}
	n := len(offs)
	if offs[n/3] < 1<<18 {
		t.Fatalf("the first damage at %#x, in the stream's first buffer", offs[n/3])
	}
	binary.LittleEndian.PutUint32(m[offs[n/3]+8:], 0xFFFFFF00)     // captured length
	binary.LittleEndian.PutUint32(m[offs[n/2]+12:], 1)             // original length below the captured
	binary.LittleEndian.PutUint32(m[offs[2*n/3]+4:], 1_500_000)    // microseconds past a second
	binary.LittleEndian.PutUint32(m[offs[2*n/3+1]+8:], 0x7FFFFFFF) // the next one's captured length too
	name := filepath.Join(t.TempDir(), "headers.pcap")
	if err := os.WriteFile(name, m, 0o644); err != nil {
		t.Fatal(err)
	}
	cols := []string{"frame.number", "roce.bth.psn", "smc.cdc.seq", "frame.error"}
	runBoth(t, Options{Read: name, All: true, Fields: cols})
	runBoth(t, Options{Read: name, Fields: cols, Count: n / 2})
	out, stderr, err := run(t, Options{Read: name, All: true, Format: FormatFields, Fields: []string{"frame.number"}, Jobs: 1})
	if err == nil && stderr == "" {
		t.Fatalf("no damage reported:\n%s", out[max(0, len(out)-200):])
	}
}

// shrinkable is a copy of pingpong.pcap, for a test to truncate while it
// is read, and its bytes.
func shrinkable(t *testing.T) (string, []byte) {
	t.Helper()
	data, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "shrinks.pcap")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return name, data
}

// TestFileShrinks truncates the capture while smcdump reads it on one
// goroutine (by read(2), 256 KiB at a time): the end its reads meet is
// the file's ErrChanged (exit status 2), not a clean end, after the lines
// printed before it, naming the frame and offset of the record it was to
// read.
func TestFileShrinks(t *testing.T) {
	name, data := shrinkable(t)
	var out bytes.Buffer
	sw := &shrinker{w: &out, name: name}
	// -j 1: on more goroutines the frames are read ahead of the output
	// (TestParallelFileShrinks).
	err := Run(context.Background(), Options{Read: name, All: true, Jobs: 1, Stdout: sw, Stderr: io.Discard})
	if !sw.done {
		t.Fatal("the output was never flushed during the read; the test needs a longer capture")
	}
	if !errors.Is(err, capture.ErrChanged) || ExitCode(err) != 2 {
		t.Fatalf("error %v (exit %d), want the file's ErrChanged (exit 2)", err, ExitCode(err))
	}
	if !strings.HasPrefix(out.String(), "1 ") {
		t.Fatalf("output begins %q", out.String()[:min(80, out.Len())])
	}
	// Every frame was printed up to the one whose record could not be
	// read any more: the error names that one and its record's offset.
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	last, _ := strconv.Atoi(strings.Fields(lines[len(lines)-1])[0])
	off := 24 // the file header, then records of 16 bytes and their data
	for n := 1; n <= last; n++ {
		off += 16 + int(binary.LittleEndian.Uint32(data[off+8:]))
	}
	want := fmt.Sprintf("%s: frame %d (file offset %#x): ", name, last+1, off)
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q, want it to name %q", err, want)
	}
}

// TestPcapngShrinks: a pcapng file truncated while it is read, by one
// goroutine (into a buffer) or by a parallel run (into small chunks its
// batches hold), ends with the file's error after the lines printed
// before it, never a crash, never a clean end.
func TestPcapngShrinks(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, pingpong)
	data := testutil.Pcapng(lt, 9, frames) // nanoseconds
	name := filepath.Join(t.TempDir(), "shrinks.pcapng")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	full, _, err := run(t, Options{Read: name, All: true, Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, jobs := range []int{1, 2} {
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		sw := &shrinker{w: &out, name: name}
		err := Run(context.Background(), Options{Read: name, All: true, Jobs: jobs, batchFrames: 2, chunkBytes: 4096, Stdout: sw, Stderr: io.Discard})
		if !sw.done {
			t.Fatal("the output was never flushed during the read; the test needs a longer capture")
		}
		// ErrChanged: the reads met an end before the part of the file
		// they had read.
		if !errors.Is(err, capture.ErrChanged) || ExitCode(err) != 2 {
			t.Errorf("-j %d: error %v (exit %d), want the file's ErrChanged (exit 2)", jobs, err, ExitCode(err))
		}
		if out.Len() == 0 || !strings.HasPrefix(full, out.String()) {
			t.Errorf("-j %d: %d bytes printed before the error, not a prefix of the whole output", jobs, out.Len())
		}
	}
}

// shrinker truncates a file to 4 KiB at the first write it passes on.
type shrinker struct {
	w    io.Writer
	name string
	done bool
}

func (s *shrinker) Write(p []byte) (int, error) {
	if !s.done {
		s.done = true
		if err := os.Truncate(s.name, 4096); err != nil {
			return 0, err
		}
	}
	return s.w.Write(p)
}

// TestDirectTaken makes sure the direct path is taken where it should be:
// every RDMA WRITE, ACK and CDC of the reference pingpong capture.
func TestDirectTaken(t *testing.T) {
	ids := []decode.FieldID{}
	for _, n := range []string{"frame.number", "smc.cdc.seq"} {
		d, _ := decode.LookupField(n)
		ids = append(ids, d.ID)
	}
	plan, ok := capture.CompileDirect(ids)
	if !ok {
		t.Fatal("no plan")
	}
	r, err := capture.Open(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.SetFieldDemand(ids)
	r.SetDepth(capture.DemandDepth(ids))
	r.SetDirect(plan)
	direct, cdc := 0, 0
	var line []byte
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if f.Direct() {
			direct++
			line = plan.AppendColumns(line[:0], f, "\t", 0)
			if !strings.HasSuffix(string(line), "\t") {
				cdc++
			}
		}
	}
	if direct < 4000 || cdc != 1023 {
		t.Fatalf("direct path took %d frames, %d CDC (want every RoCE data frame and the 1023 CDC)", direct, cdc)
	}
}

// FuzzDirectFields feeds one frame (after the reference capture, so that
// its queue pairs are known) to -T fields by both paths; the seeds are
// the reference capture's frames.
func FuzzDirectFields(f *testing.F) {
	var prefix bytes.Buffer
	w := pcapgo.NewWriter(&prefix)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		f.Fatal(err)
	}
	for i, p := range readFrames(f, pingpong, -1) {
		if err := w.WritePacket(p.CI, p.Data); err != nil {
			f.Fatal(err)
		}
		if i < 40 || i%50 == 0 { // the handshake, then every shape of RoCE frame
			f.Add(p.Data)
		}
	}
	cols := []string{"frame.number", "frame.error", "roce.bth.opcode", "roce.bth.psn", "roce.reth.va", "roce.aeth.msn", "roce.icrc", "smc.cdc.seq", "smc.cdc.flags.write_blocked", "ip.src", "eth.src", "smc.llc.type"}
	// The tracker's views too, with the frame amid the connection's
	// traffic, where the tracker's fast path follows its neighbours.
	frames := readFrames(f, pingpong, -1)
	f.Fuzz(func(t *testing.T, data []byte) {
		mid := slices.Clone(frames)
		mid = slices.Insert(mid, 60, rawFrame{CI: gopacket.CaptureInfo{Timestamp: mid[59].CI.Timestamp, CaptureLength: len(data), Length: len(data)}, Data: data})
		runBothTracked(t, Options{Read: writeFrames(t, "mid.pcap", mid), All: true, Fields: cols[:4], Jobs: 1})
		b := bytes.Clone(prefix.Bytes())
		bw := bytes.NewBuffer(b)
		w := pcapgo.NewWriter(bw)
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1800000000, 0), CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Skip(err)
		}
		name := filepath.Join(t.TempDir(), "f.pcap")
		if err := os.WriteFile(name, bw.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		runBoth(t, Options{Read: name, All: true, Fields: cols})
	})
}
