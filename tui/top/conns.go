package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/render"
	"github.com/smcscope/smcscope/tui/widget"
)

type conns struct {
	t  *widget.Table
	by map[string]monitor.ConnRow
}

func newConns() *conns {
	return &conns{t: widget.NewTable("KEY", "MODE", "STATE", "LOCAL", "PEER", "PROCESS", "LGR", "LINK", "DEV", "RX/s", "TX/s", "REASON")}
}

func (c *conns) Name() string         { return "connections" }
func (c *conns) Table() *widget.Table { return c.t }

func (c *conns) update(s *monitor.Snapshot) {
	c.by = map[string]monitor.ConnRow{}
	for _, r := range s.Conns {
		c.by[r.Key] = r
	}
	c.t.SetRows(connRows(s))
}

// connRows is the connections screen's model.
func connRows(s *monitor.Snapshot) []widget.Row {
	rows := make([]widget.Row, 0, len(s.Conns))
	for _, r := range s.Conns {
		row := widget.Row{Key: r.Key, Cells: []string{
			r.Key, string(r.Mode), string(r.State), render.Endpoint(r.Src, r.AddrHidden), render.Endpoint(r.Dst, r.AddrHidden),
			render.Process(r.PID, r.Comm), r.LGRID.String(), render.NumOrDash(int(r.LinkID)), render.Device(r.IBDev, r.IBPort),
			bytesRate(r.RxRate), bytesRate(r.TxRate), render.ConnReason(r),
		}}
		switch {
		case r.State == monitor.StateClosed:
			row.Color = tcell.ColorGray
		case r.Mode.SMC():
			row.Color = tcell.ColorGreen
		case r.Mode == monitor.ModeFallback || r.Mode == monitor.ModeFailed:
			row.Color = tcell.ColorRed
		case r.Mode == monitor.ModePending:
			row.Color = tcell.ColorYellow
		}
		rows = append(rows, row)
	}
	return rows
}

func (c *conns) Detail(key string) string {
	r, ok := c.by[key]
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s  %s -> %s  proto %s family %d inode %d cookie %#x\n", r.Key, r.Mode, r.State, r.Src, r.Dst, render.Dash(r.Proto), r.Family, r.Inode, r.Cookie)
	if r.AddrHidden {
		b.WriteString("IPPROTO_SMC socket: sock_diag reports its addresses as zero, only the ports; joined by inode\n")
	}
	fmt.Fprintf(&b, "process %s  role %s  link group %s link %s on %s gid %s peer %s\n", render.Process(r.PID, r.Comm), render.Dash(string(r.Role)), r.LGRID, render.NumOrDash(int(r.LinkID)), render.Device(r.IBDev, r.IBPort), render.Dash(r.GID), render.Dash(r.PeerGID))
	fmt.Fprintf(&b, "token %#x  sndbuf %d  RMBE %d  peer RMBE %d  rx %d B (%s)  tx %d B (%s)\n", r.Token, r.SndBuf, r.RMBE, r.PeerRMBE, r.RxBytes, bytesRate(r.RxRate), r.TxBytes, bytesRate(r.TxRate))
	if r.Fallback.Code != 0 {
		fmt.Fprintf(&b, "fallback %#08x %s: %s\n", r.Fallback.Code, r.Fallback.Name, r.Fallback.Meaning)
	}
	if r.PeerDiagnosis.Code != 0 {
		fmt.Fprintf(&b, "peer diagnosis %#08x %s: %s\n", r.PeerDiagnosis.Code, r.PeerDiagnosis.Name, r.PeerDiagnosis.Meaning)
	}
	if r.Detail != "" {
		b.WriteString(r.Detail + "\n")
	}
	return b.String()
}

func (c *conns) Drill(key string) (string, string, bool) {
	r, ok := c.by[key]
	if !ok || r.LGRKey == "" {
		return "", "", false
	}
	return "linkgroups", r.LGRKey, true
}

// bytesRate prints bytes per second with a binary prefix.
func bytesRate(v float64) string {
	switch {
	case v >= 1<<30:
		return fmt.Sprintf("%.1fGiB/s", v/(1<<30))
	case v >= 1<<20:
		return fmt.Sprintf("%.1fMiB/s", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fKiB/s", v/(1<<10))
	}
	return fmt.Sprintf("%.0fB/s", v)
}
