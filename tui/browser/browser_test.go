package browser

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
)

func screenText(sim tcell.SimulationScreen) string {
	cells, w, h := sim.GetContents()
	var b strings.Builder
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if c := cells[y*w+x]; len(c.Runes) > 0 {
				b.WriteRune(c.Runes[0])
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type harness struct {
	t    *testing.T
	b    *Browser
	sim  tcell.SimulationScreen
	drew chan struct{}
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
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, done, err := idx.Progress(); done {
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("index not built in 30 s")
		}
		<-idx.Changed()
	}
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	o.Screen = sim
	hs := &harness{t: t, b: New(ctx, idx, o), sim: sim, drew: make(chan struct{}, 64)}
	hs.b.App.SetAfterDrawFunc(func(tcell.Screen) {
		select {
		case hs.drew <- struct{}{}:
		default:
		}
	})
	done := make(chan error, 1)
	go func() { done <- hs.b.Run() }()
	t.Cleanup(func() { hs.b.App.Stop(); <-done })
	hs.wait()
	sim.SetSize(w, h)
	hs.sync()
	return hs
}

func (h *harness) wait() {
	h.t.Helper()
	select {
	case <-h.drew:
	case <-time.After(10 * time.Second):
		h.t.Fatal("no draw in 10 s")
	}
}

// sync queues a no-op update and waits for its draw.
func (h *harness) sync() string {
	h.t.Helper()
	for len(h.drew) > 0 {
		<-h.drew
	}
	h.b.App.QueueUpdateDraw(func() {})
	h.wait()
	return screenText(h.sim)
}

func (h *harness) key(k tcell.Key, r rune) {
	h.t.Helper()
	for len(h.drew) > 0 {
		<-h.drew
	}
	h.sim.InjectKey(k, r, tcell.ModNone)
	h.wait()
}

func (h *harness) typ(s string) {
	for _, r := range s {
		h.key(tcell.KeyRune, r)
	}
}

// until polls the screen (through draws) until it contains want.
func (h *harness) until(want string) string {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := h.sync()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("screen never showed %q:\n%s", want, scr)
		}
		time.Sleep(20 * time.Millisecond) // polling, not asserting time
	}
}

func TestBrowseFilterFollowExport(t *testing.T) {
	export := filepath.Join(t.TempDir(), "follow.pcapng")
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		h := open(t, "multilink.pcap", size[0], size[1], Options{Write: export})
		scr := h.until("[SYN]")
		if !strings.Contains(scr, "CLC Proposal") || !strings.Contains(scr, "frame 3") {
			t.Fatalf("%dx%d first screen:\n%s", size[0], size[1], scr)
		}
		// Filter: red while incomplete, then the LLC ADD_LINK frames.
		h.key(tcell.KeyRune, '/')
		h.typ("smc.llc.type ==")
		if scr := h.sync(); !strings.Contains(scr, "column") {
			t.Errorf("incomplete filter shows no error column:\n%s", scr)
		}
		h.typ(" 0x22")
		h.key(tcell.KeyEnter, 0)
		scr = h.until("0x22, 5 rows")
		if !strings.Contains(scr, "ADD_LINK_V2 req link 2") {
			t.Errorf("filtered list:\n%s", scr)
		}
		// Follow the first connection from SYN to DELETE_LINK.
		h.key(tcell.KeyEscape, 0)
		h.until("relevant, ")
		h.key(tcell.KeyRune, 'f')
		scr = h.until("follow connection 1")
		if !strings.Contains(scr, "CLC Proposal") || !strings.Contains(scr, "CONFIRM_LINK") {
			t.Errorf("followed connection:\n%s", scr)
		}
		h.key(tcell.KeyRune, 'G')
		if scr = h.sync(); !strings.Contains(scr, "DELETE_LINK") {
			t.Errorf("the followed connection does not end with DELETE_LINK:\n%s", scr)
		}
		h.key(tcell.KeyRune, 'w')
		h.until("wrote ")
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
		h.key(tcell.KeyRune, '?')
		scr = h.sync()
		for _, k := range Keys() {
			if !strings.Contains(scr, k.Desc[:min(len(k.Desc), 18)]) && size[1] >= 30 {
				t.Errorf("help lacks %q", k.Key)
			}
		}
		h.key(tcell.KeyEscape, 0)
		// Go to a frame by number.
		h.key(tcell.KeyRune, ':')
		h.typ("4078")
		h.key(tcell.KeyEnter, 0)
		if scr = h.until("frame 4078"); !strings.Contains(scr, "REJECT") {
			t.Errorf(":4078:\n%s", scr)
		}
		h.b.App.Stop()
	}
}

// TestTmux runs the real smcdump -I in an 80x24 tmux pane: filter, follow
// a connection, quit.
func TestTmux(t *testing.T) {
	tmux := testutil.NeedTool(t, "tmux")
	bin := filepath.Join(t.TempDir(), "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/smcdump").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	run := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	run("new-session", "-d", "-x", "80", "-y", "24", bin, "-I", "-r", filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	waitFor := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			scr := run("capture-pane", "-p")
			if strings.Contains(scr, want) {
				return scr
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane never showed %q:\n%s", want, scr)
			}
			time.Sleep(100 * time.Millisecond) // polling the pane
		}
	}
	waitFor("[SYN]")
	run("send-keys", "/")
	run("send-keys", "-l", "smc.clc.type == 4 or smc.llc")
	run("send-keys", "Enter")
	waitFor("filter smc.clc.type")
	run("send-keys", "Escape")
	waitFor("relevant, ")
	run("send-keys", "f")
	scr := waitFor("follow connection 1")
	if !strings.Contains(scr, "CLC Proposal") {
		t.Errorf("followed connection:\n%s", scr)
	}
	run("send-keys", "q")
}

// TestPanes: conversations, link groups and declines from the tracker,
// and the jumps from a pane or a frame to a connection or link group.
func TestPanes(t *testing.T) {
	h := open(t, "multilink.pcap", 160, 50, Options{})
	h.until("[SYN]")
	h.key(tcell.KeyRune, 'c')
	scr := h.until("conversations")
	if !strings.Contains(scr, "SMC-R") || !strings.Contains(scr, "10.10.0.2:54812") {
		t.Errorf("conversations pane:\n%s", scr)
	}
	h.key(tcell.KeyRune, 'j')
	h.key(tcell.KeyEnter, 0)
	h.until("follow connection 2")
	h.key(tcell.KeyRune, 'l')
	scr = h.until("link groups")
	if !strings.Contains(scr, "link 1") || !strings.Contains(scr, "link 2") {
		t.Errorf("link groups pane lacks both links:\n%s", scr)
	}
	h.key(tcell.KeyEnter, 0)
	h.until("link group 1, ")
	h.key(tcell.KeyEscape, 0)
	h.until("relevant, ")
	h.key(tcell.KeyRune, 'L')
	h.until("link group 1, ")
	h.b.App.Stop()

	h = open(t, "decline-nordma.pcap", 160, 50, Options{})
	h.until("[SYN]")
	h.key(tcell.KeyRune, 'd')
	scr = h.until("declines")
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
			scr := h.until("frame ")
			if !strings.Contains(scr, "SMC option") && !strings.Contains(scr, "[SYN") {
				t.Errorf("first screen:\n%s", scr)
			}
		})
	}
	// A pcapng: export one, then browse it.
	h := open(t, "pingpong.pcap", 80, 24, Options{Write: filepath.Join(t.TempDir(), "x.pcapng")})
	h.until("[SYN]")
	h.key(tcell.KeyRune, 'w')
	h.until("wrote ")
	h.b.App.Stop()
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
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, b: New(ctx, idx, Options{Screen: sim}), sim: sim, drew: make(chan struct{}, 64)}
	h.b.App.SetAfterDrawFunc(func(tcell.Screen) {
		select {
		case h.drew <- struct{}{}:
		default:
		}
	})
	done := make(chan error, 1)
	go func() { done <- h.b.Run() }()
	defer func() { h.b.App.Stop(); <-done }()
	h.wait()
	sim.SetSize(100, 30)
	src.next <- 20 // the handshake and the first link frames
	h.until("20 frames")
	h.key(tcell.KeyRune, 'G')
	src.next <- 30
	scr := h.until("50 frames")
	row, _ := h.b.list.GetSelection()
	if last := h.b.rows.GetRowCount() - 1; row != last {
		t.Errorf("at the tail the list should follow it: row %d of %d\n%s", row, last, scr)
	}
	h.key(tcell.KeyRune, 'g') // the user scrolls away
	src.next <- 30
	h.until("80 frames")
	if row, _ := h.b.list.GetSelection(); row != 0 {
		t.Errorf("scrolled away, the list still moved to row %d", row)
	}
}
