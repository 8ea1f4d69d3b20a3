package browser

import (
	"slices"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// The screen from top to bottom: the packet list, the field tree beside
// the hex pane, the hint lines (a filter's error, completions), the
// prompt, the status line. z zooms the focused pane to the whole screen,
// + and - move the split between the list and the panes under it, x
// hides the hex pane.

// Split bounds: the list's share of the height, in tenths.
const (
	minSplit     = 1
	maxSplit     = 9
	defaultSplit = 6 // 3:2, as before: the list keeps most of an 80x24 screen
)

// layout places the panes as the zoom, split, hex pane and prompt say.
func (b *Browser) layout() {
	b.body.Clear()
	b.lower.Clear()
	b.lower.AddItem(b.tree, 0, 1, false)
	if !b.hexHidden {
		b.lower.AddItem(b.hex, hexWidth(b.lower.width), 0, false)
	}
	switch b.zoomed {
	case nil:
		b.body.AddItem(b.listBox, 0, b.split, true)
		b.body.AddItem(b.lower, 0, maxSplit+1-b.split, false)
	default:
		b.body.AddItem(b.zoomed, 0, 1, true)
	}
	if b.hintLines > 0 {
		b.body.AddItem(b.hint, b.hintLines, 0, false)
	}
	if b.promptKind != promptNone {
		b.body.AddItem(b.prompt, 1, 0, true)
	}
	b.body.AddItem(b.status, b.statusLines, 0, false)
}

// zoom shows the focused pane (list, tree or hex) alone, or all panes
// again.
func (b *Browser) zoom() {
	if b.zoomed != nil {
		b.zoomed = nil
	} else {
		switch f := b.App.GetFocus(); f {
		case b.tree:
			b.zoomed = b.tree
		case b.hex:
			b.zoomed = b.hex
		default:
			b.zoomed = b.listBox
		}
	}
	b.layout()
}

// nextPane moves the focus to the next pane shown: list, field tree, hex
// pane; with a pane zoomed, the next one is zoomed instead.
func (b *Browser) nextPane() {
	panes := []tview.Primitive{b.list, b.tree}
	if !b.hexHidden {
		panes = append(panes, b.hex)
	}
	i := slices.Index(panes, b.App.GetFocus())
	next := panes[(i+1)%len(panes)]
	if b.zoomed != nil {
		b.zoomed = next
		if next == b.list {
			b.zoomed = b.listBox
		}
		b.layout()
	}
	b.App.SetFocus(next)
}

// resize moves the split between the list and the panes under it.
func (b *Browser) resize(by int) {
	b.split = min(max(b.split+by, minSplit), maxSplit)
	b.layout()
}

// toggleHex hides or shows the hex pane; hidden, it gives the field tree
// the whole width. Focus on it moves to the tree.
func (b *Browser) toggleHex() {
	b.hexHidden = !b.hexHidden
	if b.zoomed == b.hex {
		b.zoomed = nil
	}
	if b.hexHidden && b.App.GetFocus() == b.hex {
		b.App.SetFocus(b.tree)
	}
	b.layout()
}

// hexWidth is the width the hex pane takes from a row of panes w wide:
// what its dump needs (hexCols, plus the border), the field tree keeping
// at least 60 columns for the wider layouts.
func hexWidth(w int) int {
	for _, l := range hexLayouts {
		if w >= l.cols+2+60 {
			return l.cols + 2
		}
	}
	return hexLayouts[len(hexLayouts)-1].cols + 2
}

// lowerPanes is the row of the field tree and the hex pane; it sizes the
// hex pane to its dump's width when it learns its own.
type lowerPanes struct {
	*tview.Flex
	b     *Browser
	width int
}

func (l *lowerPanes) Draw(screen tcell.Screen) {
	_, _, w, _ := l.GetRect()
	if w != l.width {
		l.width = w
		if !l.b.hexHidden {
			l.ResizeItem(l.b.hex, hexWidth(w), 0)
		}
	}
	l.Flex.Draw(screen)
}
