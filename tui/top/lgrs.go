package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/render"
	"github.com/smcscope/smcscope/tui/widget"
)

type lgrs struct {
	t  *widget.Table
	by map[string]monitor.LinkGroupRow
}

func newLGRs() *lgrs {
	return &lgrs{t: widget.NewTable("ID", "KIND", "ROLE", "TYPE/STATE", "CONNS", "LINKS", "DEVICES", "PEER", "V", "MAX L/C", "BUFFERS", "REDUNDANCY")}
}

func (l *lgrs) Name() string         { return "linkgroups" }
func (l *lgrs) Table() *widget.Table { return l.t }

func (l *lgrs) update(s *monitor.Snapshot) {
	l.by = map[string]monitor.LinkGroupRow{}
	for _, g := range s.LinkGroups {
		l.by[g.Key] = g
	}
	l.t.SetRows(lgrRows(s))
}

// lgrRows is the link-group screen's model: one row per group, its links
// (all of them, unlike smcss -R) in the devices and detail columns.
func lgrRows(s *monitor.Snapshot) []widget.Row {
	rows := make([]widget.Row, 0, len(s.LinkGroups))
	for _, g := range s.LinkGroups {
		active := 0
		var devs []string
		for _, k := range g.Links {
			if k.Active {
				active++
			}
			where := render.Device(k.IBDev, k.IBPort)
			if k.IBDev == "" && k.QPN != 0 {
				where = fmt.Sprintf("qp%#x", k.QPN) // a wire row: the QP is what the capture knows
			}
			devs = append(devs, fmt.Sprintf("%d:%s", k.ID, where))
		}
		red := "yes"
		color := tcell.ColorGreen
		if !g.Redundant {
			red, color = "no-redundancy", tcell.ColorYellow
		}
		if g.Deleted {
			color = tcell.ColorGray
		}
		rows = append(rows, widget.Row{Key: g.Key, Color: color, Cells: []string{
			g.ID.String(), string(g.Kind), render.Dash(string(g.Role)), render.GroupState(g), fmt.Sprint(g.Conns),
			fmt.Sprintf("%d/%d", active, len(g.Links)), strings.Join(devs, " "),
			render.Dash(strings.TrimSpace(g.PeerHost + " " + g.PeerOS)), render.Version(g.Version, g.Release),
			fmt.Sprintf("%d/%d", g.MaxLinks, g.MaxConns), fmt.Sprintf("%d/%d", g.SndBufAlloc, g.RMBAlloc), red,
		}})
	}
	return rows
}

func (l *lgrs) Detail(key string) string {
	g, ok := l.by[key]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s link group %s (%s)  role %s type %s  pnetid %s vlan %d  conns %d\n", g.Kind, g.ID, g.Source, render.Dash(string(g.Role)), render.GroupState(g), render.Dash(g.PNETID), g.VLANID, g.Conns)
	fmt.Fprintf(&b, "SMC %s  peer %s OS %s  EID %q  v2.1 limits: max links %d, max conns %d  direct %v\n", render.Version(g.Version, g.Release), render.Dash(g.PeerHost), render.Dash(g.PeerOS), g.EID, g.MaxLinks, g.MaxConns, g.Direct)
	fmt.Fprintf(&b, "buffers: send %d B, RMB %d B\n", g.SndBufAlloc, g.RMBAlloc)
	if g.Deleted {
		fmt.Fprintf(&b, "deleted: %s\n", render.ReasonOrDash(g.DeleteReason))
	}
	for _, k := range g.Links {
		fmt.Fprintf(&b, "link %d %s  %s netdev %s  uid %08x peer %08x  conns %d  gid %s peer %s %s\n", k.ID, k.State, render.Device(k.IBDev, k.IBPort), render.Dash(k.NetDev), k.UID, k.PeerUID, k.Conns, render.Dash(k.GID), render.Dash(k.PeerGID), render.LinkWire(k))
	}
	for _, h := range g.History {
		fmt.Fprintf(&b, "  %s frame %d: %s\n", h.Time.UTC().Format("15:04:05.000000"), h.Frame, h.Text)
	}
	return b.String()
}

func (l *lgrs) Drill(key string) (string, string, bool) {
	g, ok := l.by[key]
	if !ok {
		return "", "", false
	}
	for _, k := range g.Links {
		if k.IBDev != "" {
			return "devices", k.IBDev, true
		}
	}
	return "connections", g.Key, true
}
