package browser

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
)

// records splits a pcap or pcapng capture into its header (the file
// header; pcapng's section header and interface blocks) and one record
// per frame, as a writer puts them out.
func records(t *testing.T, b []byte) (header []byte, recs [][]byte) {
	t.Helper()
	le := binary.LittleEndian
	if le.Uint32(b) == 0x0a0d0d0a { // pcapng: blocks of type 6 are frames
		off := 0
		for off < len(b) {
			n := int(le.Uint32(b[off+4:]))
			if le.Uint32(b[off:]) == 6 {
				recs = append(recs, b[off:off+n])
			} else if recs == nil {
				header = b[:off+n]
			}
			off += n
		}
		return header, recs
	}
	for off := 24; off < len(b); {
		n := 16 + int(le.Uint32(b[off+8:]))
		recs = append(recs, b[off:off+n])
		off += n
	}
	return b[:24], recs
}

// liveWriter writes a capture the way a capturing program does: the
// header, then records as they come, each flushed through gzip when the
// capture is compressed.
type liveWriter struct {
	w  io.WriteCloser
	gz *gzip.Writer
}

func newLiveWriter(w io.WriteCloser, compressed bool) *liveWriter {
	lw := &liveWriter{w: w}
	if compressed {
		lw.gz = gzip.NewWriter(w)
	}
	return lw
}

func (lw *liveWriter) write(b []byte) error {
	if lw.gz == nil {
		_, err := lw.w.Write(b)
		return err
	}
	if _, err := lw.gz.Write(b); err != nil {
		return err
	}
	return lw.gz.Flush()
}

func (lw *liveWriter) Close() error {
	var err error
	if lw.gz != nil {
		err = lw.gz.Close()
	}
	if cerr := lw.w.Close(); err == nil {
		err = cerr
	}
	return err
}

// liveFormats are the captures a FIFO carries in the tests: pcap and
// pcapng, plain and gzip-compressed.
func liveFormats(t *testing.T, sample string) map[string][]byte {
	t.Helper()
	paths := inFormats(t, sample)
	out := map[string][]byte{}
	for _, name := range []string{"pcap", "pcapng"} {
		b, err := os.ReadFile(paths[name])
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// TestLiveFIFO: smcdump -I -r FIFO lists frames as the writer puts them
// out, one at a time (the list follows the tail and the status line says
// live), in pcap and pcapng, plain and through gzip: no byte read to tell
// the format apart is lost, and the writer never gets a broken pipe. When
// the writer closes, the status line says the input ended, and a filter
// reads the frames back from the copy the browser made.
func TestLiveFIFO(t *testing.T) {
	for name, b := range liveFormats(t, "pingpong.pcap") {
		for _, compressed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s gzip=%v", name, compressed), func(t *testing.T) {
				testLiveFIFO(t, b, compressed)
			})
		}
	}
}

func testLiveFIFO(t *testing.T, capture []byte, compressed bool) {
	header, recs := records(t, capture)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fifo, idx := openFIFO(t, ctx, OpenInput)
	h := run(t, New(ctx, idx, Options{All: true}), 100, 30)
	h.Until("(live: waiting for the first frame)")
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0) // waits for the browser to open it
	if err != nil {
		t.Fatal(err)
	}
	w := newLiveWriter(f, compressed)
	if err := w.write(header); err != nil {
		t.Fatal(err)
	}
	const oneByOne = 12
	for i := range oneByOne {
		if err := w.write(recs[i]); err != nil {
			t.Fatalf("frame %d: %v", i+1, err)
		}
		scr := h.Until(fmt.Sprintf("all, %d rows", i+1))
		if !strings.Contains(scr, "(live)") {
			t.Errorf("frame %d: the status line does not say live:\n%s", i+1, scr)
		}
		if n := h.selectedFrame(); n != int32(i+1) {
			t.Errorf("frame %d arrived, the list selects frame %d: it should follow the tail", i+1, n)
		}
	}
	for _, r := range recs[oneByOne:] {
		if err := w.write(r); err != nil {
			t.Fatalf("the writer: %v", err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("the writer: %v", err)
	}
	scr := h.untilSquashed(t, "(ended: the writer closed it)")
	if want := fmt.Sprintf("all, %d rows", len(recs)); !strings.Contains(scr, want) {
		t.Errorf("ended without every frame, want %q:\n%s", want, scr)
	}
	if _, done, err := idx.Progress(); !done || err != nil {
		t.Errorf("ended: done %v, %v", done, err)
	}
	if dir, _, why, inMemory, _ := idx.Kept(); dir == "" || why != "" || inMemory != 0 {
		t.Errorf("frames not read back from a copy: dir %q, why %q, %d in memory", dir, why, inMemory)
	}
	flt, err := filter.Compile("smc.llc")
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.Filter(ctx, flt)
	if err != nil || len(got) == 0 {
		t.Fatalf("filter after the end: %d frames, %v", len(got), err)
	}
	// The tree reads a frame back from the copy: the last one is there.
	h.Key(tcell.KeyRune, 'G')
	if scr := h.Until(fmt.Sprintf("frame.number = %d", len(recs))); strings.Contains(scr, "[red]") {
		t.Errorf("last frame:\n%s", scr)
	}
}

// TestLiveTail: --tail follows a file another program is writing: frames
// appended show as they come, a record written in two goes shows once it
// is whole, the status line says the file is followed, and a filter run
// meanwhile reads only the whole records.
func TestLiveTail(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	header, recs := records(t, b)
	p := filepath.Join(t.TempDir(), "growing.pcap")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := tailBrowser(t, ctx, p, Options{All: true})
	h.Until("(following the file as it grows: waiting for the first frame)")
	write := func(b []byte) {
		t.Helper()
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	write(header)
	for i := range 5 {
		write(recs[i])
		h.Until(fmt.Sprintf("all, %d rows", i+1))
	}
	write(recs[5][:20]) // a record half written
	flt, err := filter.Compile("frame")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.b.idx.Filter(ctx, flt); err != nil || !slices.Equal(got, []int32{1, 2, 3, 4, 5}) {
		t.Errorf("filter over a half-written record: %v, %v", got, err)
	}
	write(recs[5][20:])
	h.Until("all, 6 rows")
	for _, r := range recs[6:] {
		write(r)
	}
	scr := h.Until(fmt.Sprintf("all, %d rows", len(recs)))
	if !strings.Contains(scr, "(following the file as it grows") {
		t.Errorf("the status line does not say the file is followed:\n%s", scr)
	}
	if n := h.selectedFrame(); n != int32(len(recs)) {
		t.Errorf("the list selects frame %d, not the tail", n)
	}
	if _, done, _ := h.b.idx.Progress(); done {
		t.Error("a followed file's end ended the pass")
	}
	if _, _, _, inMemory, _ := h.b.idx.Kept(); inMemory != 0 {
		t.Errorf("%d frames kept in memory: a file is read back in place", inMemory)
	}
}

// TestLiveTailCut: a followed file cut shorter (the writer started over)
// ends the pass with an error naming the file, instead of waiting forever.
func TestLiveTailCut(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "growing.pcap")
	if err := os.WriteFile(p, b[:4096], 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := tailBrowser(t, ctx, p, Options{All: true})
	h.Until("(following the file as it grows)")
	if err := os.Truncate(p, 100); err != nil {
		t.Fatal(err)
	}
	h.untilSquashed(t, "cut to 100 bytes while followed (at offset 4096)")
}

// TestLiveFilter: a filter applied while frames still arrive takes in the
// matching frames that come after it, to the writer's end.
func TestLiveFilter(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	header, recs := records(t, b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fifo, idx := openFIFO(t, ctx, OpenInput)
	h := run(t, New(ctx, idx, Options{All: true}), 100, 30)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	write := func(b []byte) {
		t.Helper()
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	write(header)
	for _, r := range recs[:10] {
		write(r)
	}
	h.Until("all, 10 rows")
	h.Key(tcell.KeyRune, '/')
	h.Type("frame.number > 5")
	h.Key(tcell.KeyEnter, 0)
	h.Until("filter frame.number > 5, 5 rows")
	for i := 10; i < 15; i++ {
		write(recs[i])
		h.Until(fmt.Sprintf("filter frame.number > 5, %d rows", i+1-5))
		if n := h.selectedFrame(); n != int32(i+1) {
			t.Errorf("frame %d arrived, the filtered list selects frame %d: it should follow the tail", i+1, n)
		}
	}
	for _, r := range recs[15:] {
		write(r)
	}
	w.Close()
	h.untilSquashed(t, "(ended: the writer closed it)")
	h.Until(fmt.Sprintf("filter frame.number > 5, %d rows", len(recs)-5))
}

// TestListGrowsFromTop: a file's list that was shorter than the pane when
// first drawn (the index had only begun) stays at its first frame as it
// grows; tview's table, left following its end then, scrolled it away
// from the selection (a restarted browser opened at frame ~40).
func TestListGrowsFromTop(t *testing.T) {
	src, r := slowPingpong(t, "file")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx := &Index{path: "file", lt: r.LinkType(), ctx: map[int32][]int32{}, follow: make(chan struct{})}
	go idx.build(ctx, r)
	src.next <- 4
	h := run(t, New(ctx, idx, Options{All: true}), 100, 30)
	h.Until("all, 4 rows")
	src.next <- 200
	h.Until("all, 204 rows")
	if !h.selectedOnScreen() || h.selectedFrame() != 1 {
		t.Errorf("the list moved away from its first frame (frame %d selected, on screen %v):\n%s", h.selectedFrame(), h.selectedOnScreen(), h.Sync())
	}
}

// TestLiveNoSpool: a pipe read where no spool file can be made keeps its
// frames in memory, says so, and still lists, filters and shows them.
func TestLiveNoSpool(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fifo, idx := openFIFO(t, ctx, func(ctx context.Context, name string, count int, tail bool) (*Index, error) {
		return openInput(ctx, name, count, tail, func() (*spool, error) { return nil, errors.New("no room") })
	})
	h := run(t, New(ctx, idx, Options{All: true}), 100, 30)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatalf("the writer: %v", err)
	}
	w.Close()
	scr := h.untilSquashed(t, "(ended: the writer closed it)")
	if !strings.Contains(squash(scr), "(in memory: cannot copy: no room)") {
		t.Errorf("the status line does not say the frames are in memory:\n%s", scr)
	}
	flt, err := filter.Compile("smc.llc")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := idx.Filter(ctx, flt); err != nil || len(got) == 0 {
		t.Errorf("filter: %d frames, %v", len(got), err)
	}
	h.gotoFrame(t, 23)
	h.Until("frame.number = 23 ")
}

// TestLiveFollow: a connection followed (f) while its frames still arrive
// takes them in.
func TestLiveFollow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	header, recs := records(t, b)
	p := filepath.Join(t.TempDir(), "growing.pcap")
	var head []byte
	head = append(head, header...)
	for _, r := range recs[:30] {
		head = append(head, r...)
	}
	if err := os.WriteFile(p, head, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := tailBrowser(t, ctx, p, Options{})
	h.untilSquashed(t, "growing.pcap 30 frames")
	h.gotoFrame(t, 23) // connection 1's CDC
	h.Key(tcell.KeyTab, 0)
	h.Key(tcell.KeyTab, 0)
	h.Key(tcell.KeyRune, 'f')
	h.Until("follow connection 1, ")
	before := h.b.rows.GetRowCount()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range recs[30:] {
		if _, err := f.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	h.untilSquashed(t, fmt.Sprintf("growing.pcap %d frames", len(recs)))
	want := len(h.b.idx.Follow(1))
	if want <= before {
		t.Fatalf("connection 1 has %d frames in the whole file, %d in its first 30 frames", want, before)
	}
	if scr := h.Until(fmt.Sprintf("follow connection 1, %d rows", want)); !strings.Contains(scr, "following the file") {
		t.Errorf("status:\n%s", scr)
	}
}

// openFIFO makes a FIFO and opens it as the browser's input with open
// (OpenInput, or a variant); the test writes it.
func openFIFO(t *testing.T, ctx context.Context, open func(context.Context, string, int, bool) (*Index, error)) (string, *Index) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	idx, err := open(ctx, fifo, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return fifo, idx
}

// tailBrowser runs the browser at 100x30 on file p followed as it grows
// (--tail).
func tailBrowser(t *testing.T, ctx context.Context, p string, o Options) *harness {
	t.Helper()
	idx, err := OpenInput(ctx, p, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, New(ctx, idx, o), 100, 30)
}
