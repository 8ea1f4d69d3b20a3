package browser

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
)

// harness runs the browser on a simulation screen.
type harness struct {
	*testutil.Screen
	b *Browser
}

// open indexes a sample completely, then runs the browser on a
// simulation screen of w x h.
func open(t *testing.T, sample string, w, h int, o Options) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx, err := Open(ctx, filepath.Join(testutil.SamplesDir(t), sample))
	if err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, idx)
	return run(t, New(ctx, idx, o), w, h)
}

func run(t *testing.T, b *Browser, w, h int) *harness {
	s := testutil.NewScreen(t, b.App)
	s.Start(w, h, b.Run)
	return &harness{s, b}
}

func waitIndexed(t testing.TB, idx *Index) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ch := idx.Changed()
		if _, done, err := idx.Progress(); done {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("index not built in 30 s")
		}
		select {
		case <-ch:
		case <-time.After(time.Second):
		}
	}
}

func TestBrowseFilterFollowExport(t *testing.T) {
	export := filepath.Join(t.TempDir(), "follow.pcapng")
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		h := open(t, "multilink.pcap", size[0], size[1], Options{Write: export})
		scr := h.Until("[SYN]")
		if !strings.Contains(scr, "CLC Proposal") || !strings.Contains(scr, "frame 3") {
			t.Fatalf("%dx%d first screen:\n%s", size[0], size[1], scr)
		}
		// Filter: red while incomplete, then the LLC ADD_LINK frames.
		h.Key(tcell.KeyRune, '/')
		h.Type("smc.llc.type ==")
		if scr := h.Sync(); !strings.Contains(scr, "column") {
			t.Errorf("incomplete filter shows no error column:\n%s", scr)
		}
		h.Type(" 0x22")
		h.Key(tcell.KeyEnter, 0)
		scr = h.Until("0x22, 5 rows")
		if !strings.Contains(scr, "ADD_LINK_V2 req link 2") {
			t.Errorf("filtered list:\n%s", scr)
		}
		// Follow the first connection from SYN to DELETE_LINK.
		h.Key(tcell.KeyEscape, 0)
		h.Until("relevant, ")
		h.Key(tcell.KeyRune, 'f')
		scr = h.Until("follow connection 1")
		if !strings.Contains(scr, "CLC Proposal") || !strings.Contains(scr, "CONFIRM_LINK") {
			t.Errorf("followed connection:\n%s", scr)
		}
		h.Key(tcell.KeyRune, 'G')
		if scr = h.Sync(); !strings.Contains(scr, "DELETE_LINK") {
			t.Errorf("the followed connection does not end with DELETE_LINK:\n%s", scr)
		}
		h.Key(tcell.KeyRune, 'w')
		h.Until("wrote ")
		rows := h.b.rows.GetRowCount()
		r, err := capture.Open(export)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		r.Close()
		if n != rows {
			t.Errorf("export has %d frames, the list %d", n, rows)
		}
		// Help lists every key of the table.
		h.Key(tcell.KeyRune, '?')
		scr = h.Sync()
		for _, k := range h.b.Keys() {
			if !strings.Contains(scr, k.Desc[:min(len(k.Desc), 18)]) && size[1] >= 30 {
				t.Errorf("help lacks %q", k.Key)
			}
		}
		h.Key(tcell.KeyEscape, 0)
		// Go to a frame by number.
		h.Key(tcell.KeyRune, ':')
		h.Type("4078")
		h.Key(tcell.KeyEnter, 0)
		if scr = h.Until("frame 4078"); !strings.Contains(scr, "REJECT") {
			t.Errorf(":4078:\n%s", scr)
		}
	}
}

// TestTmux runs the real smcdump -I in an 80x24 tmux pane: filter, follow
// a connection, quit.
func TestTmux(t *testing.T) {
	bin := testutil.GoBuild(t, "../../cmd/smcdump", "smcdump")
	x := testutil.NewTmux(t, 80, 24, bin, "-I", "-r", filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	x.WaitFor("[SYN]")
	x.Keys("/")
	x.Keys("-l", "smc.clc.type == 4 or smc.llc")
	x.Keys("Enter")
	x.WaitFor("filter smc.clc.type")
	x.Keys("Escape")
	x.WaitFor("relevant, ")
	x.Keys("f")
	if scr := x.WaitFor("follow connection 1"); !strings.Contains(scr, "CLC Proposal") {
		t.Errorf("followed connection:\n%s", scr)
	}
	x.Keys("q")
}

// TestPanes: conversations, link groups and declines from the tracker,
// and the jumps from a pane or a frame to a connection or link group.
func TestPanes(t *testing.T) {
	h := open(t, "multilink.pcap", 160, 50, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'c')
	scr := h.Until("conversations")
	if !strings.Contains(scr, "SMC-R") || !strings.Contains(scr, "10.10.0.2:54812") {
		t.Errorf("conversations pane:\n%s", scr)
	}
	h.Key(tcell.KeyRune, 'j')
	h.Key(tcell.KeyEnter, 0)
	h.Until("follow connection 2")
	h.Key(tcell.KeyRune, 'c')
	h.Until("conversations")
	h.Key(tcell.KeyEscape, 0) // closes the pane, back to the list it came from
	h.Until("follow connection 2, ")
	h.Key(tcell.KeyRune, 'l')
	scr = h.Until("link groups")
	if !strings.Contains(scr, "link 1") || !strings.Contains(scr, "link 2") {
		t.Errorf("link groups pane lacks both links:\n%s", scr)
	}
	h.Key(tcell.KeyEnter, 0)
	h.Until("link group 1, ")
	h.Key(tcell.KeyEscape, 0)
	h.Until("relevant, ")
	h.Key(tcell.KeyRune, 'L')
	h.Until("link group 1, ")

	h = open(t, "decline-nordma.pcap", 160, 50, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'd')
	scr = h.Until("declines")
	if !strings.Contains(scr, "NOSMCRDEV") {
		t.Errorf("declines pane:\n%s", scr)
	}
}

// TestLayerSpans: the hex pane highlights exactly the selected layer's
// bytes (frame 13 of multilink.pcap: Ethernet, IPv4, UDP, BTH, an
// ADD_LINK_V2 LLC, ICRC).
func TestLayerSpans(t *testing.T) {
	h := open(t, "multilink.pcap", 80, 24, Options{})
	var spans map[string]span
	var data []byte
	if err := h.b.idx.Decode([]int32{13}, func(_ int32, f *capture.Frame) {
		spans, data = layerSpans(f), append([]byte(nil), f.Data...)
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]span{"eth": {0, 14}, "ip": {14, 20}, "udp": {34, 8}, "roce.bth": {42, 12}, "roce.icrc": {len(data) - 4, 4}}
	for k, w := range want {
		if spans[k] != w {
			t.Errorf("%s: %+v, want %+v", k, spans[k], w)
		}
	}
	llc := spans["smc.llc"]
	if llc.off != 54 || llc.off+llc.n > len(data)-4 || llc.n < 44 {
		t.Errorf("smc.llc %+v in a %d-byte frame", llc, len(data))
	}
	if n := strings.Count(hexDump(data, llc), "[black:yellow]"); n != llc.n {
		t.Errorf("%d bytes highlighted, want %d", n, llc.n)
	}
	if headingKey("  SMC LLC (smc.llc)") != "smc.llc" {
		t.Error("heading key")
	}
}

// TestEverySample opens every sample (and a pcapng, which is indexed in
// memory) and finds its first SMC line and a field tree.
func TestEverySample(t *testing.T) {
	for _, p := range testutil.Samples(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			h := open(t, filepath.Base(p), 80, 24, Options{})
			scr := h.Until("frame ")
			if !strings.Contains(scr, "SMC option") && !strings.Contains(scr, "[SYN") {
				t.Errorf("first screen:\n%s", scr)
			}
		})
	}
	// A pcapng: export one, then browse it.
	h := open(t, "pingpong.pcap", 80, 24, Options{Write: filepath.Join(t.TempDir(), "x.pcapng")})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'w')
	h.Until("wrote ")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx, err := Open(ctx, h.b.opts.Write)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ch := idx.Changed()
		if _, done, _ := idx.Progress(); done {
			break
		}
		<-ch
	}
	var line string
	b := New(ctx, idx, Options{})
	for _, l := range b.lines(idx.All()[:3]) {
		line += l
	}
	if !strings.Contains(line, "SMC option") {
		t.Errorf("pcapng browse: %q", line)
	}
}

// slowSource hands out frames only when the test releases them, as a live
// interface does.
type slowSource struct {
	frames []rawFrame
	next   chan int // how many more frames may go
	i, ok  int
}

func (s *slowSource) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	for s.ok == 0 {
		n, open := <-s.next
		if !open {
			return nil, gopacket.CaptureInfo{}, io.EOF
		}
		s.ok += n
	}
	if s.i == len(s.frames) {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	s.ok--
	f := s.frames[s.i]
	s.i++
	return f.data, f.ci, nil
}

// TestLiveFollowsTail: frames appended while the browser runs extend the
// list, which follows the tail until the user moves away from it.
func TestLiveFollowsTail(t *testing.T) {
	ps, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	src := &slowSource{next: make(chan int, 8)}
	for _, p := range ps {
		src.frames = append(src.frames, rawFrame{p.CI, p.Data})
	}
	r, err := capture.NewReader("live", src, lt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx := openLive(ctx, "eth-test", r)
	h := run(t, New(ctx, idx, Options{}), 100, 30)
	src.next <- 20 // the handshake and the first link frames
	h.Until("20 frames")
	h.Key(tcell.KeyRune, 'G')
	src.next <- 30
	scr := h.Until("50 frames")
	row, _ := h.b.list.GetSelection()
	if last := h.b.rows.GetRowCount() - 1; row != last {
		t.Errorf("at the tail the list should follow it: row %d of %d\n%s", row, last, scr)
	}
	h.Key(tcell.KeyRune, 'g') // the user scrolls away
	src.next <- 30
	h.Until("80 frames")
	if row, _ := h.b.list.GetSelection(); row != 0 {
		t.Errorf("scrolled away, the list still moved to row %d", row)
	}
}
