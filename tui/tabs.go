package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// tabBar is the line of views above the table, each with the digit that
// shows it ("1:hosts": a key, not a count of hosts). When the views' names do
// not fit the width (smctop's eight on 80 columns), the views not shown
// are named by their first alias ("conns", "sys"), so every view's number
// stays visible; the view shown keeps its full name.
type tabBar struct {
	*tview.Box
	names, short []string
	cur          int
}

func newTabBar(screens []Screen) *tabBar {
	t := &tabBar{Box: tview.NewBox()}
	for _, s := range screens {
		t.names = append(t.names, s.Name())
		short := s.Name()
		if al := s.Aliases(); len(al) > 0 && len(al[0]) < len(short) {
			short = al[0]
		}
		t.short = append(t.short, short)
	}
	return t
}

// text is the bar for a width: full names when they fit, else short ones.
func (t *tabBar) text(width int) string {
	build := func(names []string) (string, int) {
		var b strings.Builder
		n := 0
		for i := range t.names {
			name := names[i]
			if i == t.cur {
				name = t.names[i]
				fmt.Fprintf(&b, "[black:aqua] %d:%s [-:-]", i+1, name)
			} else {
				fmt.Fprintf(&b, " %d:%s ", i+1, name)
			}
			n += len(fmt.Sprint(i+1)) + len(name) + 3
		}
		return b.String(), n
	}
	full, n := build(t.names)
	if n <= width {
		return full
	}
	short, _ := build(t.short)
	return short
}

// Draw writes the bar in the box's width.
func (t *tabBar) Draw(screen tcell.Screen) {
	t.DrawForSubclass(screen, t)
	x, y, w, _ := t.GetInnerRect()
	tview.Print(screen, t.text(w), x, y, w, tview.AlignLeft, tcell.ColorDefault)
}
