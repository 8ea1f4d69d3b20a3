package browser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/track"
)

// The tracker's views as panes: conversations (smc,conns), link groups
// (smc,lgr) and declines (smc,decline). Enter on a row lists its frames
// in the packet list; esc there comes back to the full list.

// paneRow is a row of a pane and the frames enter lists.
type paneRow struct {
	text   string
	frames func() []int32
	mode   string
}

func (b *Browser) paneRows(kind string) []paneRow {
	s := b.idx.Snapshot()
	if s == nil {
		return nil
	}
	var out []paneRow
	switch kind {
	case "conversations":
		for _, r := range s.ConnRows() {
			id := r.ID
			out = append(out, paneRow{
				text: fmt.Sprintf("%4d  %-21s %-21s %-9s lgr %-3s link %-3s CDC %d/%d  bytes %d/%d  %s", r.ID, r.Client, r.Server, r.Outcome,
					idOrDash(r.LGR), idOrDash(r.Link), r.Client2Srv.CDCs, r.Srv2Client.CDCs, r.Client2Srv.Bytes, r.Srv2Client.Bytes, r.Detail),
				frames: func() []int32 { return b.idx.Follow(id) },
				mode:   "follow connection " + strconv.Itoa(id),
			})
		}
	case "linkgroups":
		links := map[int]track.LinkRow{}
		for _, l := range s.LinkRows() {
			links[l.ID] = l
		}
		for _, g := range s.LGRRows() {
			g := g
			var ls []string
			for _, id := range g.Links {
				l := links[id]
				ls = append(ls, fmt.Sprintf("link %d %s QP %s<->%s", l.LinkID, l.State, l.Client.QPN, l.Server.QPN))
			}
			out = append(out, paneRow{
				text:   fmt.Sprintf("%4d  %-10s v%d max %d/%d  conns %v  %s  %s", g.ID, g.State, g.Version, g.MaxLinks, g.MaxConns, g.Conns, strings.Join(ls, "; "), g.DeleteCode),
				frames: func() []int32 { return b.idx.LinkGroup(g.Links, g.Conns) },
				mode:   "link group " + strconv.Itoa(g.ID),
			})
		}
	case "declines":
		for _, d := range s.DeclineView().Fallbacks {
			id := d.ID
			out = append(out, paneRow{
				text:   fmt.Sprintf("%4d  %-21s %-21s %s by %s %s %s %s: %s (frame %d)", d.ID, d.Client, d.Server, d.Cause, d.By, d.Stage, d.Code, d.Name, d.Meaning, d.Frame),
				frames: func() []int32 { return b.idx.Follow(id) },
				mode:   "follow connection " + strconv.Itoa(id),
			})
		}
	}
	return out
}

func idOrDash(id int) string {
	if id == 0 {
		return "-"
	}
	return strconv.Itoa(id)
}

// showPane replaces the packet list by a tracker pane; enter lists the
// selected row's frames.
func (b *Browser) showPane(kind string) {
	rows := b.paneRows(kind)
	t := tview.NewTable().SetSelectable(true, false)
	t.SetBorder(true).SetTitle(" " + strings.Replace(kind, "linkgroups", "link groups", 1) + " (enter: its frames, esc: back) ")
	if len(rows) == 0 {
		t.SetCell(0, 0, tview.NewTableCell("none (or the index is still being built)").SetSelectable(false))
	}
	for i, r := range rows {
		t.SetCell(i, 0, tview.NewTableCell(tview.Escape(r.text)))
	}
	t.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyEnter:
			row, _ := t.GetSelection()
			if row >= 0 && row < len(rows) {
				b.App.Pages.RemovePage("pane")
				b.setList(rows[row].frames(), rows[row].mode, 0)
				b.App.SetFocus(b.list)
			}
			return nil
		case tcell.KeyEscape:
			b.App.Pages.RemovePage("pane")
			b.App.SetFocus(b.list)
			return nil
		}
		if ev.Rune() == 'q' {
			b.App.Stop()
			return nil
		}
		return ev
	})
	b.App.Pages.AddPage("pane", t, true, true)
	b.App.SetFocus(t)
}
