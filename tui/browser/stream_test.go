package browser

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
)

// TestStreamText: the stream pane's text of an HTTP exchange over SMC-R
// holds the request in the client's color and the response in the
// server's, in that order; a connection without bytes says so.
func TestStreamText(t *testing.T) {
	text, ok, err := streamText(context.Background(), crafted.HTTP(t), 0, 1)
	if err != nil || !ok {
		t.Fatalf("streamText: ok %v, %v", ok, err)
	}
	req := strings.Index(text, "[red]GET /smc HTTP/1.1\nHost: smc\n")
	resp := strings.Index(text, "[blue]HTTP/1.1 200 OK\n")
	if req < 0 || resp < req || !strings.HasPrefix(text, "connection 1: [red]10.10.0.2:") {
		t.Errorf("stream pane text:\n%.400s", text)
	}
	if _, ok, err := streamText(context.Background(), filepath.Join(testutil.SamplesDir(t), "fallback-nosmc.pcap"), 0, 1); ok || err != nil {
		t.Errorf("a fallback connection: ok %v, %v; want no SMC-R bytes", ok, err)
	}
}

// TestStreamTextHeldAtEnd: a capture whose frames come twice, each cut
// to 80 bytes 20 us before it whole, ended right after a CDC's cut copy
// (which the tracker holds for its packet, and follows at the end of the
// capture): the pane shows the bytes of the capture without copies.
func TestStreamTextHeldAtEnd(t *testing.T) {
	frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), "testdata/anck/handshake-credits.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	const end = 32 // the third CDC the last
	doubled := mutate.CutCopiesFirst(frames[:end], 80)
	dir := t.TempDir()
	once, twice := filepath.Join(dir, "once.pcap"), filepath.Join(dir, "twice.pcap")
	if err := mutate.WriteFile(once, lt, frames[:end]); err != nil {
		t.Fatal(err)
	}
	if err := mutate.WriteFile(twice, lt, doubled[:len(doubled)-1]); err != nil {
		t.Fatal(err)
	}
	want, _, err := streamText(context.Background(), once, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := streamText(context.Background(), twice, 0, 1)
	if err != nil || got != want || !strings.Contains(want, "(88 B and 64 B;") {
		t.Errorf("the capture twice, ended at a held copy: %v\n%.300s\nthe capture once:\n%.300s", err, got, want)
	}
}

// TestStreamPane: S on a frame of a connection opens its bytes; esc
// comes back to the list; S on a fallback says it has none over SMC-R.
func TestStreamPane(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {200, 50}} {
		h := open(t, "pingpong.pcap", size[0], size[1], Options{})
		h.Until("[SYN]")
		h.Key(tcell.KeyRune, 'f')
		h.Until("S: its bytes")
		h.Key(tcell.KeyRune, 'S')
		scr := h.Until("bytes of connection 1")
		if !strings.Contains(scr, "connection 1:") {
			scr = h.Until("connection 1:")
		}
		if !strings.Contains(scr, "!\"#$%&'()*+,-./0123456789:;<=>?") {
			t.Errorf("%dx%d: stream pane:\n%s", size[0], size[1], scr)
		}
		h.Key(tcell.KeyEscape, 0)
		h.Until("follow connection 1")
	}
	h := open(t, "fallback-nosmc.pcap", 120, 30, Options{})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 'S')
	h.Until("no application bytes over SMC-R")
}

// TestTmuxStream: smcdump -I in a real terminal at 80x24 and 200x50, as a
// new user would: follow a connection, S for its bytes, esc back.
func TestTmuxStream(t *testing.T) {
	bin := testutil.GoBuild(t, "../../cmd/smcdump", "smcdump")
	path := filepath.Join(testutil.SamplesDir(t), "multiconn.pcap")
	x := testutil.NewTmux(t, 80, 24, bin, "-I", "-r", path)
	for i, size := range [][2]int{{80, 24}, {200, 50}} {
		if i > 0 {
			x = testutil.NewTmuxConfig(t, x.Config, size[0], size[1], bin, "-I", "-r", path)
		}
		x.WaitFor("[SYN]")
		x.Keys(":")
		x.Keys("-l", "40")
		x.Keys("Enter")
		x.Keys("f")
		x.WaitFor("S: its bytes")
		x.Keys("S")
		if scr := x.WaitFor("0123456789:;<=>?"); !strings.Contains(scr, "bytes of connection 1") {
			t.Errorf("%dx%d: stream pane:\n%s", size[0], size[1], scr)
		}
		x.Keys("Escape")
		x.WaitFor("follow connection 1")
		x.Keys("q")
	}
}
