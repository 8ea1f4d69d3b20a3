package browser

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// mouse injects a mouse event at x, y (a click: the press and the
// release); wantMouse then waits for what it does.
func (h *harness) mouse(x, y int, btn tcell.ButtonMask) {
	h.Sim.InjectMouse(x, y, btn, tcell.ModNone)
	if btn == tcell.Button1 {
		h.Sim.InjectMouse(x, y, tcell.ButtonNone, tcell.ModNone)
	}
}

// wantMouse polls, on the UI goroutine, until ok holds (an event's effect:
// tview handles mouse events in no fixed order with the updates a test
// queues), and fails after 10 s.
func (h *harness) wantMouse(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := make(chan bool, 1)
		h.App.QueueUpdate(func() { got <- ok() })
		if <-got {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never happened:\n%s", what, h.Sync())
		}
		time.Sleep(10 * time.Millisecond) // polling for the event's effect
	}
}

// TestMouse: a click on a row of the list selects its frame (the tree and
// hex pane show it), the wheel scrolls the list, a click on the field
// tree focuses it.
func TestMouse(t *testing.T) {
	h := open(t, "pingpong.pcap", 100, 30, Options{})
	h.Until("[SYN]")
	r := h.rect(h.b.listBox)
	h.mouse(r[0]+5, r[1]+2+4, tcell.Button1) // the fifth row under the header
	h.wantMouse(t, "a click on the fifth row selects frame 8", func() bool { return h.b.selected() == 8 && h.b.shown == 8 })
	h.Until("frame 8 ")
	for range 3 {
		h.mouse(r[0]+5, r[1]+5, tcell.WheelDown)
	}
	h.wantMouse(t, "the wheel scrolls the list", func() bool { top, _ := h.b.list.GetOffset(); return top > 0 })
	if first := strings.Fields(h.listLines()[1]); len(first) == 0 || first[0] == "3" {
		t.Errorf("scrolled, the list still shows frame 3 first:\n%s", h.Sync())
	}
	tr := h.rect(h.b.tree)
	h.mouse(tr[0]+3, tr[1]+3, tcell.Button1)
	h.wantMouse(t, "a click on the field tree focuses it", func() bool { return h.App.GetFocus() == h.b.tree })
}

// TestMouseSort: a click on a column's title sorts the list by it, a
// second click the other way.
func TestMouseSort(t *testing.T) {
	h := open(t, "pingpong.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	r := h.rect(h.b.listBox)
	head := h.listLines()[0]
	x := strings.Index(head, "Length")
	h.mouse(r[0]+1+x+2, r[1]+1, tcell.Button1)
	h.Until("sorted by Length ↑")
	h.mouse(r[0]+1+x+2, r[1]+1, tcell.Button1)
	h.Until("sorted by Length ↓")
	x = strings.Index(h.listLines()[0], "Protocol") // the columns before may have widened
	h.mouse(r[0]+1+x, r[1]+1, tcell.Button1)
	h.Until("sorted by Protocol ↑")
}
