package top

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

var connColumns = []tui.Column{
	col("KEY", "the row: inode:N (sock_diag inode), cookie:N (socket cookie) or wire:N (the capture's connection N)"),
	col("MODE", "SMC-R, SMC-D, fallback (TCP after an SMC attempt), pending (handshake or first link not done), failed, listen"),
	col("STATE", "socket state by kernel name (ACTIVE, INIT, APPCLOSEWAIT1, ...), then its shutdown when not open (smcss's R-> receiving shut, <-W sending shut, R-W both); the wire says INIT, ACTIVE, CLOSED"),
	col("LOCAL", "local address:port; *:PORT for IPPROTO_SMC, whose addresses sock_diag hides, and for a listener on all addresses whose family (0.0.0.0 or [::]) cannot be told. A capture is seen from the client"),
	col("PEER", "peer address:port"),
	col("PROCESS", "owning process comm/pid (needs root to read other users' /proc/PID/fd)"),
	col("LGR", "link group ID as the kernel numbers it (0x100); enter opens it"),
	col("LINK", "link number of the socket's link in its group"),
	col("DEV", "RDMA device/port of that link; for SMC-D its DIBS device (lo: the loopback)"),
	col("RX", "bytes received over SMC since the connection began (the producer cursor of its RMBE)"),
	col("TX", "bytes sent over SMC since the connection began"),
	col("RX/s", "receive rate over the last refresh (capture time for a replay), B/KiB/MiB/GiB per second"),
	col("TX/s", "send rate over the last refresh"),
	col("REASON", "local fallback reason and the peer's diagnosis by kernel name (SMC_CLC_DECL_*)"),
}

func newConns() *list[monitor.Snapshot, monitor.ConnRow] {
	return newList("connections", []string{"conns", "sockets"}, connColumns, connRows, connDetail, connDrill)
}

// known is s, a count or rate of a connection's direction, or "-" when
// the capture does not hold it (RxUnknown, TxUnknown): unknown, not zero.
func known(unknown bool, s string) string {
	if unknown {
		return "-"
	}
	return s
}

// connRows is the connections screen's model.
func connRows(s *monitor.Snapshot) []entry[monitor.ConnRow] {
	out := make([]entry[monitor.ConnRow], 0, len(s.Conns))
	for _, r := range s.Conns {
		l := r.Link()
		row := entryRow(r.Key,
			[]string{r.Key, string(r.Mode), connState(r), localEnd(r), endpoint(r.Dst, r.AddrHidden),
				process(r.PID, r.Comm), r.LGRName(), numOrDash(int(l.LinkID)), connDevice(r),
				known(r.RxUnknown, bytesText(float64(r.RxBytes))), known(r.TxUnknown, bytesText(float64(r.TxBytes))),
				known(r.RxUnknown || r.RateUnknown, bytesRate(r.RxRate)), known(r.TxUnknown || r.RateUnknown, bytesRate(r.TxRate)), connReason(r)},
			[]any{nil, nil, nil, nil, nil, nil, uint32(l.LGRID), l.LinkID, nil, r.RxBytes, r.TxBytes, r.RxRate, r.TxRate})
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
		out = append(out, entry[monitor.ConnRow]{r, row})
	}
	return out
}

// connDetail is a connection's story: what it is, why it fell back and
// what deserves a look, where it runs, what it moved, and its history
// (the wire's handshake steps and every event about it).
func connDetail(r monitor.ConnRow, s *monitor.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s  %s -> %s", r.Key, r.Mode, r.State, localEnd(r), endpoint(r.Dst, r.AddrHidden))
	if r.Source == monitor.SourceKernel {
		fmt.Fprintf(&b, "  proto %s family %d inode %d cookie %#x  process %s", dash(r.Proto), r.Family, r.Inode, r.Cookie, process(r.PID, r.Comm))
	} else if r.Link().Role == "" {
		b.WriteString("  (seen on the wire, client and server unknown)")
	} else {
		b.WriteString("  (seen on the wire, from the client)")
	}
	b.WriteString("\n")
	if r.AddrHidden {
		b.WriteString("IPPROTO_SMC socket: sock_diag reports its addresses as zero, only the ports; joined by inode\n")
	}
	if r.FamilyUnknown {
		b.WriteString("listener on all addresses: sock_diag reports zeros for 0.0.0.0 and [::] alike, and /proc/net/tcp, tcp6 did not tell which (unread, or both list the port)\n")
	}
	// Why it fell back, how it went and what deserves a look come
	// first: a short pane (80x24) shows them before the addresses.
	d := r.Details()
	if d.Fallback.Code != 0 {
		fmt.Fprintf(&b, "fallback %#08x %s: %s\n", d.Fallback.Code, d.Fallback.Name, d.Fallback.Meaning)
	}
	if d.PeerDiagnosis.Code != 0 {
		fmt.Fprintf(&b, "peer diagnosis %#08x %s: %s\n", d.PeerDiagnosis.Code, d.PeerDiagnosis.Name, d.PeerDiagnosis.Meaning)
	}
	if d.Detail != "" {
		b.WriteString(d.Detail + "\n")
	}
	if d.Notes != "" {
		b.WriteString("notes: " + d.Notes + "\n")
	}
	if r.Source == monitor.SourceKernel {
		uid := "-"
		if r.UID != nil {
			uid = fmt.Sprint(*r.UID)
		}
		fmt.Fprintf(&b, "shutdown %s  state %s since %s  uid %s  bound to ifindex %s\n", dash(r.Shutdown), r.State, sinceText(r.StateSince, s.Time), uid, numOrDash(int(r.IfIndex)))
	}
	l := r.Link()
	fmt.Fprintf(&b, "role %s  link group %s link %s on %s gid %s peer %s\n", dash(string(l.Role)), r.LGRName(), numOrDash(int(l.LinkID)), connDevice(r), dash(l.GID), dash(l.PeerGID))
	fmt.Fprintf(&b, "token %s", hexOrDash(r.Token))
	if r.SndBuf != 0 {
		fmt.Fprintf(&b, "  sndbuf %d", r.SndBuf)
	}
	fmt.Fprintf(&b, "  RMBE %s  peer RMBE %s  rx %s (%s)  tx %s (%s)\n", numOrDash(int(r.RMBE)), numOrDash(int(r.PeerRMBE)),
		known(r.RxUnknown, strconv.FormatUint(r.RxBytes, 10)+" B"), known(r.RxUnknown || r.RateUnknown, bytesRate(r.RxRate)),
		known(r.TxUnknown, strconv.FormatUint(r.TxBytes, 10)+" B"), known(r.TxUnknown || r.RateUnknown, bytesRate(r.TxRate)))
	cursorLines(&b, r, s.Time)
	if t := r.Traced; t != nil {
		fmt.Fprintf(&b, "traced in the last interval: sent %d B in %d calls (%s), received %d B in %d calls (%s)\n",
			t.TxBytes, t.TxCalls, bytesRate(t.TxRate), t.RxBytes, t.RxCalls, bytesRate(t.RxRate))
	}
	findingLines(&b, d.Findings, "")
	// Its history: the wire's steps of the connection, and every event
	// about it or its link group (a link lost under it, a failover), in
	// time order.
	type step struct {
		t    time.Time
		text string
	}
	var history []step
	for _, h := range d.Handshake {
		history = append(history, step{h.Time, h.What})
	}
	for _, e := range s.Events {
		if e.Conn == r.Key || (e.LGR != "" && e.LGR == r.Link().LGRKey) {
			history = append(history, step{e.Time, fmt.Sprintf("%s (%s)", e.Text, e.Source)})
		}
	}
	sort.SliceStable(history, func(i, j int) bool { return history[i].t.Before(history[j].t) })
	if len(history) > 0 {
		b.WriteString("history:\n")
	}
	for _, h := range history {
		fmt.Fprintf(&b, "  %s  %s\n", h.t.UTC().Format("15:04:05.000000"), h.text)
	}
	return b.String()
}

// connState is the STATE cell: the state, and the shutdown when a side is
// shut (smcss's notation).
func connState(r monitor.ConnRow) string {
	if r.Shutdown == "" || r.Shutdown == "<->" {
		return string(r.State)
	}
	return string(r.State) + " " + r.Shutdown
}

// localEnd is the LOCAL cell: the local address, "*:PORT" where sock_diag
// does not tell it.
func localEnd(r monitor.ConnRow) string { return endpoint(r.Src, r.AddrHidden || r.FamilyUnknown) }

// sinceText writes a time and how long before now it was, "-" for none.
func sinceText(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format("15:04:05"), now.Sub(t).Round(time.Second))
}

// cursorLines writes a kernel socket's cursors, flags and lags (smcss
// -d's columns), and an SMC-D socket's DMB tokens; "-" where the kernel
// reports none (a socket without a connection).
func cursorLines(b *strings.Builder, r monitor.ConnRow, now time.Time) {
	if r.Source != monitor.SourceKernel {
		return
	}
	c := r.Cursors
	if c == nil {
		b.WriteString("cursors -  (no connection: the kernel reports none)\n")
	} else {
		fmt.Fprintf(b, "rx cursors: peer prod %s  peer cons %s   tx cursors: prod %s  cons %s\n", c.RxProd, c.RxCons, c.TxProd, c.TxCons)
		fmt.Fprintf(b, "send buffer: prep %s  sent %s  fin %s   flags rx %s%s  tx %s%s\n", c.TxPrep, c.TxSent, c.TxFin,
			c.RxFlags, flagNote(c.RxFlags), c.TxFlags, flagNote(c.TxFlags))
		fmt.Fprintf(b, "unread %d B  unconfirmed %d B", c.RxUnread, c.TxUnconfirmed)
		if c.TxUnconfirmed > 0 {
			fmt.Fprintf(b, " (standing since %s)", sinceText(c.UnconfirmedSince, now))
		}
		fmt.Fprintf(b, "  unsent %d B\n", c.TxUnsent)
	}
	if r.Mode == monitor.ModeSMCD {
		if d := r.DMB; d != nil {
			fmt.Fprintf(b, "DMB token %s  peer token %s\n", d.Token, d.PeerToken)
		} else {
			b.WriteString("DMB token -  peer token -\n")
		}
	}
}

func flagNote(f monitor.CDCFlags) string {
	if n := f.Names(); n != "" {
		return " (" + n + ")"
	}
	return ""
}

// connDevice is where a connection's data goes: the RDMA device/port of
// its link, or its DIBS device for SMC-D.
func connDevice(r monitor.ConnRow) string {
	l := r.Link()
	if l.DIBSDev != "" {
		return l.DIBSDev + " (DIBS)"
	}
	return device(l.IBDev, l.IBPort)
}

func connDrill(r monitor.ConnRow, _ *monitor.Snapshot) (tui.Drill, bool) {
	l := r.Link()
	if l.LGRKey == "" {
		return tui.Drill{}, false
	}
	return tui.Drill{View: "linkgroups", Label: "link group " + l.LGRID.String() + " of " + r.Key, Keys: []string{l.LGRKey}, Select: l.LGRKey}, true
}
