package browser

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
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/gopacket/gopacket"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/tui"
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
	idx, ctx := openIndexed(t, filepath.Join(testutil.SamplesDir(t), sample))
	return run(t, New(ctx, idx, o), w, h)
}

// scrollToInfo scrolls the packet list right (→) until the Info column
// is at its left edge, where an 80-column screen shows what it says, and
// returns the screen.
func (h *harness) scrollToInfo() string {
	for range 8 {
		if scr := h.Sync(); strings.Contains(scr, "║ Info") {
			return scr
		}
		h.Key(tcell.KeyRight, 0)
	}
	return h.Until("║ Info")
}

func run(t *testing.T, b *Browser, w, h int) *harness {
	s := testutil.NewScreen(t, b.App.Application)
	s.Start(w, h, b.Run)
	return &harness{s, b}
}

// openIndexed opens path and waits for its index to be built; the index's
// context (returned) ends with the test.
func openIndexed(t testing.TB, path string) (*Index, context.Context) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, idx)
	return idx, ctx
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
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		export := filepath.Join(t.TempDir(), "follow.pcapng")
		h := open(t, "multilink.pcap", size[0], size[1], Options{Write: export})
		h.Until("[SYN]")
		scr := h.scrollToInfo()
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
		// Follow the first connection from SYN to DELETE_LINK (esc keeps
		// the filtered frame selected; g goes to the first).
		h.Key(tcell.KeyEscape, 0)
		h.Until("relevant, ")
		h.Key(tcell.KeyRune, 'g')
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
		if got := h.promptText(); got != export {
			t.Fatalf("w asks for %q, want the -w file %q", got, export)
		}
		h.Key(tcell.KeyEnter, 0)
		h.Until("wrote ")
		rows := h.b.rows.GetRowCount()
		if n, _ := countFrames(t, export); n != rows {
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
// a connection, scroll the list to its Info column, quit; started again,
// it has the filter in its history.
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
	x.WaitFor("follow connection 1")
	for range 6 {
		x.Keys("Right")
	}
	if scr := x.WaitFor("║ Info"); !strings.Contains(scr, "CLC Proposal") {
		t.Errorf("followed connection:\n%s", scr)
	}
	x.Keys("q")

	// Started again, at 200x50: ↑ in the filter bar has the filter.
	x = testutil.NewTmuxConfig(t, x.Config, 200, 50, bin, "-I", "-r", filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	x.WaitFor("[SYN]")
	x.Keys("/")
	x.Keys("Up")
	x.WaitFor("/smc.clc.type == 4 or smc.llc")
	x.Keys("Escape")
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

// hexMarked reads the hex pane off the screen: the frame offsets of the
// bytes it shows, and of those shown highlighted.
func (h *harness) hexMarked() (shown, marked []int) {
	type cell struct {
		r    rune
		mark bool
	}
	rows := make(chan [][]cell, 1)
	h.App.QueueUpdate(func() {
		x, y, w, ht := h.b.hex.GetInnerRect()
		cells, sw, _ := h.Sim.GetContents()
		var out [][]cell
		for r := y; r < y+ht; r++ {
			var line []cell
			for c := x; c < x+w; c++ {
				sc := cells[r*sw+c]
				_, bg, _ := sc.Style.Decompose()
				ch := ' '
				if len(sc.Runes) > 0 {
					ch = sc.Runes[0]
				}
				line = append(line, cell{ch, bg == tcell.ColorYellow})
			}
			out = append(out, line)
		}
		rows <- out
	})
	isHex := func(r rune) bool { return strings.ContainsRune("0123456789abcdef", r) }
	for _, line := range <-rows {
		var text strings.Builder
		for _, c := range line {
			text.WriteRune(c.r)
		}
		t := text.String()
		off, err := strconv.ParseUint(t[:min(4, len(t))], 16, 32)
		if len(t) < 6 || err != nil {
			continue
		}
		// Bytes are two hex digits between spaces, after "0000  ", and as
		// many as the layout has a row (the ASCII column follows).
		for i, j := 6, int(off); i+1 < len(line) && j < int(off)+h.b.hex.perRow; i++ {
			if isHex(line[i].r) && isHex(line[i+1].r) && line[i-1].r == ' ' && (i+2 == len(line) || line[i+2].r == ' ') {
				shown = append(shown, j)
				if line[i].mark && line[i+1].mark {
					marked = append(marked, j)
				}
				j++
				i++
			}
		}
	}
	return shown, marked
}

// current is the text of the field tree's current node.
func (h *harness) current() string {
	text := make(chan string, 1)
	h.App.QueueUpdate(func() {
		n := h.b.tree.GetCurrentNode()
		if n == nil {
			text <- ""
			return
		}
		text <- n.GetText()
	})
	return <-text
}

// selectNode moves down the field tree, as a user does with the arrow
// key, to the next node whose text starts with prefix (up with a prefix
// that starts with "^").
func (h *harness) selectNode(t *testing.T, prefix string) {
	t.Helper()
	key := tcell.KeyDown
	if p, ok := strings.CutPrefix(prefix, "^"); ok {
		key, prefix = tcell.KeyUp, p
	}
	for range 300 {
		h.Key(key, 0)
		if strings.HasPrefix(h.current(), prefix) {
			return
		}
	}
	t.Fatalf("no node %q in the field tree", prefix)
}

// wantMarked checks that the hex pane highlights exactly the bytes of sp
// among those it shows, and shows sp's first byte (a layer may be taller
// than the pane).
func (h *harness) wantMarked(t *testing.T, what string, sp span) {
	t.Helper()
	shown, marked := h.hexMarked()
	var want []int
	for _, i := range shown {
		if i >= sp.off && i < sp.off+sp.n {
			want = append(want, i)
		}
	}
	if !slices.Equal(marked, want) || !slices.Contains(shown, sp.off) {
		t.Errorf("%s: bytes %v highlighted, want %v (the pane shows %d..%d)\n%s", what, marked, want,
			slices.Min(shown), slices.Max(shown), h.Text())
	}
}

// TestFieldHighlight: selecting a field in the tree highlights exactly its
// bytes in the hex pane (scrolled into view), a field without a fixed
// place its layer's, and a layer heading its layer's; in a narrow pane
// (80 columns) and a wide one.
func TestFieldHighlight(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 50}} {
		h := open(t, "multilink.pcap", size[0], size[1], Options{})
		h.Until("[SYN]")
		// Frame 13: Ethernet, IPv4, UDP, BTH at 42, an ADD_LINK_V2 LLC at
		// 54 whose first rkey triplet is at LLC+72, the ICRC.
		h.gotoFrame(t, 13)
		n := len(h.b.data)
		for _, c := range []struct {
			node string
			sp   span
		}{
			{"Ethernet (eth)", span{0, 14}},
			{"eth.src", span{6, 6}},
			{"ip.ttl", span{14 + 8, 1}},
			{"RoCE BTH (roce.bth)", span{42, 12}},
			{"roce.bth.se", span{43, 1}},
			{"roce.bth.dqpn", span{42 + 5, 3}},
			{"roce.icrc ", span{n - 4, 4}},
			{"roce.icrc.ok", span{n - 4, 4}}, // computed: the ICRC's bytes
			{"SMC LLC (smc.llc)", span{54, n - 58}},
			{"smc.llc.length_be", span{54, n - 58}}, // computed: the LLC's
			{"smc.llc.qpn", span{54 + 28, 3}},
			{"smc.llc.rkey ", span{54 + 72, 4}},    // below the pane's first rows
			{"^RoCE BTH (roce.bth)", span{42, 12}}, // back up: the pane scrolls back
		} {
			h.selectNode(t, c.node)
			h.wantMarked(t, fmt.Sprintf("%dx%d frame 13 %s", size[0], size[1], c.node), c.sp)
		}
		// Frame 26, a CDC: the sequence number is 2 bytes at CDC+2.
		h.gotoFrame(t, 26)
		h.selectNode(t, "smc.cdc.seq")
		h.wantMarked(t, fmt.Sprintf("%dx%d frame 26 smc.cdc.seq", size[0], size[1]), span{54 + 2, 2})
		h.selectNode(t, "smc.cdc.flags.write_blocked")
		h.wantMarked(t, fmt.Sprintf("%dx%d frame 26 smc.cdc.flags.write_blocked", size[0], size[1]), span{54 + 24, 1})
		// Frame 7, a CLC Accept in a TCP segment: found by its bytes, the
		// QPN at +38, the EID of an SMC-R v2 Accept at +64.
		h.gotoFrame(t, 7)
		clc := bytes.Index(h.b.data, decode.EyecatcherSMCR[:])
		h.selectNode(t, "smc.clc.qpn")
		h.wantMarked(t, fmt.Sprintf("%dx%d frame 7 smc.clc.qpn", size[0], size[1]), span{clc + 38, 3})
		h.selectNode(t, "smc.clc.eid")
		h.wantMarked(t, fmt.Sprintf("%dx%d frame 7 smc.clc.eid", size[0], size[1]), span{clc + 64, 32})
	}
}

// gotoFrame shows frame n (:n) and focuses the field tree.
func (h *harness) gotoFrame(t *testing.T, n int) {
	t.Helper()
	for range 3 { // from wherever the focus is back to the packet list
		if h.focusIsList() {
			break
		}
		h.Key(tcell.KeyTab, 0)
	}
	h.Key(tcell.KeyRune, ':')
	h.Type(strconv.Itoa(n))
	h.Key(tcell.KeyEnter, 0)
	h.Until(fmt.Sprintf("frame %d ", n))
	h.Key(tcell.KeyTab, 0)
}

func (h *harness) focusIsList() bool {
	list := make(chan bool, 1)
	h.App.QueueUpdate(func() { list <- h.App.GetFocus() == h.b.list })
	return <-list
}

// TestHexDump: 16 bytes a row where the pane is wide enough, 8 where it is
// not, each highlighted byte marked once; and the tree's spans tell
// repeated values of a field apart.
func TestHexDump(t *testing.T) {
	data := make([]byte, 40)
	copy(data[1:], "[red]x")
	for _, l := range hexLayouts {
		d := hexDump(data, span{14, 5}, l)
		if rows := strings.Count(d, "\n"); rows != (len(data)+l.perRow-1)/l.perRow {
			t.Errorf("%+v: %d rows", l, rows)
		}
		// The ASCII column marks bytes 14..18 too: one region in each of
		// the two rows they are on.
		want := 5
		if l.ascii {
			want += 2
		}
		if n := strings.Count(d, "[black:yellow]"); n != want {
			t.Errorf("%+v: %d highlight regions, want %d", l, n, want)
		}
		for _, line := range strings.Split(strings.TrimSuffix(d, "\n"), "\n") {
			if w := tview.TaggedStringWidth(line); w > l.cols {
				t.Errorf("%+v: a row is %d columns, more than the %d it counts: %q", l, w, l.cols, line)
			}
		}
		if plain := hexDump(data, span{}, l); l.ascii && !strings.Contains(plain, tview.Escape("[red]x")) {
			t.Errorf("%+v: the ASCII column does not escape \"[red]\":\n%s", l, plain)
		}
	}
	if layoutFor(38).ascii || layoutFor(78).perRow != 16 || hexWidth(80) != 32 || hexWidth(200) != 74 {
		t.Error("an 80-column terminal should give the hex pane 8 bytes a row without ASCII, a 200-column one 16 with it")
	}

	idx, _ := openIndexed(t, filepath.Join(testutil.SamplesDir(t), "multilink.pcap"))
	// The tree's rkey fields and their spans, as showFrame pairs them.
	var rkeys []nodeSpans
	if err := idx.Decode([]int32{13}, func(_ int32, f *capture.Frame) {
		spans := f.FieldSpans()
		for _, l := range output.Tree(f) {
			for _, fd := range l.Fields {
				if fd.Name == "smc.llc.rkey" {
					rkeys = append(rkeys, nodeSpans{spanOf(spans[fd.Index].Field), spanOf(spans[fd.Index].Layer)})
				}
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(rkeys) == 0 {
		t.Fatal("no rkey field in frame 13's tree")
	}
	// ADD_LINK_V2 rkey triplets, 16 bytes apart from LLC+72.
	r0, r1 := rkeys[0], nodeSpans{}
	if len(rkeys) > 1 {
		r1 = rkeys[1]
	}
	if r0.field != (span{126, 4}) || (r1.field.n != 0 && r1.field != span{142, 4}) || r0.layer != (span{54, r0.layer.n}) {
		t.Errorf("rkeys at %+v and %+v in layer %+v", r0.field, r1.field, r0.layer)
	}
}

// TestEverySample opens every sample (and a pcapng, which is indexed in
// memory) and finds its first SMC line and a field tree.
func TestEverySample(t *testing.T) {
	for _, p := range testutil.Samples(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			h := open(t, filepath.Base(p), 80, 24, Options{})
			h.Until("frame ")
			scr := h.scrollToInfo()
			if !strings.Contains(scr, "SMC option") && !strings.Contains(scr, "[SYN") {
				t.Errorf("first screen:\n%s", scr)
			}
		})
	}
	// A pcapng: export one, then browse it.
	h := open(t, "pingpong.pcap", 80, 24, Options{Write: filepath.Join(t.TempDir(), "x.pcapng")})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'w')
	h.Key(tcell.KeyEnter, 0)
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
		line += l.info
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

// slowPingpong is a reader of pingpong.pcap's frames that hands them out
// as the test releases them (src.next).
func slowPingpong(t *testing.T, name string) (*slowSource, *capture.Reader) {
	t.Helper()
	ps, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	src := &slowSource{next: make(chan int, 8)}
	for _, p := range ps {
		src.frames = append(src.frames, rawFrame{ci: p.CI, data: p.Data})
	}
	r, err := capture.NewReader(name, src, lt)
	if err != nil {
		t.Fatal(err)
	}
	return src, r
}

// TestLiveFollowsTail: frames appended while the browser runs extend the
// list, which follows the tail until the user moves away from it.
func TestLiveFollowsTail(t *testing.T) {
	src, r := slowPingpong(t, "live")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx := openLive(ctx, "eth-test", r, 0)
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

// TestRowClass: the list's colours come from the frame's decoded layers,
// not from words in its text line: a malformed SMC message or decode
// error is red, a Decline yellow, LLC aqua, CLC green.
func TestRowClass(t *testing.T) {
	var f capture.Frame
	if classOf(&f) != rowPlain {
		t.Error("an empty frame is not plain")
	}
	f.SMCMalformed = true
	if classOf(&f) != rowError {
		t.Error("a malformed SMC message is not an error row")
	}
	f = capture.Frame{Err: errors.New("truncated")}
	if classOf(&f) != rowError {
		t.Error("a decode error is not an error row")
	}
	f = capture.Frame{}
	f.CLC = []*decode.CLC{{Type: decode.CLCTypeProposal}, {Type: decode.CLCTypeDecline}}
	if classOf(&f) != rowDecline {
		t.Error("a Decline is not a decline row")
	}
	f.CLC = f.CLC[:1]
	if classOf(&f) != rowCLC {
		t.Error("a Proposal is not a CLC row")
	}
	f = capture.Frame{}
	f.LLC = &decode.LLC{}
	if classOf(&f) != rowLLC {
		t.Error("an LLC message is not an LLC row")
	}
}

// TestFrameTimeDigits: frames read back for display keep their capture's
// time resolution, so the field tree shows frame.time_epoch as the file
// holds it: six decimals for a microsecond pcap, read from its records
// or, for a gzip file, from memory.
func TestFrameTimeDigits(t *testing.T) {
	src := filepath.Join(testutil.SamplesDir(t), "pingpong.pcap")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Close()
	zp := filepath.Join(t.TempDir(), "pingpong.pcap.gz")
	if err := os.WriteFile(zp, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{src, zp} {
		ctx, cancel := context.WithCancel(context.Background())
		idx, err := Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		waitIndexed(t, idx)
		var got []string
		err = idx.Decode([]int32{3, 5}, func(n int32, f *capture.Frame) {
			if v, ok := f.Fields().First(epochField); ok {
				got = append(got, v.Format(decode.KindTime))
			}
		})
		cancel()
		if err != nil || len(got) != 2 || len(got[0]) != len("1795336493.913597") {
			t.Errorf("%s: %v %q, want two times with 6 decimals", filepath.Base(p), err, got)
		}
	}
}

var epochField = lookup("frame.time_epoch")

// TestMalformedTreeMatchesList: a malformed LLC or CDC on a queue pair
// known as SMC-R shows its error in the list row and in the field tree, as
// smcdump -V does, when the frame is decoded alone (its connection's
// handshake replayed first), not only among the frames before it.
func TestMalformedTreeMatchesList(t *testing.T) {
	p := crafted.MalformedSMC(t)
	idx, ctx := openIndexed(t, p)
	for n, want := range map[int32]string{crafted.MalformedLLCFrame: crafted.MalformedLLCErr, crafted.MalformedCDCFrame: crafted.MalformedCDCErr} {
		var verbose bytes.Buffer
		if err := output.Run(ctx, output.Options{Read: p, Verbose: true, DisplayFilter: fmt.Sprintf("frame.number == %d", n), Stdout: &verbose}); err != nil {
			t.Fatal(err)
		}
		var tree []output.TreeLayer
		var line string
		if err := idx.Decode([]int32{n}, func(_ int32, f *capture.Frame) {
			tree = output.Tree(f)
			line = string(output.AppendLine(nil, f, idx.base, -1))
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(line, want) {
			t.Errorf("frame %d alone: line %q, want %q", n, line, want)
		}
		var lines []string
		for _, l := range tree {
			lines = append(lines, "  "+l.Title+" ("+l.Key+")")
			for _, fd := range l.Fields {
				lines = append(lines, "      "+fd.Name+" = "+fd.Value)
			}
		}
		tv := strings.Join(lines, "\n")
		if !strings.Contains(tv, "frame.error = "+want) {
			t.Errorf("frame %d alone: the tree has no frame.error %q:\n%s", n, want, tv)
		}
		for _, l := range lines {
			if !strings.Contains(verbose.String(), l) {
				t.Errorf("frame %d: tree line %q is not in smcdump -V:\n%s", n, l, verbose.String())
			}
		}
	}
	h := run(t, New(ctx, idx, Options{}), 120, 40)
	h.Until("[SYN")
	h.gotoFrame(t, crafted.MalformedLLCFrame)
	if scr := h.Until("frame.error"); !strings.Contains(scr, "LLC ADD_LINK_V2: offset 1") {
		t.Errorf("the field pane lacks the error:\n%s", scr)
	}
}

// selectedFrame is the frame of the packet list's selected row.
func (h *harness) selectedFrame() int32 {
	n := make(chan int32, 1)
	h.App.QueueUpdate(func() { n <- h.b.selected() })
	return <-n
}

// selectedOnScreen reports whether the list shows its selected row.
func (h *harness) selectedOnScreen() bool {
	ok := make(chan bool, 1)
	h.App.QueueUpdate(func() {
		row, _ := h.b.list.GetSelection()
		top, _ := h.b.list.GetOffset()
		_, _, _, ht := h.b.list.GetInnerRect()
		ok <- row >= top && row < top+ht
	})
	return <-ok
}

// TestKeepsPlace: the selected frame stays selected when the list
// changes (follow, esc, all frames), :N outside the list says so and shows
// all frames, and keys that cannot do anything say why.
func TestKeepsPlace(t *testing.T) {
	h := open(t, "multilink.pcap", 100, 30, Options{})
	h.Until("[SYN]")
	h.gotoFrame(t, 26) // a CDC of connection 1, well into its frames
	h.Key(tcell.KeyTab, 0)
	h.Key(tcell.KeyTab, 0) // back to the list
	for _, k := range []struct {
		key  rune
		want string
	}{{'f', "follow connection 1"}, {0, "relevant, "}, {'a', "all, "}, {'a', "relevant, "}} {
		if k.key == 0 {
			h.Key(tcell.KeyEscape, 0)
		} else {
			h.Key(tcell.KeyRune, k.key)
		}
		h.Until(k.want)
		if n := h.selectedFrame(); n != 26 || !h.selectedOnScreen() {
			t.Errorf("after %q the selected frame is %d (on screen: %v), want 26", k.key, n, h.selectedOnScreen())
		}
	}
	h.Key(tcell.KeyRune, ':')
	h.Type("2") // an ARP frame: not SMC-relevant
	h.Key(tcell.KeyEnter, 0)
	if scr := h.Until("frame 2 is not in the list (relevant): showing all frames"); !strings.Contains(scr, "all, ") || h.selectedFrame() != 2 {
		t.Errorf(":2 from the relevant list:\n%s", scr)
	}
	for text, want := range map[string]string{"abc": ":abc: not a frame number", "99999": "frame 99999: the capture has 4572 frames"} {
		h.Key(tcell.KeyRune, ':')
		h.Type(text)
		h.Key(tcell.KeyEnter, 0)
		h.Until(want)
	}
	h.Key(tcell.KeyRune, 'L') // frame 2, ARP, is on no link
	h.Until("frame 2 belongs to no link group")
}

// TestSmallTerminal: at 60x15 the selected row stays on screen whatever
// moves it: the first screen, g and G, :N, a filter and back, follow.
func TestSmallTerminal(t *testing.T) {
	h := open(t, "multilink.pcap", 60, 15, Options{})
	h.Until("relevant, ")
	check := func(what string) {
		t.Helper()
		if !h.selectedOnScreen() {
			t.Errorf("%s: the selected row (frame %d) is off screen:\n%s", what, h.selectedFrame(), h.Text())
		}
	}
	check("first screen")
	h.Key(tcell.KeyRune, 'G')
	check("G")
	h.Key(tcell.KeyRune, 'g')
	check("g")
	h.Key(tcell.KeyRune, ':')
	h.Type("2000")
	h.Key(tcell.KeyEnter, 0)
	h.Until("frame 2000")
	check(":2000")
	h.Key(tcell.KeyRune, '/')
	h.Type("smc.llc.type == 0x22")
	h.Key(tcell.KeyEnter, 0)
	h.Until("0x22, 5 rows")
	check("filter")
	h.Key(tcell.KeyRune, 'G')
	h.Key(tcell.KeyEscape, 0)
	h.Until("relevant, ")
	check("esc after a short list")
	h.Key(tcell.KeyRune, 'f')
	check("f")
}

// squash joins the screen's lines and collapses its spaces, to find a
// text that wraps over lines.
func squash(scr string) string { return strings.Join(strings.Fields(scr), " ") }

// TestFilterBar: at 80x24 a filter's whole error is shown, wrapped; enter
// on it keeps the bar open; an applied filter is kept (the bar reopens
// with it); ↑/↓ go through the filters applied; tab completes field names.
func TestFilterBar(t *testing.T) {
	h := open(t, "decline-nordma.pcap", 80, 24, Options{})
	h.Until("[SYN]")
	bad := "smc.clc.type == 4 and smc.clc.decline.reason == NOSUCHREASONNAME"
	_, cerr := filter.Compile(bad)
	want := filterError(cerr)
	if len(want) < 80 {
		t.Fatalf("the error %q fits a line: no test of wrapping", want)
	}
	h.Key(tcell.KeyRune, '/')
	h.Type(bad)
	if scr := h.Sync(); !strings.Contains(squash(scr), want) {
		t.Errorf("the filter error %q is not shown whole:\n%s", want, scr)
	}
	h.Key(tcell.KeyEnter, 0)
	if scr := h.Sync(); !strings.Contains(squash(scr), want) || h.promptText() != bad {
		t.Errorf("enter on a bad filter closed the bar:\n%s", scr)
	}
	h.Key(tcell.KeyEscape, 0)
	for _, f := range []string{"smc.clc", "smc.clc.type == 4"} {
		h.Key(tcell.KeyRune, '/')
		h.clearPrompt()
		h.Type(f)
		h.Key(tcell.KeyEnter, 0)
		h.Until("filter " + f + ", ")
	}
	h.Key(tcell.KeyRune, '/')
	if got := h.promptText(); got != "smc.clc.type == 4" {
		t.Errorf("the bar reopens with %q, want the filter applied", got)
	}
	h.Key(tcell.KeyUp, 0)
	if got := h.promptText(); got != "smc.clc" {
		t.Errorf("↑: %q, want the filter before", got)
	}
	h.Key(tcell.KeyDown, 0)
	h.Key(tcell.KeyDown, 0)
	if got := h.promptText(); got != "smc.clc.type == 4" {
		t.Errorf("↓↓: %q, want what the bar opened with", got)
	}
	h.clearPrompt()
	h.Type("smc.clc.decl")
	h.Key(tcell.KeyTab, 0)
	if got, scr := h.promptText(), h.Sync(); got != "smc.clc.decline" || !strings.Contains(scr, "smc.clc.decline.reason") {
		t.Errorf("tab on smc.clc.decl: %q\n%s", got, scr)
	}
	h.Type(".reason_n")
	h.Key(tcell.KeyTab, 0)
	if got := h.promptText(); got != "smc.clc.decline.reason_name " {
		t.Errorf("tab on a unique start: %q", got)
	}
}

// prompt opens the prompt with a key, replaces the text it opened with
// by text and presses enter.
func (h *harness) prompt(k tcell.Key, r rune, text string) {
	h.Key(k, r)
	h.clearPrompt()
	h.Type(text)
	h.Key(tcell.KeyEnter, 0)
}

// clearPrompt deletes the prompt's text.
func (h *harness) clearPrompt() {
	for h.promptText() != "" {
		h.Key(tcell.KeyBackspace2, 0)
	}
}

// promptText is the text in the prompt.
func (h *harness) promptText() string {
	text := make(chan string, 1)
	h.App.QueueUpdate(func() { text <- h.b.prompt.GetText() })
	return <-text
}

// rect is a primitive's place on the screen (x, y, w, h), read on the UI
// goroutine.
func (h *harness) rect(p interface{ GetRect() (int, int, int, int) }) [4]int {
	r := make(chan [4]int, 1)
	h.App.QueueUpdate(func() {
		x, y, w, ht := p.GetRect()
		r <- [4]int{x, y, w, ht}
	})
	return <-r
}

// TestLayout: the hex pane takes the width its dump needs (16 bytes and
// ASCII on a wide terminal, 8 without on 80 columns), x hides it, z
// zooms the focused pane, + and - move the split.
func TestLayout(t *testing.T) {
	h := open(t, "decline-nordma.pcap", 200, 50, Options{})
	h.Until("[SYN]")
	if r := h.rect(h.b.hex); r[2] != 74 {
		t.Errorf("200 columns: the hex pane is %d wide, want 74 (16 bytes and ASCII)", r[2])
	}
	if scr := h.Sync(); !strings.Contains(scr, "RT..") {
		t.Errorf("no ASCII column at 200 columns:\n%s", scr)
	}

	h = open(t, "decline-nordma.pcap", 80, 24, Options{})
	h.Until("[SYN]")
	if r := h.rect(h.b.hex); r[2] != 32 {
		t.Errorf("80 columns: the hex pane is %d wide, want 32", r[2])
	}
	h.Key(tcell.KeyRune, 'x')
	if r := h.rect(h.b.tree); r[2] != 80 {
		t.Errorf("x: the field tree is %d wide, want 80", r[2])
	}
	// The Decline's reason in the field tree, whole at 80 columns.
	h.gotoFrame(t, 7)
	h.selectNode(t, "smc.clc.decline.reason ")
	if scr := h.Sync(); !strings.Contains(scr, "smc.clc.decline.reason = 0x03030002 (NOSMCRDEV)") {
		t.Errorf("x: the tree does not show the decline reason whole:\n%s", scr)
	}
	h.Key(tcell.KeyTab, 0) // back to the list (the hex pane is hidden)
	h.Key(tcell.KeyRune, 'x')
	list := h.rect(h.b.listBox)[3]
	h.Key(tcell.KeyRune, '+')
	if got := h.rect(h.b.listBox)[3]; got <= list {
		t.Errorf("+: the list is %d high, was %d", got, list)
	}
	h.Key(tcell.KeyRune, '-')
	h.Key(tcell.KeyRune, '-')
	if got := h.rect(h.b.listBox)[3]; got >= list {
		t.Errorf("- -: the list is %d high, was %d", got, list)
	}
	h.Key(tcell.KeyTab, 0) // the field tree
	h.Key(tcell.KeyRune, 'z')
	if r := h.rect(h.b.tree); r[2] != 80 || r[3] < 20 {
		t.Errorf("z on the tree: %v, want the whole screen but the status line", r)
	}
	h.Key(tcell.KeyTab, 0)
	if r := h.rect(h.b.hex); r[2] != 80 || r[3] < 20 {
		t.Errorf("tab while zoomed: the hex pane is %v, want it zoomed", r)
	}
	h.Key(tcell.KeyRune, 'z')
	if r := h.rect(h.b.tree); r[3] >= 20 {
		t.Errorf("z again: the tree is still %v", r)
	}
}

// listLines are the packet list's header and rows as on screen (between
// the pane's borders).
func (h *harness) listLines() []string {
	r := h.rect(h.b.listBox)
	lines := strings.Split(h.Text(), "\n")
	var out []string
	for y := r[1] + 1; y < r[1]+r[3]-1 && y < len(lines); y++ {
		l := []rune(lines[y])
		out = append(out, string(l[r[0]+1:r[0]+r[2]-1]))
	}
	return out
}

// TestColumns: the packet list has Wireshark's columns under a header,
// aligned; t switches the time format; → scrolls a column at a time, then
// through Info, so that 80 columns show a whole decline reason.
func TestColumns(t *testing.T) {
	h := open(t, "decline-nordma.pcap", 80, 24, Options{})
	h.Until("[SYN")
	lines := h.listLines()
	head := lines[0]
	var at []int
	for _, c := range columns.Names {
		i := strings.Index(head, c)
		if i < 0 || len(at) > 0 && i <= at[len(at)-1] {
			t.Fatalf("header %q lacks %q in order", head, c)
		}
		at = append(at, i)
	}
	for _, l := range lines[1:5] {
		// Left-aligned columns start under their titles.
		for _, c := range []columns.Kind{colSource, colDest, colProto} {
			if l[at[c]] == ' ' || l[at[c]-1] != ' ' {
				t.Errorf("row %q: column %s does not start at %d, under its title", l, columns.Names[c], at[c])
			}
		}
	}
	if !strings.Contains(lines[1], "10.10.0.2:50500  10.10.0.1:5000   TCP ") {
		t.Errorf("first row: %q", lines[1])
	}
	// Frame 3 at 1795335955.000000 + ..., frame 4 0.013989 s after it.
	for _, c := range []struct{ head, row3, row4 string }{
		{"absolute (UTC)", "", ""},
		{"delta", "0.000000", "0.013989"},
		{"epoch", "17953", "17953"},
		{"relative", "0.021150", "0.035139"},
	} {
		h.Key(tcell.KeyRune, 't')
		h.Until("time: " + c.head)
		lines = h.listLines()
		if c.head != "relative" && !strings.Contains(lines[0], c.head) {
			t.Errorf("time %s: header %q", c.head, lines[0])
		}
		if !strings.Contains(lines[1], c.row3) || !strings.Contains(lines[2], c.row4) {
			t.Errorf("time %s: rows %q %q, want %q %q", c.head, lines[1], lines[2], c.row3, c.row4)
		}
	}
	// The Decline, frame 7: its whole reason, a screen at a time.
	h.Key(tcell.KeyRune, 'G')
	reason := "CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device (sender peer ID 0: no RoCE device, Linux)"
	var seen strings.Builder
	for range 12 {
		h.Key(tcell.KeyRight, 0)
		l := h.listLines()[4]
		seen.WriteString(l + "\n")
		if strings.Contains(l, "Linux)") {
			break
		}
	}
	if s := seen.String(); !strings.Contains(s, reason[:70]) || !strings.Contains(s, reason[len(reason)-50:]) {
		t.Errorf("scrolling right does not show the decline reason %q:\n%s", reason, s)
	}
	for range 12 {
		h.Key(tcell.KeyLeft, 0)
	}
	if l := h.listLines()[0]; !strings.HasPrefix(strings.TrimSpace(l), "No.") {
		t.Errorf("← back: header %q", l)
	}
	h.Key(tcell.KeyRune, 'i')
	if l := h.listLines(); !strings.HasPrefix(l[0], " Info") || !strings.HasPrefix(l[4], "iCLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device") {
		// i: the Decline carries a note (smc.fallback).
		t.Errorf("i: the list does not start at Info:\n%s", strings.Join(l, "\n"))
	}
	h.Key(tcell.KeyRune, 'i')
	if l := h.listLines()[0]; !strings.HasPrefix(strings.TrimSpace(l), "No.") {
		t.Errorf("i again: header %q", l)
	}
}

// countFrames reads a capture and returns its frame count and whether it
// is a classic pcap.
func countFrames(t *testing.T, path string) (int, bool) {
	t.Helper()
	hdr := make([]byte, 4)
	if f, err := os.Open(path); err == nil {
		f.Read(hdr)
		f.Close()
	}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	return n, binary.LittleEndian.Uint32(hdr) == 0xa1b2c3d4 || binary.LittleEndian.Uint32(hdr) == 0xa1b23c4d
}

// TestExport: w writes the list to the -w file, then to FILE-2 and
// FILE-3 rather than over the earlier export, and over an existing file
// only after a second enter; W writes the marked frames; a .pcap name
// writes pcap; M unmarks every frame and ' goes to the next mark.
func TestExport(t *testing.T) {
	dir := t.TempDir()
	export := filepath.Join(dir, "x.pcapng")
	h := open(t, "decline-nordma.pcap", 100, 30, Options{Write: export})
	h.Until("[SYN")
	for i, want := range []string{export, filepath.Join(dir, "x-2.pcapng"), filepath.Join(dir, "x-3.pcapng")} {
		h.Key(tcell.KeyRune, 'w')
		if got := h.promptText(); got != want {
			t.Fatalf("export %d: w asks for %q, want %q", i+1, got, want)
		}
		h.Key(tcell.KeyEnter, 0)
		h.Until("wrote 4 frames to " + want + " (pcapng)")
		if n, pcap := countFrames(t, want); n != 4 || pcap {
			t.Errorf("%s: %d frames (pcap %v), want 4 in pcapng", want, n, pcap)
		}
	}
	// Over an existing file: asked first.
	h.prompt(tcell.KeyRune, 'w', export)
	h.Until("exists: enter again overwrites it")
	h.Key(tcell.KeyEnter, 0)
	h.Until("wrote 4 frames to " + export)

	// Marks: two frames, W to a .pcap.
	h.Key(tcell.KeyRune, 'W')
	h.Until("no marked frames")
	h.Key(tcell.KeyRune, 'm')
	h.Key(tcell.KeyRune, 'j')
	h.Key(tcell.KeyRune, 'j')
	h.Key(tcell.KeyRune, 'm')
	h.Until("2 marked")
	h.Key(tcell.KeyRune, '\'')
	if n := h.selectedFrame(); n != 3 {
		t.Errorf("' from the second mark: frame %d, want 3 (the first, from the top)", n)
	}
	h.Key(tcell.KeyRune, '\'')
	if n := h.selectedFrame(); n != 5 {
		t.Errorf("' from the first mark: frame %d, want 5", n)
	}
	h.Key(tcell.KeyRune, 'W')
	h.clearPrompt()
	p := filepath.Join(dir, "marked.pcap")
	h.Type(p)
	h.Key(tcell.KeyEnter, 0)
	h.Until("wrote 2 frames to " + p + " (pcap)")
	if n, pcap := countFrames(t, p); n != 2 || !pcap {
		t.Errorf("%s: %d frames (pcap %v), want 2 in pcap", p, n, pcap)
	}
	h.Key(tcell.KeyRune, 'M')
	h.Until("unmarked 2 frames")
	if scr := h.Sync(); strings.Contains(scr, "marked  ") {
		t.Errorf("M left marks:\n%s", scr)
	}
}

// TestBackForward: [ goes back through the places jumped from (:N, f, a
// filter) with the frame selected there, ] forward again; moving with
// j/k/G is not a jump.
func TestBackForward(t *testing.T) {
	h := open(t, "multilink.pcap", 100, 30, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, ':')
	h.Type("26")
	h.Key(tcell.KeyEnter, 0)
	h.Key(tcell.KeyRune, 'f')
	h.Until("follow connection 1")
	h.Key(tcell.KeyRune, 'G')
	last := h.selectedFrame()
	h.Key(tcell.KeyRune, '/')
	h.Type("smc.llc.type == 0x22")
	h.Key(tcell.KeyEnter, 0)
	h.Until("0x22, 5 rows")
	for i, want := range []struct {
		key   rune
		mode  string
		frame int32
	}{
		{'[', "follow connection 1, ", last},
		{'[', "relevant, ", 26},
		{'[', "relevant, ", 3},
		{']', "relevant, ", 26},
		{']', "follow connection 1, ", last},
		{']', "0x22, 5 rows", 0},
	} {
		h.Key(tcell.KeyRune, want.key)
		h.Until(want.mode)
		if n := h.selectedFrame(); want.frame != 0 && n != want.frame {
			t.Errorf("step %d (%c): frame %d, want %d", i+1, want.key, n, want.frame)
		}
	}
	h.Key(tcell.KeyRune, ']')
	h.Until("no place to go forward to")
}

// TestSearch: ctrl-f finds the next frame whose bytes hold hex bytes or
// a text, highlighted in the hex pane; n and N go on; a miss says so; the
// filter's "frame contains" lists every such frame.
func TestSearch(t *testing.T) {
	h := open(t, "multilink.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyCtrlF, 0)
	h.Type("e2:d4:c3:d9") // the SMC eyecatcher, EBCDIC "SMCR": the SYNs' option, the CLC
	h.Key(tcell.KeyEnter, 0)
	h.Until("bytes e2d4c3d9 at offset")
	if n := h.selectedFrame(); n != 4 {
		t.Errorf("the first hit after frame 3 is frame %d, want 4 (the SYN-ACK's option)", n)
	}
	sel := make(chan span, 1)
	h.App.QueueUpdate(func() { sel <- h.b.hex.sel })
	if sp := <-sel; sp.n != 4 || !bytes.Equal(h.b.data[sp.off:sp.off+4], []byte{0xe2, 0xd4, 0xc3, 0xd9}) {
		t.Errorf("the hex pane highlights %+v, not the bytes found", sp)
	}
	h.Key(tcell.KeyRune, 'n')
	h.Until("of frame 5 ")
	h.Key(tcell.KeyRune, 'N')
	h.Until("of frame 4 ")
	h.Key(tcell.KeyRune, 'N')
	h.Until("of frame 3 ")
	h.Key(tcell.KeyRune, 'N') // round the top, to the last CLC with the eyecatcher
	h.Until("round the end of the list")

	h.prompt(tcell.KeyCtrlF, 0, `"SMC-LAB"`)
	h.Until(`text "SMC-LAB" at offset`)

	h.prompt(tcell.KeyCtrlF, 0, "0xzz")
	h.Until("not hex bytes")
	h.Key(tcell.KeyEscape, 0)
	h.prompt(tcell.KeyCtrlF, 0, "no such text anywhere")
	h.Until("is in none of the 4545 frames of the list")

	h.Key(tcell.KeyRune, '/')
	h.Type(`frame contains "SMC-LAB" and smc.clc.type == 1`)
	h.Key(tcell.KeyEnter, 0)
	if scr := h.Until(`== 1, `); strings.Contains(scr, ", 0 rows") {
		t.Errorf("frame contains: no Proposal holds the EID's text:\n%s", scr)
	}
}

// TestTreeFilterAndCollapse: A applies the selected field as a filter, P
// prepares it in the filter bar; a layer collapsed stays collapsed in the
// frames shown after it.
func TestTreeFilterAndCollapse(t *testing.T) {
	h := open(t, "decline-nordma.pcap", 120, 40, Options{})
	h.Until("[SYN")
	h.gotoFrame(t, 7) // the Decline; the focus is on the field tree
	h.selectNode(t, "smc.clc.decline.reason ")
	h.Key(tcell.KeyRune, 'A')
	if scr := h.Until("filter smc.clc.decline.reason == 0x3030002, 1 rows"); !strings.Contains(scr, "NOSMCRDEV") {
		t.Errorf("A on the decline reason:\n%s", scr)
	}
	h.selectNode(t, "Frame (frame)") // the focus stays on the tree, showing frame 7 again
	h.selectNode(t, "smc.clc.type ")
	h.Key(tcell.KeyRune, 'P')
	if got := h.promptText(); got != "smc.clc.type == 4" {
		t.Errorf("P on smc.clc.type: the filter bar has %q", got)
	}
	h.Key(tcell.KeyEscape, 0)
	h.Until("filter smc.clc.decline.reason") // not applied
	h.App.QueueUpdateDraw(func() { h.App.SetFocus(h.b.tree) })
	h.selectNode(t, "^Ethernet (eth)")
	h.Key(tcell.KeyEnter, 0) // collapse
	h.Key(tcell.KeyEscape, 0)
	h.Until("relevant, ")
	h.gotoFrame(t, 4)
	scr := h.Sync()
	if !strings.Contains(scr, "Ethernet (eth)") || strings.Contains(scr, "eth.src") || !strings.Contains(scr, "ip.src") {
		t.Errorf("the Ethernet layer collapsed in frame 7 is not in frame 4:\n%s", scr)
	}
}

// TestPaneHeaders: at 80x24 the tracker panes have column headers with
// the directions spelled out, → reaches their last columns, and the
// detail under the table shows a decline's whole reason.
func TestPaneHeaders(t *testing.T) {
	h := open(t, "decline-nordma.pcap", 80, 24, Options{})
	h.Until("[SYN")
	h.Key(tcell.KeyRune, 'd')
	scr := h.Until("declines")
	for _, want := range []string{"ID", "Client", "Server", "Declined", "server → client", "Meaning: no usable SMC-R (RoCE) device"} {
		if !strings.Contains(squash(scr), want) {
			t.Errorf("declines pane lacks %q:\n%s", want, scr)
		}
	}
	for range 8 {
		h.Key(tcell.KeyRight, 0)
	}
	if scr := h.Sync(); !strings.Contains(strings.SplitN(scr, "\n", 3)[1], "Meaning") {
		t.Errorf("→ does not reach the Meaning column:\n%s", scr)
	}
	h.Key(tcell.KeyEscape, 0)

	h = open(t, "multilink.pcap", 80, 24, Options{})
	h.Until("[SYN")
	h.Key(tcell.KeyRune, 'c')
	if scr := h.Until("conversations"); !strings.Contains(scr, "CDCs C→S") && !strings.Contains(squash(scr), "CDCs C→S: ") {
		t.Errorf("conversations pane:\n%s", scr)
	}
	// At 80x24 the table cuts the connection's detail: the detail pane
	// shows it first, above the columns the table shows.
	if scr := h.Until("Detail: "); strings.Index(scr, "Detail: ") > strings.Index(scr, "ID: ") {
		t.Errorf("the connection's detail after its ID in the detail pane:\n%s", scr)
	}
	h.Key(tcell.KeyEscape, 0)
	h.Key(tcell.KeyRune, 'l')
	if scr := squash(h.Until("link groups")); !strings.Contains(scr, "QP 0x000013 ⇄ 0x000011") && !strings.Contains(scr, "⇄") {
		t.Errorf("link groups pane:\n%s", scr)
	}
}

// listFrames is the packet list's frames in its order, and the decoded
// rows of the first n.
func (h *harness) listRows(n int) ([]int32, []row) {
	type out struct {
		ns   []int32
		rows []row
	}
	ch := make(chan out, 1)
	h.App.QueueUpdate(func() {
		h.b.rows.ensure(0, n)
		h.b.rows.mu.Lock()
		o := out{ns: slices.Clone(h.b.rows.ns.slice())}
		for _, k := range o.ns[:min(n, len(o.ns))] {
			o.rows = append(o.rows, h.b.rows.lines[k])
		}
		h.b.rows.mu.Unlock()
		ch <- o
	})
	o := <-ch
	return o.ns, o.rows
}

// TestSort: > and < sort the list by a column, on its typed value, s
// reverses; the selected frame stays selected; the header shows the
// order; a sort that would decode too many rows says so.
func TestSort(t *testing.T) {
	h := open(t, "multilink.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	h.gotoFrame(t, 26)
	h.Key(tcell.KeyTab, 0)
	h.Key(tcell.KeyTab, 0)
	for _, c := range []struct {
		key  rune
		col  columns.Kind
		less func(a, b row) bool
	}{
		{'>', colTime, func(a, b row) bool { return !a.time.After(b.time) }},
		{'>', colSource, func(a, b row) bool { return a.src.Compare(b.src) <= 0 }},
		{'>', colDest, func(a, b row) bool { return a.dst.Compare(b.dst) <= 0 }},
		{'>', colProto, func(a, b row) bool { return a.proto <= b.proto }},
		{'>', colLength, func(a, b row) bool { return a.length <= b.length }},
		{'s', colLength, func(a, b row) bool { return a.length >= b.length }},
		{'>', colInfo, func(a, b row) bool { return a.info <= b.info }},
	} {
		h.Key(tcell.KeyRune, c.key)
		scr := h.Until("sorted by " + columns.Names[c.col])
		ns, rows := h.listRows(300)
		if len(ns) != 4545 {
			t.Fatalf("sorted by %s: %d rows, want 4545", columns.Names[c.col], len(ns))
		}
		for i := 1; i < len(rows); i++ {
			if !c.less(rows[i-1], rows[i]) {
				t.Errorf("sorted by %s (%c): rows %d and %d out of order: %+v, %+v", columns.Names[c.col], c.key, i-1, i, rows[i-1], rows[i])
				break
			}
		}
		if n := h.selectedFrame(); n != 26 || !h.selectedOnScreen() {
			t.Errorf("sorted by %s: frame %d selected (on screen %v), want 26", columns.Names[c.col], n, h.selectedOnScreen())
		}
		if !strings.Contains(h.listLines()[0], columns.Names[c.col]+" ↑") && !strings.Contains(h.listLines()[0], columns.Names[c.col]+" ↓") {
			t.Errorf("sorted by %s: header %q has no arrow\n%s", columns.Names[c.col], h.listLines()[0], scr)
		}
	}
	h.Key(tcell.KeyRune, '>') // back to No.: frame order
	h.Until("sorted by No. ↑")
	if ns, _ := h.listRows(0); !slices.IsSorted(ns) {
		t.Error("> past Info is not frame order")
	}
	defer func(n int) { maxSortDecode = n }(maxSortDecode)
	maxSortDecode = 100
	h.Key(tcell.KeyRune, '<')
	h.Until("sorting by Info decodes every row: 4545 rows, more than 100; filter the list first")
	// < moves on from the refused column: a long list still reaches
	// Length, and from there Time past the refused Source, Destination
	// and Protocol.
	h.Key(tcell.KeyRune, '<')
	h.Until("sorted by Length ↑")
	for _, c := range []string{"Protocol", "Destination", "Source"} {
		h.Key(tcell.KeyRune, '<')
		h.Until("sorting by " + c + " decodes every row")
	}
	h.Key(tcell.KeyRune, '<')
	h.Until("sorted by Time ↑")
}

// TestEveryKey presses every key of the table, each followed by esc, on
// an empty list and on a full one, at 60x15: no key panics or leaves the
// browser stuck; each says what it did or why it could not.
func TestEveryKey(t *testing.T) {
	keys := []struct {
		k tcell.Key
		r rune
	}{{tcell.KeyCtrlF, 0}, {tcell.KeyTab, 0}, {tcell.KeyEnter, 0}, {tcell.KeyLeft, 0}, {tcell.KeyRight, 0}, {tcell.KeyUp, 0}, {tcell.KeyDown, 0}}
	for _, r := range "jkgGfacldLmM'wWtizx+-<>s[]nNAPCo!&|^{}()D:/?JK " {
		keys = append(keys, struct {
			k tcell.Key
			r rune
		}{tcell.KeyRune, r})
	}
	for _, empty := range []bool{true, false} {
		h := open(t, "decline-nordma.pcap", 60, 15, Options{})
		h.Until("relevant, ")
		if empty {
			h.prompt(tcell.KeyRune, '/', "frame.number == 0")
			h.Until("0 rows")
		}
		for _, k := range keys {
			h.Key(k.k, k.r)
			h.Key(tcell.KeyEscape, 0)
		}
		h.Sync()
	}
}

// TestExpertPane: e lists the capture's findings (multilink.pcap: the
// failover first, a warning at frame 985), enter goes to the finding's
// first frame, and the list marks frames with findings (! for warnings).
func TestExpertPane(t *testing.T) {
	h := open(t, "multilink.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'e')
	scr := h.Until("smc.failover")
	for _, want := range []string{"expert (enter: go to its first frame", "smc.link.deleted", "roce.rc.retransmission", "Check: why the old link went", "link 2 of link group 1"} {
		if !strings.Contains(scr, want) {
			t.Errorf("expert pane lacks %q:\n%s", want, scr)
		}
	}
	h.Key(tcell.KeyEnter, 0)
	h.Until("relevant, ")
	if n := h.selectedFrame(); n != 985 {
		t.Errorf("enter on smc.failover selected frame %d, want 985", n)
	}
	found := false
	for _, l := range h.listLines() {
		if strings.HasPrefix(l, "!") && strings.Contains(l, "985 ") {
			found = true
		}
	}
	if !found {
		t.Errorf("frame 985 is not marked with !:\n%s", strings.Join(h.listLines(), "\n"))
	}
	// The field tree ends with the frame's findings.
	last := make(chan string, 1)
	h.App.QueueUpdate(func() {
		kids := h.b.tree.GetRoot().GetChildren()
		heading := kids[len(kids)-1]
		text := heading.GetText()
		for _, k := range heading.GetChildren() {
			text += "\n" + k.GetText()
		}
		last <- text
	})
	if text := <-last; !strings.HasPrefix(text, "SMC Expert Info") || !strings.Contains(text, "warn smc.failover") {
		t.Errorf("the field tree of frame 985 ends with %q, want its finding", text)
	}
}

// TestExpertPaneBadICRC: the index pass checks ICRCs, so a RoCE frame
// whose ICRC is wrong is in the expert pane as roce.icrc.bad.
func TestExpertPaneBadICRC(t *testing.T) {
	v := crafted.ExpertVector(t, "bad-icrc")
	idx, ctx := openIndexed(t, v.Build(t))
	h := run(t, New(ctx, idx, Options{}), 120, 40)
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'e')
	h.Until("roce.icrc.bad")
}

// TestSwallowedFrameNumber: a frame decoded alone for the field pane, its
// connection's handshake replayed first, names the earlier frames its
// errors point at by their numbers in the capture, as the list, -V and
// -Y frame.error do, not by their places in the replay.
func TestSwallowedFrameNumber(t *testing.T) {
	p := crafted.CLCLengthSwallows(t)
	idx, ctx := openIndexed(t, p)
	var fields bytes.Buffer
	if err := output.Run(ctx, output.Options{Read: p, Format: output.FormatFields, Fields: []string{"frame.number", "frame.error"},
		DisplayFilter: fmt.Sprintf("frame.number == %d", crafted.SwallowedFrame), Stdout: &fields}); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d\t%s\n", crafted.SwallowedFrame, crafted.SwallowedErr); fields.String() != want {
		t.Fatalf("-T fields: %q, want %q", fields.String(), want)
	}
	var tree, line string
	if err := idx.Decode([]int32{crafted.SwallowedFrame}, func(_ int32, f *capture.Frame) {
		for _, l := range output.Tree(f) {
			for _, fd := range l.Fields {
				tree += fd.Name + " = " + fd.Value + "\n"
			}
		}
		line = string(output.AppendLine(nil, f, idx.base, -1))
	}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tree, "frame.error = "+crafted.SwallowedErr+"\n") {
		t.Errorf("the tree of frame %d alone lacks %q:\n%s", crafted.SwallowedFrame, crafted.SwallowedErr, tree)
	}
	if !strings.Contains(line, crafted.SwallowedErr) {
		t.Errorf("the line of frame %d alone: %q, want %q", crafted.SwallowedFrame, line, crafted.SwallowedErr)
	}
	h := run(t, New(ctx, idx, Options{}), 200, 50)
	h.Until("[SYN")
	h.gotoFrame(t, crafted.SwallowedFrame)
	if scr := h.Until("lies inside the CLC Proposal of frame"); !strings.Contains(scr, "lies inside the CLC Proposal of frame 8 ") || strings.Contains(scr, "of frame 4 ") {
		t.Errorf("the screen names another frame:\n%s", scr)
	}
}

// TestNanosecondTimes: the Time column of a nanosecond capture prints
// nine decimals in every format, so that frames a nanosecond apart read
// as different times, not one microsecond with relative and delta times
// of 0.000000 (issue 33); a microsecond capture keeps six (TestColumns).
func TestNanosecondTimes(t *testing.T) {
	fs, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "decline-nordma.pcap"))
	base := time.Unix(1795335955, 123456789)
	for i := range fs {
		fs[i].CI.Timestamp = base.Add(time.Duration(i))
	}
	p := filepath.Join(t.TempDir(), "ns.pcap")
	if err := os.WriteFile(p, testutil.PcapNanos(t, lt, fs), 0o644); err != nil {
		t.Fatal(err)
	}
	idx, ctx := openIndexed(t, p)
	h := run(t, New(ctx, idx, Options{}), 80, 24)
	h.Until("[SYN")
	// The list shows the relevant frames, from frame 3 on.
	for _, c := range []struct {
		head string
		want func(n, prev int) string
	}{
		{"relative", func(n, _ int) string { return fmt.Sprintf("0.%09d", n-1) }},
		{"absolute (UTC)", func(n, _ int) string { return fmt.Sprintf("08:25:55.%09d", 123456789+n-1) }},
		{"delta", func(n, prev int) string { return fmt.Sprintf("0.%09d", n-prev) }}, // since the row above
		{"epoch", func(n, _ int) string { return fmt.Sprintf("1795335955.%09d", 123456789+n-1) }},
	} {
		if c.head != "relative" {
			h.Key(tcell.KeyRune, 't')
			h.Until("time: " + c.head)
		}
		rows, prev := 0, 0
		for _, l := range h.listLines()[1:] {
			f := strings.Fields(strings.TrimPrefix(l, "i "))
			if len(f) < 2 {
				continue
			}
			n, err := strconv.Atoi(f[0])
			if err != nil {
				continue
			}
			if prev == 0 {
				prev = n
			}
			rows++
			if want := c.want(n, prev); f[1] != want {
				t.Errorf("time %s, frame %d: row %q, want time %s", c.head, n, l, want)
			}
			prev = n
		}
		if rows < 3 {
			t.Errorf("time %s: %d rows:\n%s", c.head, rows, strings.Join(h.listLines(), "\n"))
		}
	}
}

// untilSquashed syncs until the screen, its lines joined (squash), holds
// want: a status line wraps.
func (h *harness) untilSquashed(t *testing.T, want string) string {
	t.Helper()
	// As testutil.Screen.Until: a search over every frame under the race
	// detector on a busy machine takes tens of seconds.
	deadline := time.Now().Add(60 * time.Second)
	for {
		scr := h.Sync()
		if strings.Contains(squash(scr), want) {
			return scr
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q:\n%s", want, scr)
		}
		time.Sleep(20 * time.Millisecond) // polling the screen, not asserting time
	}
}

// TestStatusWraps: at 80x24 the status line wraps instead of cutting: a
// read error shows its cause after "frame 100", and a search message or
// the L message, longer than the screen, shows whole.
func TestStatusWraps(t *testing.T) {
	src := crafted.Pingpong(t)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file inside frame 100's data.
	off := 24
	for n := 1; n < 100; n++ {
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	p := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(p, b[:off+16+10], 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	h := run(t, New(ctx, idx, Options{}), 80, 24)
	scr := h.untilSquashed(t, "truncated record: the file ends inside it ? help q quit")
	if !strings.Contains(squash(scr), fmt.Sprintf("frame 100 (file offset %#x): truncated record", off)) {
		t.Errorf("the read error is not whole:\n%s", scr)
	}
	if l := strings.Split(strings.TrimRight(scr, "\n"), "\n"); len(l) != 24 || !strings.Contains(l[23], "q quit") {
		t.Errorf("the status line does not end the screen:\n%s", scr)
	}
	h.Until("[SYN") // the list has its rows
	h.prompt(tcell.KeyCtrlF, 0, "a text that no frame of this capture holds anywhere")
	h.untilSquashed(t, `text "a text that no frame of this capture holds anywhere" is in none of the`)

	// L on a frame of no link group (a declined connection): its whole
	// message.
	h = open(t, "decline-nordma.pcap", 80, 24, Options{})
	h.Until("[SYN")
	h.Key(tcell.KeyRune, 'L')
	h.untilSquashed(t, "belongs to no link group (no SMC-R link or connection on one) decline-nordma.pcap 50 frames ? help q quit")
}

// TestStatusHintCostsNoLine: at 80x24 the keys' hint ends the status
// line where it fits, shortened or left out where it would run the line
// onto a second (a filter's words and the file's fill the first): the
// list keeps its rows.
func TestStatusHintCostsNoLine(t *testing.T) {
	for _, c := range []struct{ filter, hint string }{
		// The status without the hint: the filter's length and 50 to
		// 53 characters ("filter ", ", 6 rows  (16ms)  multilink.pcap
		// 4572 frames", the time 1 to 4 digits); the hints 16 and 8.
		{"smc.llc", "? help  q quit"},
		{"(smc.cdc.seq == 5)", "? help"},
		{"smc.cdc.seq == 5 and roce", ""},
	} {
		h := open(t, "multilink.pcap", 80, 24, Options{Filter: c.filter})
		scr := h.untilSquashed(t, "rows (")
		l := strings.Split(strings.TrimRight(scr, "\n"), "\n")
		last := strings.TrimRight(l[len(l)-1], " ")
		if len(l) != 24 || !strings.HasPrefix(last, "filter "+c.filter) || !strings.Contains(last, "multilink.pcap") {
			t.Errorf("%s: the status line is not one line at the screen's end:\n%s", c.filter, scr)
			continue
		}
		got := ""
		if i := strings.Index(last, "?"); i >= 0 {
			got = last[i:]
		}
		if got != c.hint {
			t.Errorf("%s: the status line ends %q, want the hint %q:\n%s", c.filter, got, c.hint, last)
		}
	}
}

// TestSortShowsColumn: at 80x24, with the wide epoch times, the column
// sorted by scrolls into view instead of staying past the right edge,
// each of its values cut to "…" (issue 33); and two > pressed before the
// first sort is done move two columns, not one.
func TestSortShowsColumn(t *testing.T) {
	h := open(t, "multilink.pcap", 80, 24, Options{})
	h.Until("[SYN]")
	for range 3 {
		h.Key(tcell.KeyRune, 't')
	}
	h.Until("time: epoch")
	// No. → Time → Source, within one turn of the event loop: the first
	// sort cannot be done before the second key.
	done := make(chan struct{})
	h.App.QueueUpdateDraw(func() { h.b.moveSort(1); h.b.moveSort(1); close(done) })
	<-done
	h.Until("sorted by Source")
	for range 3 { // Destination, Protocol, Length
		h.Key(tcell.KeyRune, '>')
	}
	h.Until("sorted by Length ↑")
	lines := h.listLines()
	at := strings.Index(lines[0], "Length ↑")
	if at < 0 {
		t.Fatalf("header %q lacks the sorted column", lines[0])
	}
	end := at + len("Length ↑") - 2 // "↑" is 3 bytes, one cell: the values are right-aligned under it
	for _, l := range lines[1:6] {
		r := []rune(l)
		if len(r) < end || strings.TrimSpace(string(r[at:end])) == "" || strings.ContainsRune(string(r[at:end]), '…') {
			t.Errorf("row %q: no length under %q", l, lines[0])
		}
	}
}

// TestEscAfterApply: esc after A, the focus still on the field tree,
// clears the filter A applied, also when it is pressed before that filter
// is done (a large capture): the filter is dropped, not shown after esc.
func TestEscAfterApply(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		h := open(t, "decline-nordma.pcap", size[0], size[1], Options{})
		h.Until("[SYN")
		h.gotoFrame(t, 7)
		h.selectNode(t, "smc.clc.decline.reason ")
		h.Key(tcell.KeyRune, 'A')
		h.untilSquashed(t, "filter smc.clc.decline.reason == 0x3030002, 1 rows")
		h.Key(tcell.KeyEscape, 0)
		h.untilSquashed(t, "relevant, ")

		// A then esc within one turn of the event loop: the filter
		// cannot be done before esc.
		h.gotoFrame(t, 7)
		h.selectNode(t, "smc.clc.decline.reason ")
		var esc tui.Binding
		for _, k := range h.b.Keys() {
			if k.Key == "esc" {
				esc = k
			}
		}
		state := make(chan string, 1)
		h.App.QueueUpdateDraw(func() {
			h.b.fieldFilter(true)
			esc.Do(tcell.NewEventKey(tcell.KeyEscape, 0, tcell.ModNone))
			state <- fmt.Sprintf("mode %q, pending %v", h.b.mode, h.b.pending != nil)
		})
		if got := <-state; got != `mode "relevant", pending false` {
			t.Errorf("%dx%d: A then esc at once: %s, want the relevant frames and no filter running", size[0], size[1], got)
		}
	}
}

// TestFilterHistoryKept: the filters applied are in the history file, so
// that a browser started again finds them with ↑, the newest first; an
// unwritable file is said on the status line, the filter still applied.
func TestFilterHistoryKept(t *testing.T) {
	hist := filepath.Join(t.TempDir(), "smcscope", "filter-history")
	idx, ctx := openIndexed(t, filepath.Join(testutil.SamplesDir(t), "decline-nordma.pcap"))
	h := run(t, New(ctx, idx, Options{History: hist}), 80, 24)
	h.Until("[SYN")
	for _, f := range []string{"smc.clc", "tcp.flags.syn"} {
		h.prompt(tcell.KeyRune, '/', f)
		h.untilSquashed(t, "filter "+f+", ")
	}

	h = run(t, New(ctx, idx, Options{History: hist}), 80, 24)
	h.Until("[SYN")
	h.Key(tcell.KeyRune, '/')
	for _, want := range []string{"tcp.flags.syn", "smc.clc"} {
		h.Key(tcell.KeyUp, 0)
		if got := h.promptText(); got != want {
			t.Errorf("↑ after a restart: %q, want %q", got, want)
		}
	}
	h.Key(tcell.KeyEscape, 0)

	// A history file that cannot be written: a directory in its place.
	bad := filepath.Join(t.TempDir(), "filter-history")
	if err := os.MkdirAll(filepath.Join(bad, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	h = run(t, New(ctx, idx, Options{History: bad}), 80, 24)
	h.untilSquashed(t, "filter history not read: ")
	h.prompt(tcell.KeyRune, '/', "smc.clc")
	h.untilSquashed(t, "filter smc.clc, ")
	h.untilSquashed(t, "filter history not saved: ")
}

// TestGzipNoTrailer: a gzip capture whose writer was killed after a flush
// (every frame whole, no final block, no trailer) is indexed to its last
// frame, and the status line says that the stream ended early, after
// which frame, at which compressed offset; it said nothing, the cut
// stream taken for a clean end.
func TestGzipNoTrailer(t *testing.T) {
	b, err := os.ReadFile(crafted.Pingpong(t))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(b)
	zw.Flush()
	p := filepath.Join(t.TempDir(), "cut.pcap.gz")
	if err := os.WriteFile(p, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx, err := Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("cut.pcap.gz: gzip stream ended early (no trailer) after frame 4140, at compressed offset %#x", gz.Len())
	h := run(t, New(ctx, idx, Options{}), 80, 24)
	h.untilSquashed(t, want)
	if n, done, err := idx.Progress(); n != 4140 || !done || !errors.Is(err, capture.ErrTruncatedFile) {
		t.Errorf("index: %d frames, done %v, %v", n, done, err)
	}
}

// TestTmuxDefects runs the real smcdump -I in tmux: at 80x24 a read error
// shows whole, its cause after "frame 100" on the status line's next
// line; at 200x50 a nanosecond capture's Time column has nine decimals.
func TestTmuxDefects(t *testing.T) {
	bin := testutil.GoBuild(t, "../../cmd/smcdump", "smcdump")
	b, err := os.ReadFile(crafted.Pingpong(t))
	if err != nil {
		t.Fatal(err)
	}
	off := 24
	for n := 1; n < 100; n++ {
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, b[:off+16+10], 0o644); err != nil {
		t.Fatal(err)
	}
	// Started where the file is and given its name alone: a path as long
	// as some temporary directories' left no room for the help's hint.
	x := testutil.NewTmuxIn(t, dir, 80, 24, bin, "-I", "-r", filepath.Base(cut))
	want := fmt.Sprintf("frame 100 (file offset %#x): truncated record: the file ends inside it ? help q quit", off)
	for deadline := time.Now().Add(20 * time.Second); ; {
		scr := x.Run("capture-pane", "-p")
		if strings.Contains(squash(scr), want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the read error is not whole on the screen:\n%s", scr)
		}
		time.Sleep(20 * time.Millisecond) // polling the pane, not asserting time
	}
	x.Keys("q")

	fs, lt := testutil.ReadFrames(t, crafted.Pingpong(t))
	base := time.Unix(1795336493, 123456789)
	for i := range fs {
		fs[i].CI.Timestamp = base.Add(time.Duration(i))
	}
	ns := filepath.Join(dir, "ns.pcap")
	if err := os.WriteFile(ns, testutil.PcapNanos(t, lt, fs[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	x = testutil.NewTmux(t, 200, 50, bin, "-I", "-r", ns)
	x.WaitFor("[SYN]")
	if scr := x.WaitFor("0.000000005"); !strings.Contains(scr, "  5  0.000000004  ") { // frames 5 and 6, 1 ns apart
		t.Errorf("nanosecond times:\n%s", scr)
	}
	x.Keys("q")
}

// TestANCKFramesAlone: a frame of an ANCK vector, decoded alone as the
// browser does (with its handshake and the frames that taught its queue
// pair or dump header), reads as in smcdump's pass over the whole file:
// the CDC's credits, the write-with-immediate, the dump header's size.
func TestANCKFramesAlone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, v := range crafted.ANCKVectors {
		t.Run(v.Name, func(t *testing.T) {
			p := v.Build(t)
			var all bytes.Buffer
			if err := output.Run(ctx, output.Options{Read: p, All: true, Stdout: &all}); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
			idx, err := Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			waitIndexed(t, idx)
			// The start, the end, and every 37th frame between.
			var ns []int32
			for i := range lines {
				if i < 60 || i >= len(lines)-30 || i%37 == 0 {
					ns = append(ns, int32(i+1))
				}
			}
			for _, n := range ns {
				if err := idx.Decode([]int32{n}, func(_ int32, f *capture.Frame) {
					clc := -1
					if len(f.CLC) > 0 {
						clc = 0 // one message per segment in these captures
					}
					got := strings.TrimSuffix(string(output.AppendLine(nil, f, idx.base, clc)), "\n")
					if want := lines[n-1]; got != want {
						t.Errorf("frame %d alone:\n  %s\nin the whole file:\n  %s", n, got, want)
					}
				}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestPaneRolesUnknown: a connection joined mid-stream, which end is the
// client not on the wire, reads in the conversations pane as in smcdump
// -z smc,conns (rows.Conn.Ends): "A" and "B", not a client and a server.
func TestPaneRolesUnknown(t *testing.T) {
	fs, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	p := testutil.WriteFrames(t, "late.pcap", lt, fs[299:]) // after the handshake and the link's setup
	idx, ctx := openIndexed(t, p)
	h := run(t, New(ctx, idx, Options{}), 160, 40)
	h.Until("RoCE")
	h.Key(tcell.KeyRune, 'c')
	scr := h.Until("conversations")
	if !strings.Contains(scr, "A 10.10.0.1") || !strings.Contains(scr, "B 10.10.0.2") || !strings.Contains(scr, "joined mid-stream") {
		t.Errorf("conversations pane of a connection joined mid-stream:\n%s", scr)
	}
}

// TestPaneNotes: the conversations pane gives a connection's notes as
// smcdump -z smc,conns does (rows.Conn.Notes), after its detail, at the
// top of a short pane (80x24): pingpong.pcap cut to 80 bytes a frame,
// whose link is known only from its first CDC, says the WRITEs before it
// were not counted.
func TestPaneNotes(t *testing.T) {
	fs, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	for i := range fs {
		if len(fs[i].Data) > 80 {
			fs[i].Data = fs[i].Data[:80]
		}
	}
	idx, ctx := openIndexed(t, testutil.WriteFrames(t, "cut.pcap", lt, fs))
	h := run(t, New(ctx, idx, Options{}), 80, 24)
	h.Until("RoCE")
	h.Key(tcell.KeyRune, 'c')
	if scr := h.Until("conversations"); !strings.Contains(squash(scr), "Notes: C>S WRITEs before its link was known not counted") {
		t.Errorf("conversations pane:\n%s", scr)
	}
}

// TestNoSMCFrame: a capture of no SMC frame (pingpong.pcap with 4 bytes
// chopped off each frame's start, editcap -C 4) lists no row: the status
// line says why and how to see the frames; a lists them.
func TestNoSMCFrame(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	for i := range frames {
		frames[i].Data = frames[i].Data[4:]
		frames[i].CI.CaptureLength -= 4
		frames[i].CI.Length -= 4
	}
	idx, ctx := openIndexed(t, testutil.WriteFrames(t, "chopped.pcap", lt, frames))
	h := run(t, New(ctx, idx, Options{}), 120, 24)
	h.Until("relevant, 0 rows  no SMC frame: a lists every frame")
	h.Key(tcell.KeyRune, 'a')
	h.Until(fmt.Sprintf("all, %d rows", len(frames)))
	if strings.Contains(h.Text(), "no SMC frame") {
		t.Errorf("the note stays once every frame is listed:\n%s", h.Text())
	}
}

// TestPaneDeclineCodeCut: decline-nordma.pcap cut to 80 bytes a frame
// keeps the server's Decline's header, not its code: the declines pane
// says who declined whom, as for a whole Decline, its code and name
// absent ("-").
func TestPaneDeclineCodeCut(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), "decline-nordma.pcap"))
	for i := range frames {
		if len(frames[i].Data) > 80 {
			frames[i].Data = frames[i].Data[:80:80]
			frames[i].CI.CaptureLength = 80
		}
	}
	idx, ctx := openIndexed(t, testutil.WriteFrames(t, "cut.pcap", lt, frames))
	h := run(t, New(ctx, idx, Options{}), 200, 24)
	h.Until("CLC Decline")
	h.Key(tcell.KeyRune, 'd')
	scr := squash(h.Until("declines"))
	for _, want := range []string{"server → client after Proposal - - CLC Decline, its code cut by the snap length", "Code: -"} {
		if !strings.Contains(scr, want) {
			t.Errorf("declines pane lacks %q:\n%s", want, scr)
		}
	}
}
