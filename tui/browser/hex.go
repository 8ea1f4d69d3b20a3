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

// Rows of the hex dump: 16 bytes need 55 columns (offset, two spaces, 16
// bytes of three, one more space after the eighth), more than half an
// 80-column terminal gives the pane; there it shows 8 a row, so that no
// highlighted byte is cut off at the right edge.
const (
	wideRow   = 16
	narrowRow = 8
	wideCols  = 6 + 3*wideRow + 1
)

func rowBytes(cols int) int {
	if cols >= wideCols {
		return wideRow
	}
	return narrowRow
}

// hexView is the hex pane: the shown frame's bytes with the selected
// field's or layer's bytes highlighted. It lays the dump out when it is
// drawn, as wide as the pane is, and scrolls the selection into view.
type hexView struct {
	*tview.TextView
	data   []byte
	sel    span
	perRow int  // bytes per row of the text now set; 0: lay out again
	reveal bool // scroll to sel at the next draw
}

func newHexView() *hexView {
	return &hexView{TextView: tview.NewTextView().SetWrap(false).SetDynamicColors(true)}
}

// show puts a new frame in the pane, scrolled to its start.
func (h *hexView) show(data []byte) {
	h.data, h.sel, h.perRow, h.reveal = data, span{}, 0, false
	h.ScrollToBeginning()
}

// mark highlights sel (nothing when empty).
func (h *hexView) mark(sel span) {
	h.sel, h.perRow, h.reveal = sel, 0, sel.n > 0
}

// Draw lays the dump out for the pane's width, scrolls the selection into
// view after mark, then draws the text.
func (h *hexView) Draw(screen tcell.Screen) {
	_, _, w, rows := h.GetInnerRect()
	if per := rowBytes(w); per != h.perRow {
		h.perRow = per
		h.SetText(hexDump(h.data, h.sel, per))
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

// hexDump formats data as output.Hex does (offset, then perRow bytes,
// an extra space after every eighth) without the ASCII column, and marks
// the bytes of sp with a highlight region.
func hexDump(data []byte, sp span, perRow int) string {
	const digits = "0123456789abcdef"
	in := func(i int) bool { return sp.n > 0 && i >= sp.off && i < sp.off+sp.n }
	var b strings.Builder
	for off := 0; off < len(data); off += perRow {
		for s := 12; s >= 0; s -= 4 {
			b.WriteByte(digits[off>>uint(s)&15])
		}
		b.WriteString("  ")
		for i := off; i < off+perRow; i++ {
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
			if i%8 == 7 && i != off+perRow-1 {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
