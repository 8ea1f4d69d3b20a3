package top

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/smcscope/smcscope/monitor"
)

// WriteText writes every view of a smctop snapshot as text (--once -o text): overview,
// connections, link groups with their links, devices, fallback reasons,
// events, settings and the sources with why any is missing.
func WriteText(w io.Writer, s monitor.Snapshot) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	o := s.Overview
	fmt.Fprintf(tw, "== overview  %s  %s\n", s.Origin, s.Time.UTC().Format(time.RFC3339))
	fmt.Fprintf(tw, "connections %d: SMC-R %d  SMC-D %d  fallback %d  pending %d  failed %d  (listening %d, ended %d)\n", o.Conns, o.SMCR, o.SMCD, o.Fallback, o.Pending, o.Failed, o.Listening, o.Ended)
	red := fmt.Sprint(o.NoRedundancy)
	if o.RedundancyUnknown > 0 {
		red += fmt.Sprintf(", not known %d", o.RedundancyUnknown)
	}
	lost := fmt.Sprint(o.LinksLost)
	if o.LinksUnknown > 0 {
		lost += fmt.Sprintf(", not known %d", o.LinksUnknown)
	}
	fmt.Fprintf(tw, "link groups %d (without redundancy %s), links %d (active %d, lost %s); group connections without a socket %s\n",
		o.LinkGroups, red, o.Links, o.LinksActive, lost, countOrDash(o.UnlistedConns))
	fmt.Fprintf(tw, "RNICs %d, ports active %d down %d, error counters moving %d; DIBS devices %d\n", o.RNICs, o.PortsActive, o.PortsDown, o.ErrorCounters, o.DIBSDevices)
	noRate := noRates(&s)
	perSec := func(v *float64) string {
		if v == nil {
			return "-/s"
		}
		return known(noRate, strconv.FormatFloat(*v, 'f', 1, 64)) + "/s"
	}
	if s.Kernel != nil {
		fmt.Fprintf(tw, "kernel totals: SMC ok %d (%s)  fallbacks %d (%s)  handshake errors %s (%s)\n",
			o.SuccessTotal, perSec(o.SuccessRate), o.FallbacksTotal, perSec(o.FallbackRate), countOrDash(o.HandshakeErrors), perSec(o.HandshakeErrorRate))
	} else if s.WireTime != (time.Time{}) {
		joined := ""
		if o.JoinedSMC > 0 {
			joined = fmt.Sprintf(" (and %d SMC before the capture began)", o.JoinedSMC)
		}
		fmt.Fprintf(tw, "wire totals: SMC %d%s  fallbacks %d (each side once)  capture time %s\n",
			o.SuccessTotal, joined, o.FallbacksTotal, s.WireTime.UTC().Format("2006-01-02 15:04:05.000000"))
	}
	if o.HSLimitation != nil {
		fmt.Fprintf(tw, "handshake limitation: %v\n", *o.HSLimitation)
	}
	fmt.Fprintln(tw, "\n== connections")
	fmt.Fprintln(tw, "KEY\tMODE\tSTATE\tLOCAL\tPEER\tPROCESS\tLGR\tLINK\tDEV\tRX\tTX\tRX/s\tTX/s\tREASON")
	for _, c := range s.Conns {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			c.Key, c.Mode, connState(c), localEnd(c), endpoint(c.Dst, c.AddrHidden),
			process(c.PID, c.Comm), c.LGRName(), numOrDash(int(c.Link().LinkID)), connDevice(c),
			known(c.RxUnknown, strconv.FormatUint(c.RxBytes, 10)), known(c.TxUnknown, strconv.FormatUint(c.TxBytes, 10)),
			known(c.RxUnknown || c.RateUnknown, strconv.FormatFloat(c.RxRate, 'f', 0, 64)), known(c.TxUnknown || c.RateUnknown, strconv.FormatFloat(c.TxRate, 'f', 0, 64)), connReason(c))
	}
	fmt.Fprintln(tw, "\n== link groups")
	fmt.Fprintln(tw, "ID\tSRC\tKIND\tROLE\tTYPE/STATE\tCONNS\tV\tPEER\tMAX L/C\tBUF SND/RMB\tREDUNDANT\tDELETED")
	for _, g := range s.LinkGroups {
		limits, red := limitsText(g), fmt.Sprint(g.Redundant)
		if g.RedundancyUnknown {
			red = "-"
		}
		if g.Kind == monitor.ModeSMCD {
			// No links: as on the screen, link limits and redundancy mean nothing.
			limits, red = "-", "n/a (SMC-D)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n",
			g.Name(), g.Source, groupKind(g), dash(string(g.Role)), groupState(g), g.Conns, version(g.Version, g.Release),
			dash(strings.TrimSpace(g.PeerHost+" "+g.PeerOS)), limits, buffersText(g, func(v float64) string { return fmt.Sprint(uint64(v)) }), red, reasonText(g.DeleteReason))
	}
	// The links are a table of their own: interleaved with the groups'
	// rows, which have more cells, they broke the groups' columns
	// (tabwriter aligns a column only over consecutive lines that have it).
	fmt.Fprintln(tw, "\n== links")
	fmt.Fprintln(tw, "LGR\tLINK\tSTATE\tDEV\tUID\tPEER UID\tNETDEV\tCONNS\tGID\tPEER GID\tWIRE")
	for _, g := range s.LinkGroups {
		for _, l := range g.Links {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n",
				g.Name(), l.Name(), l.State, device(l.IBDev, l.IBPort), l.UID, l.PeerUID, dash(l.NetDev), l.Conns, dash(l.GID), dash(l.PeerGID), dash(linkWire(l)))
		}
	}
	fmt.Fprintln(tw, "\n== devices")
	for _, d := range s.Devices {
		if d.Kind == monitor.DeviceDIBS {
			fmt.Fprintf(tw, "%s\tDIBS %s\tgid %s\tfabric %s\tused by SMC %s\tpnetid %s\tSMC-D connections %d\n",
				d.Name, dash(d.Driver), dash(d.GID), dash(d.FabricID), usedText(d), pnetText(d.PNETID, d.PNETIDByUser), d.Conns)
			continue
		}
		fmt.Fprintf(tw, "%s\tdriver %s\tparent %s\tused by SMC %s\tcritical %v\n", d.Name, dash(d.Driver), dash(d.Parent), usedText(d), d.Critical)
		for _, p := range d.Ports {
			fmt.Fprintf(tw, "  port %d\t%s\t%s\tnetdevs %s\tpnetid %s\tSMC links %d\n", p.Port, p.State, dash(p.PhysState), dash(strings.Join(p.NetDevs, ",")), pnetText(p.PNETID, p.PNETIDByUser), p.Links)
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
	writeStatsText(tw, s.Kernel)
	writeSystemText(tw, &s)
	fmt.Fprintln(tw, "\n== fallback reasons")
	for _, r := range s.Fallbacks {
		fmt.Fprintf(tw, "%s\t%#08x %s\t%d\t%s\t%s\n", r.Side, r.Reason.Code, r.Reason.Name, r.Count, perSec(&r.Rate), r.Reason.Meaning)
	}
	fmt.Fprintln(tw, "\n== processes (SMC send/receive tracepoints)")
	for _, p := range s.Processes {
		fmt.Fprintf(tw, "%d\t%s\tsockets %d\ttx %d B (%s B/s, %d calls)\trx %d B (%s B/s, %d calls)\n",
			p.PID, p.Comm, p.Sockets, p.TxBytes, known(noRate, strconv.FormatFloat(p.TxRate, 'f', 0, 64)), p.TxCalls,
			p.RxBytes, known(noRate, strconv.FormatFloat(p.RxRate, 'f', 0, 64)), p.RxCalls)
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
