package render

import (
	"fmt"
	"io"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/smcscope/smcscope/monitor"
)

// Monitor writes every view of a smctop snapshot as text: overview,
// connections, link groups with their links, devices, fallback reasons,
// events, settings and the sources with why any is missing.
func Monitor(w io.Writer, s monitor.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	o := s.Overview
	fmt.Fprintf(tw, "== overview  %s  %s\n", s.Origin, s.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "connections %d: SMC-R %d  SMC-D %d  fallback %d  pending %d  (listening %d)\n", o.Conns, o.SMCR, o.SMCD, o.Fallback, o.Pending, o.Listening)
	fmt.Fprintf(tw, "link groups %d (without redundancy %d), links %d (active %d)\n", o.LinkGroups, o.NoRedundancy, o.Links, o.LinksActive)
	fmt.Fprintf(tw, "RNICs %d, ports active %d down %d, error counters moving %d\n", o.RNICs, o.PortsActive, o.PortsDown, o.ErrorCounters)
	if s.Kernel != nil {
		fmt.Fprintf(tw, "kernel totals: SMC ok %d (%.1f/s)  fallbacks %d (%.1f/s)  handshake errors %d (%.1f/s)\n",
			o.SuccessTotal, o.SuccessRate, o.FallbacksTotal, o.FallbackRate, o.HandshakeErrors, o.HandshakeErrorRate)
	}
	if o.HSLimitation != nil {
		fmt.Fprintf(tw, "handshake limitation: %v\n", *o.HSLimitation)
	}
	fmt.Fprintln(tw, "\n== connections")
	fmt.Fprintln(tw, "KEY\tMODE\tSTATE\tLOCAL\tPEER\tPROCESS\tLGR\tLINK\tDEV\tRX\tTX\tRX/s\tTX/s\tREASON")
	for _, c := range s.Conns {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.0f\t%.0f\t%s\n",
			c.Key, c.Mode, c.State, Endpoint(c.Src, c.AddrHidden), Endpoint(c.Dst, c.AddrHidden),
			Process(c.PID, c.Comm), c.LGRID, NumOrDash(int(c.LinkID)), Device(c.IBDev, c.IBPort),
			c.RxBytes, c.TxBytes, c.RxRate, c.TxRate, ConnReason(c))
	}
	fmt.Fprintln(tw, "\n== link groups")
	fmt.Fprintln(tw, "ID\tSRC\tKIND\tROLE\tTYPE/STATE\tCONNS\tV\tPEER\tMAX L/C\tBUF SND/RMB\tREDUNDANT\tDELETED")
	for _, g := range s.LinkGroups {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d/%d\t%d/%d\t%v\t%s\n",
			g.ID, g.Source, g.Kind, dash(string(g.Role)), GroupState(g), g.Conns, Version(g.Version, g.Release),
			dash(strings.TrimSpace(g.PeerHost+" "+g.PeerOS)), g.MaxLinks, g.MaxConns, g.SndBufAlloc, g.RMBAlloc, g.Redundant, ReasonOrDash(g.DeleteReason))
		for _, l := range g.Links {
			fmt.Fprintf(tw, "  link %d\t%s\t%s\tuid %08x peer %08x\t%s\tconns %d\tgid %s\tpeer %s\t%s\n",
				l.ID, l.State, Device(l.IBDev, l.IBPort), l.UID, l.PeerUID, dash(l.NetDev), l.Conns, dash(l.GID), dash(l.PeerGID), LinkWire(l))
		}
	}
	fmt.Fprintln(tw, "\n== devices")
	for _, d := range s.Devices {
		fmt.Fprintf(tw, "%s\tdriver %s\tparent %s\tused by SMC %v\tcritical %v\n", d.Name, dash(d.Driver), dash(d.Parent), d.SMC, d.Critical)
		for _, p := range d.Ports {
			fmt.Fprintf(tw, "  port %d\t%s\t%s\tnetdevs %s\tpnetid %s\tSMC links %d\n", p.Port, p.State, dash(p.PhysState), dash(strings.Join(p.NetDevs, ",")), dash(p.PNETID), p.Links)
			for _, c := range p.Counters {
				if c.Value == 0 && c.Delta == 0 {
					continue
				}
				mark := ""
				if c.Moving {
					mark = "  MOVING (" + c.Health + ")"
				}
				fmt.Fprintf(tw, "    %s\t%d\t%.1f/s%s\n", c.Name, c.Value, c.Rate, mark)
			}
		}
	}
	fmt.Fprintln(tw, "\n== fallback reasons")
	for _, r := range s.Fallbacks {
		fmt.Fprintf(tw, "%s\t%#08x %s\t%d\t%.1f/s\t%s\n", r.Side, r.Reason.Code, r.Reason.Name, r.Count, r.Rate, r.Reason.Meaning)
	}
	fmt.Fprintln(tw, "\n== events")
	for _, e := range s.Events {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Time.UTC().Format("15:04:05.000"), e.Source, e.Kind, e.Text)
	}
	fmt.Fprintln(tw, "\n== settings")
	for _, st := range s.Settings {
		fmt.Fprintf(tw, "%s\t%s\n", st.Name, st.Value)
	}
	fmt.Fprintln(tw, "\n== sources")
	for _, src := range s.Sources {
		state := "yes"
		if !src.Available {
			state = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", src.Name, state, src.Detail)
	}
	return tw.Flush()
}

// ConnReason is a connection's fallback reason and the peer's diagnosis,
// by kernel name, or the tracker's detail for a wire row.
func ConnReason(c monitor.ConnRow) string {
	var parts []string
	if c.Fallback.Code != 0 {
		parts = append(parts, fmt.Sprintf("%#08x %s", c.Fallback.Code, c.Fallback.Name))
	}
	if c.PeerDiagnosis.Code != 0 {
		parts = append(parts, fmt.Sprintf("peer %#08x %s", c.PeerDiagnosis.Code, c.PeerDiagnosis.Name))
	}
	if len(parts) == 0 && c.Source == monitor.SourceWire && !c.Mode.SMC() {
		return dash(c.Detail)
	}
	return dash(strings.Join(parts, "; "))
}

// GroupState is a link group's kernel type, or "deleted" when the wire
// saw it end.
func GroupState(g monitor.LinkGroupRow) string {
	if g.Deleted {
		return "deleted"
	}
	return dash(g.Type)
}

// ReasonOrDash writes a reason as "0x00010000 lost-path (meaning)".
func ReasonOrDash(r monitor.Reason) string {
	if r.Code == 0 && r.Name == "" {
		return "-"
	}
	return fmt.Sprintf("%#08x %s (%s)", r.Code, r.Name, r.Meaning)
}

// LinkWire is what the wire saw of a link (QPs, packets, trouble).
func LinkWire(l monitor.LinkRow) string {
	if l.QPN == 0 && l.Packets == 0 {
		return ""
	}
	return fmt.Sprintf("qp %#x<->%#x pkts %d cdcs %d retrans %d psn-gaps %d nak %d rnr %d", l.QPN, l.PeerQPN, l.Packets, l.CDCs, l.Retransmit, l.PSNGaps, l.NAKs, l.RNRs)
}

// Endpoint prints a socket address, "*:PORT" when sock_diag hid it
// (IPPROTO_SMC), "-" when there is none.
func Endpoint(ap netip.AddrPort, hidden bool) string {
	if hidden {
		return fmt.Sprintf("*:%d", ap.Port())
	}
	if !ap.IsValid() {
		return "-"
	}
	return ap.String()
}

// Process prints "comm/pid", "-" without an owner.
func Process(pid int, comm string) string {
	if pid == 0 {
		return "-"
	}
	return fmt.Sprintf("%s/%d", comm, pid)
}

// HexOrDash prints an ID in hex, "-" for zero.
func HexOrDash(v uint32) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%#x", v)
}

// NumOrDash prints a number, "-" for zero.
func NumOrDash(v int) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprint(v)
}

// Device prints "ibdev/port", "-" without a device.
func Device(name string, port uint8) string {
	if name == "" {
		return "-"
	}
	return fmt.Sprintf("%s/%d", name, port)
}

// Dash prints s, "-" when it is empty.
func Dash(s string) string { return dash(s) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Version prints an SMC version and release ("v2.1"), "-" for none.
func Version(v, r uint8) string {
	if v == 0 {
		return "-"
	}
	if r == 0 {
		return fmt.Sprintf("v%d", v)
	}
	return fmt.Sprintf("v%d.%d", v, r)
}
