package browser

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
)

// span is a byte range of a frame; n == 0 is none.
type span struct{ off, n int }

func spanOf(s capture.Span) span { return span{s.Off, s.N} }

// nodeSpans is what a field-tree node highlights: the field's own bytes
// when it has a fixed place in the frame, else its layer's (a layer
// heading has only the layer's).
type nodeSpans struct{ field, layer span }

func (s *nodeSpans) pick() span {
	if s == nil {
		return span{}
	}
	if s.field.n > 0 {
		return s.field
	}
	return s.layer
}

// hexLayout is one way of laying the hex dump out: bytes a row and
// whether the ASCII column follows them. A row takes cols columns: the
// offset and two spaces, three a byte, one more after the eighth byte of
// sixteen, then a space and a character a byte for the ASCII column.
type hexLayout struct {
	perRow int
	ascii  bool
	cols   int
}

// hexLayouts from the widest down: the pane takes the first that fits, so
// that no highlighted byte is cut off at its right edge.
var hexLayouts = []hexLayout{
	{16, true, 6 + 3*16 + 1 + 1 + 16},
	{8, true, 6 + 3*8 + 1 + 8},
	{8, false, 6 + 3*8},
}

// layoutFor is the widest layout that fits cols columns.
func layoutFor(cols int) hexLayout {
	for _, l := range hexLayouts {
		if cols >= l.cols {
			return l
		}
	}
	return hexLayouts[len(hexLayouts)-1]
}

// hexView is the hex pane: the shown frame's bytes with the selected
// field's or layer's bytes highlighted. It lays the dump out when it is
// drawn, as wide as the pane is, and scrolls the selection into view.
type hexView struct {
	*tview.TextView
	data   []byte
	sel    span
	lay    hexLayout // of the text now set; zero: lay out again
	perRow int       // lay.perRow, for the scroll arithmetic
	reveal bool      // scroll to sel at the next draw
}

func newHexView() *hexView {
	return &hexView{TextView: tview.NewTextView().SetWrap(false).SetDynamicColors(true)}
}

// show puts a new frame in the pane, scrolled to its start.
func (h *hexView) show(data []byte) {
	h.data, h.sel, h.lay, h.reveal = data, span{}, hexLayout{}, false
	h.ScrollToBeginning()
}

// mark highlights sel (nothing when empty).
func (h *hexView) mark(sel span) {
	h.sel, h.lay, h.reveal = sel, hexLayout{}, sel.n > 0
}

// Draw lays the dump out for the pane's width, scrolls the selection into
// view after mark, then draws the text.
func (h *hexView) Draw(screen tcell.Screen) {
	_, _, w, rows := h.GetInnerRect()
	if l := layoutFor(w); l != h.lay {
		h.lay, h.perRow = l, l.perRow
		h.SetText(hexDump(h.data, h.sel, l))
		h.reveal = h.reveal || h.sel.n > 0 // a new width moves the selection
	}
	if h.reveal && rows > 0 {
		h.reveal = false
		// Scroll as little as shows the selection, as the tree does; one
		// taller than the pane shows its start.
		first, last := h.sel.off/h.perRow, (h.sel.off+h.sel.n-1)/h.perRow
		switch top, _ := h.GetScrollOffset(); {
		case first < top || last-first >= rows:
			h.ScrollTo(first, 0)
		case last >= top+rows:
			h.ScrollTo(last-rows+1, 0)
		}
	}
	h.TextView.Draw(screen)
}

// hexDump formats data as output.Hex does (offset, then the bytes of a
// row, an extra space after every eighth, then the ASCII column when the
// layout has it), and marks the bytes of sp, in both columns, with a
// highlight region.
func hexDump(data []byte, sp span, l hexLayout) string {
	const digits = "0123456789abcdef"
	in := func(i int) bool { return sp.n > 0 && i >= sp.off && i < sp.off+sp.n }
	var b strings.Builder
	for off := 0; off < len(data); off += l.perRow {
		for s := 12; s >= 0; s -= 4 {
			b.WriteByte(digits[off>>uint(s)&15])
		}
		b.WriteString("  ")
		for i := off; i < off+l.perRow; i++ {
			switch {
			case i >= len(data):
				b.WriteString("   ")
			case in(i):
				b.WriteString("[black:yellow]")
				b.WriteByte(digits[data[i]>>4])
				b.WriteByte(digits[data[i]&15])
				b.WriteString("[-:-] ")
			default:
				b.WriteByte(digits[data[i]>>4])
				b.WriteByte(digits[data[i]&15])
				b.WriteByte(' ')
			}
			if i%8 == 7 && i != off+l.perRow-1 {
				b.WriteByte(' ')
			}
		}
		if l.ascii {
			b.WriteByte(' ')
			// Runs of bytes alike marked, escaped as a whole: tview reads
			// "[...]" in the text as a colour tag.
			end := min(off+l.perRow, len(data))
			for i := off; i < end; {
				j := i
				for j < end && in(j) == in(i) {
					j++
				}
				run := make([]byte, 0, j-i)
				for _, c := range data[i:j] {
					if c < 0x20 || c > 0x7e {
						c = '.'
					}
					run = append(run, c)
				}
				if in(i) {
					b.WriteString("[black:yellow]" + tview.Escape(string(run)) + "[-:-]")
				} else {
					b.WriteString(tview.Escape(string(run)))
				}
				i = j
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
