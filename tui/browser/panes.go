package browser

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// The tracker's views as panes: conversations (smc,conns), link groups
// (smc,lgr) and declines (smc,decline), each a table under column headers
// (←/→ scroll its columns) over the selected row's detail, every column
// whole and wrapped, so that a decline's meaning reads on 80 columns.
// Directions are spelled out: C→S is client to server. Enter on a row
// lists its frames in the packet list; esc comes back.

// pane is one tracker view's table.
type pane struct {
	title   string
	headers []string
	// lead names the columns the detail shows first: the free text (a
	// connection's detail and notes, a finding's, a decline's meaning)
	// that a narrow table cuts and a short pane would leave below its
	// bottom.
	lead []string
	rows []paneRow
}

// paneRow is a row of a pane, the frames enter lists and the detail
// lines under the table.
type paneRow struct {
	cells  []string
	detail []string // extra lines after the cells' "header: value" lines
	frames func() []int32
	mode   string
	jump   int32 // enter goes to this frame instead of listing frames
}

func (b *Browser) pane(kind string) pane {
	s := b.idx.Snapshot()
	switch kind {
	case "conversations":
		p := pane{title: "conversations", headers: []string{"ID", "Client", "Server", "Outcome", "LGR", "Link", "CDCs C→S", "CDCs S→C", "Bytes C→S", "Bytes S→C", "Notes", "Detail"}, lead: []string{"Detail", "Notes"}}
		if s == nil {
			return p
		}
		for _, r := range rows.ConnRows(s) {
			id := r.ID
			c2s, s2c := &r.Client2Srv, &r.Srv2Client
			client, server := r.Ends()
			p.rows = append(p.rows, paneRow{
				cells: []string{strconv.Itoa(r.ID), client, server, r.Outcome, rows.Known(r.LGR), rows.LinkName(r.Link),
					rows.FlowCount(c2s, c2s.CDCs), rows.FlowCount(s2c, s2c.CDCs), rows.ByteCount(c2s), rows.ByteCount(s2c), rows.Dash(r.Notes()), r.Detail},
				frames: func() []int32 { return b.idx.Follow(id) },
				mode:   "follow connection " + strconv.Itoa(id),
			})
		}
		return p
	case "linkgroups":
		p := pane{title: "link groups", headers: []string{"ID", "State", "Version", "Max links", "Max conns", "Conns", "Links: state, QP of client ⇄ server", "Deleted"}}
		if s == nil {
			return p
		}
		for _, g := range rows.LGRRows(s) {
			var ls, conns []string
			for _, l := range g.LinkRows {
				ls = append(ls, fmt.Sprintf("link %s %s QP %s ⇄ %s", rows.LinkName(l.LinkID), l.State, rows.Dash(l.Client.QPN), rows.Dash(l.Server.QPN)))
			}
			for _, c := range g.Conns {
				conns = append(conns, strconv.Itoa(c))
			}
			p.rows = append(p.rows, paneRow{
				cells: []string{strconv.Itoa(g.ID), g.State, rows.VersionName(g.Version), rows.Known(g.MaxLinks),
					rows.Known(g.MaxConns), strings.Join(conns, ","), strings.Join(ls, "; "), g.Deletion()},
				detail: g.History,
				frames: func() []int32 { return b.idx.LinkGroup(g.Links, g.Conns) },
				mode:   "link group " + strconv.Itoa(g.ID),
			})
		}
		return p
	}
	if kind == "expert" {
		return b.expertPane(s)
	}
	p := pane{title: "declines", headers: []string{"ID", "Client", "Server", "Declined", "Stage", "Code", "Name", "Meaning", "Frame"}, lead: []string{"Meaning"}}
	if s == nil {
		return p
	}
	for _, d := range rows.Declines(s).Fallbacks {
		id := d.ID
		// Who declined whom: the Decline went from its sender to the
		// other side.
		by := "client → server"
		if d.Facts.By == track.DirS2C {
			by = "server → client"
		}
		if c := d.Facts.Cause; c != track.CauseDecline && c != track.CauseDeclineCut {
			by = d.Cause // no Decline: the SYN-ACK lacked the option, or no CLC
		}
		p.rows = append(p.rows, paneRow{
			cells:  []string{strconv.Itoa(d.ID), d.Client, d.Server, by, d.Stage, rows.Dash(d.Code), rows.Dash(d.Name), d.Meaning, strconv.Itoa(d.Frame)},
			frames: func() []int32 { return b.idx.Follow(id) },
			mode:   "follow connection " + strconv.Itoa(id),
		})
	}
	return p
}

// expertPane lists the capture's expert findings, the most severe first,
// one row per finding and object (smcdump -z smc,expert's), with what it
// means and what to check in the detail; enter goes to its first frame.
func (b *Browser) expertPane(s *track.Snapshot) pane {
	p := pane{title: "expert", headers: []string{"Severity", "Finding", "Object", "Frames", "First", "Last", "Detail"}, lead: []string{"Detail"}}
	if s == nil {
		return p
	}
	links := map[int]*track.Link{}
	for i := range s.Links {
		links[s.Links[i].ID] = &s.Links[i]
	}
	for _, f := range s.Findings() {
		d := f.ID.Def()
		obj := f.Object.String()
		switch l := links[f.ObjectID]; {
		case f.Object == expert.ObjectLink && l != nil:
			// By the kernel's number, as every text names a link.
			obj = fmt.Sprintf("link %s of link group %d", rows.LinkName(l.LinkID), l.LGR)
		case f.ObjectID != 0:
			obj += " " + strconv.Itoa(f.ObjectID)
		}
		p.rows = append(p.rows, paneRow{
			cells:  []string{d.Severity.String(), d.Name, obj, strconv.Itoa(f.Count), strconv.Itoa(f.First), strconv.Itoa(f.Last), f.Detail},
			detail: []string{"Meaning: " + d.Meaning, "Check: " + f.CheckText()},
			jump:   int32(f.First),
		})
	}
	return p
}

// showPane replaces the panes by a tracker pane: its table over the
// selected row's detail; enter lists the row's frames.
func (b *Browser) showPane(kind string) {
	p := b.pane(kind)
	t := tview.NewTable().SetSelectable(true, false).SetFixed(1, 1)
	enter := "its frames"
	if kind == "expert" {
		enter = "go to its first frame"
	}
	t.SetBorder(true).SetTitle(" " + p.title + " (enter: " + enter + ", ←/→: columns, esc: back) ")
	for c, h := range p.headers {
		t.SetCell(0, c, tview.NewTableCell(tview.Escape(h)).SetSelectable(false).
			SetAttributes(tcell.AttrBold|tcell.AttrUnderline))
	}
	if len(p.rows) == 0 {
		t.SetCell(1, 0, tview.NewTableCell("none (or the index is still being built)").SetSelectable(false))
	}
	for i, r := range p.rows {
		for c, v := range r.cells {
			cell := tview.NewTableCell(tview.Escape(v)).SetMaxWidth(48)
			if c == len(r.cells)-1 {
				cell.SetMaxWidth(0) // the last column runs on: ←/→ reach its end
			}
			t.SetCell(i+1, c, cell)
		}
	}
	detail := tview.NewTextView().SetWrap(true).SetDynamicColors(false)
	detail.SetBorder(true).SetTitle(" detail ")
	show := func(row int) {
		i := row - 1
		if i < 0 || i >= len(p.rows) {
			detail.SetText("")
			return
		}
		var d strings.Builder
		for _, h := range p.lead {
			if c := slices.Index(p.headers, h); c >= 0 {
				fmt.Fprintf(&d, "%s: %s\n", h, p.rows[i].cells[c])
			}
		}
		for c, h := range p.headers {
			if !slices.Contains(p.lead, h) {
				fmt.Fprintf(&d, "%s: %s\n", h, p.rows[i].cells[c])
			}
		}
		for _, l := range p.rows[i].detail {
			d.WriteString(l + "\n")
		}
		detail.SetText(d.String()).ScrollToBeginning()
	}
	t.SetSelectionChangedFunc(func(row, _ int) { show(row) })
	t.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyEnter:
			row, _ := t.GetSelection()
			if i := row - 1; i >= 0 && i < len(p.rows) {
				b.App.Pages.RemovePage("pane")
				if n := p.rows[i].jump; n > 0 {
					b.gotoFrame(strconv.Itoa(int(n)))
				} else {
					b.setList(listOf(p.rows[i].frames()), p.rows[i].mode, 0)
				}
				b.App.SetFocus(b.list)
			}
			return nil
		case tcell.KeyEscape:
			b.App.Pages.RemovePage("pane")
			b.App.SetFocus(b.list)
			return nil
		case tcell.KeyPgDn, tcell.KeyPgUp:
			r, c := detail.GetScrollOffset()
			detail.ScrollTo(max(0, r+map[bool]int{true: 5, false: -5}[ev.Key() == tcell.KeyPgDn]), c)
			return nil
		}
		if ev.Rune() == 'q' {
			b.App.Stop()
			return nil
		}
		return ev
	})
	t.Select(1, 0)
	show(1)
	box := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(t, 0, 1, true).
		AddItem(detail, 0, 1, false)
	b.App.Pages.AddPage("pane", box, true, true)
	b.App.SetFocus(t)
}
