package top

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

var lgrColumns = []tui.Column{
	col("ID", "link group ID as the kernel numbers it (wire: the client's; the server's is in the detail)"),
	col("KIND", "SMC-R (RDMA links) or SMC-D (ISM / loopback, no links); ANCK's (Alibaba Cloud Linux) groups add credits and/or RWWI (write with immediate)"),
	col("ROLE", "this host's side: client made the first contact, server accepted it"),
	col("TYPE", "kernel link-group type: SYM (two links on two devices), SINGLE, ASYM_LOCAL/PEER; deleted when the wire saw it end"),
	col("CONNS", "connections in the group now"),
	col("LINKS", "active links / links listed; lost links (DELETED) counted apart"),
	col("DEVICES", "each link: number:device/port (wire: number:qpQPN)"),
	col("PEER", "peer host name and OS (SMC v2 first-contact extension)"),
	col("V", "SMC version and release negotiated (v2.1)"),
	col("MAX L/C", "v2.1 negotiated limits: links per group / connections per group"),
	col("BUFFERS", "send buffers / RMBs (DMBs) allocated, bytes (Linux 6.12+)"),
	col("REDUNDANCY", "yes: two active links survive one RNIC or port failure; no-redundancy: one failure ends every connection"),
}

func newLGRs() *list[monitor.Snapshot, monitor.LinkGroupRow] {
	return newList("linkgroups", []string{"lgr", "lgrs", "groups"}, lgrColumns, lgrRows, lgrDetail, lgrDrill)
}

// lgrRows is the link-group screen's model: one row per group, its links
// (all of them, unlike smcss -R) in the devices and detail columns.
func lgrRows(s *monitor.Snapshot) []entry[monitor.LinkGroupRow] {
	out := make([]entry[monitor.LinkGroupRow], 0, len(s.LinkGroups))
	for _, g := range s.LinkGroups {
		active, listed, lost := 0, 0, 0
		var devs []string
		for _, k := range g.Links {
			if k.State == monitor.LinkDeleted {
				lost++
			} else {
				listed++
			}
			if k.Active {
				active++
			}
			dev := k.Name() + ":" + device(k.IBDev, k.IBPort)
			switch {
			case k.IBDev == "" && k.ID == 0:
				dev = k.Name() // a wire row named by its QPs already
			case k.IBDev == "" && k.QPN != 0:
				dev = fmt.Sprintf("%s:qp%#x", k.Name(), k.QPN) // a wire row: the QP is what the capture knows
			}
			if k.State == monitor.LinkDeleted {
				dev += "(lost)"
			}
			devs = append(devs, dev)
		}
		links := fmt.Sprintf("%d/%d", active, listed)
		if lost > 0 {
			links += fmt.Sprintf(" +%d lost", lost)
		}
		red, color := "yes", tcell.ColorGreen
		limits := limitsText(g)
		switch {
		case g.Kind == monitor.ModeSMCD:
			// No links: redundancy and link limits mean nothing here.
			red, limits = "n/a (SMC-D)", "-"
			devs = []string{dash(g.DIBSDev)}
			links = "-"
		case g.RedundancyUnknown:
			red = "-" // the capture may not show every link
		case !g.Redundant:
			red, color = "no-redundancy", tcell.ColorYellow
		}
		if g.Deleted {
			color = tcell.ColorGray
		}
		row := entryRow(g.Key, []string{
			g.Name(), groupKind(g), dash(string(g.Role)), groupState(g), fmt.Sprint(g.Conns),
			links, strings.Join(devs, " "), dash(strings.TrimSpace(g.PeerHost + " " + g.PeerOS)), version(g.Version, g.Release),
			limits, buffersText(g, bytesText), red,
		}, []any{uint32(g.ID), nil, nil, nil, g.Conns, active, nil, nil, nil, nil, g.SndBufAlloc + g.RMBAlloc})
		row.Color = color
		out = append(out, entry[monitor.LinkGroupRow]{g, row})
	}
	return out
}

// lgrDetail is a group's facts, every link with its state, and its
// history as the wire showed it.
func lgrDetail(g monitor.LinkGroupRow, _ *monitor.Snapshot) string {
	var b strings.Builder
	vlan := strconv.Itoa(int(g.VLANID))
	if g.Source == monitor.SourceWire {
		vlan = "-" // the kernel's setting, not on the wire
	}
	fmt.Fprintf(&b, "%s link group %s (%s)  role %s type %s  pnetid %s vlan %s  conns %d\n", g.Kind, g.Name(), g.Source, dash(string(g.Role)), groupState(g), dash(g.PNETID), vlan, g.Conns)
	if g.PeerID != 0 {
		fmt.Fprintf(&b, "the peer's ID of this group: %s\n", g.PeerID)
	}
	if g.Kind == monitor.ModeSMCD {
		fmt.Fprintf(&b, "DIBS device %s  GID %s  peer GID %s  DMBs %d B\n", dash(g.DIBSDev), dash(g.GID), dash(g.PeerGID), g.RMBAlloc)
	}
	eid := "-" // not announced, or its CLC not in the capture
	if g.EID != "" {
		eid = fmt.Sprintf("%q", g.EID)
	}
	fmt.Fprintf(&b, "SMC %s  peer %s OS %s  EID %s", version(g.Version, g.Release), dash(g.PeerHost), dash(g.PeerOS), eid)
	if g.Kind == monitor.ModeSMCR {
		// Direct, as the peer's OS and host name, comes with the first
		// contact's CLC extension: a group whose handshake the capture
		// does not show has none of them.
		direct := "-"
		if g.Source != monitor.SourceWire || g.PeerOS != "" || g.PeerHost != "" {
			direct = fmt.Sprint(g.Direct)
		}
		fmt.Fprintf(&b, "  v2.1 limits: max links/conns %s  direct %s", limitsText(g), direct)
	}
	b.WriteString("\n")
	if g.ANCK != "" {
		fmt.Fprintf(&b, "ANCK (Alibaba Cloud Linux): %s\n", g.ANCK)
	}
	if g.SndBufAlloc != 0 || g.RMBAlloc != 0 {
		fmt.Fprintf(&b, "buffers: send %d B, RMB %d B\n", g.SndBufAlloc, g.RMBAlloc)
	}
	if g.Deleted {
		fmt.Fprintf(&b, "deleted: %s\n", deletionText(g.DeleteReason, g.DeleteReasonNotCaptured))
	}
	findingLines(&b, g.Findings, "")
	for _, k := range g.Links {
		state := string(k.State)
		if k.State == monitor.LinkNotKnown {
			state = "state not known"
		}
		fmt.Fprintf(&b, "link %s %s  %s netdev %s  uid %s peer %s  conns %d  gid %s peer %s %s\n", k.Name(), state, device(k.IBDev, k.IBPort), dash(k.NetDev), k.UID, k.PeerUID, k.Conns, dash(k.GID), dash(k.PeerGID), linkWire(k))
		if k.State == monitor.LinkNotKnown {
			b.WriteString("  set up before the capture began; nothing on the wire shows it working (no connection, no request acknowledged)\n")
		}
		if k.State == monitor.LinkDeleted {
			fmt.Fprintf(&b, "  lost since %s", k.Since.UTC().Format("15:04:05.000000"))
			if k.DeleteReason.Name != "" || k.DeleteReasonNotCaptured {
				fmt.Fprintf(&b, ": %s", deletionText(k.DeleteReason, k.DeleteReasonNotCaptured))
			}
			b.WriteString("\n")
		}
		findingLines(&b, k.Findings, "  ")
	}
	if len(g.History) > 0 {
		b.WriteString("history:\n")
	}
	for _, h := range g.History {
		fmt.Fprintf(&b, "  %s frame %d: %s\n", h.Time.UTC().Format("15:04:05.000000"), h.Frame, h.Text)
	}
	return b.String()
}

// lgrDrill opens the devices of every link of the group (a connection on
// the second link finds its device there too); a group the wire knows by
// QPs only opens its connections.
func lgrDrill(g monitor.LinkGroupRow, s *monitor.Snapshot) (tui.Drill, bool) {
	var ports []string
	seen := map[string]bool{}
	for _, k := range g.Links {
		if p := portKey(k.IBDev, int(k.IBPort)); k.IBDev != "" && !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	if len(ports) > 0 {
		return tui.Drill{View: "devices", Label: "ports of link group " + g.Name(), Keys: ports}, true
	}
	var conns []string
	for _, c := range s.Conns {
		if c.Link().LGRKey == g.Key {
			conns = append(conns, c.Key)
		}
	}
	return tui.Drill{View: "connections", Label: "connections of link group " + g.Name(), Keys: conns}, true
}

// limitsText is a group's v2.1 limits, "max links/max conns", "-" when
// not known (SMC v1, or a capture without the group's first contact).
func limitsText(g monitor.LinkGroupRow) string {
	if g.MaxLinks == 0 && g.MaxConns == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", g.MaxLinks, g.MaxConns)
}

// buffersText is a group's send and RMB allocation, "-" when not known
// (kernels before 6.12 do not report it, the wire never carries it).
func buffersText(g monitor.LinkGroupRow, size func(float64) string) string {
	if g.SndBufAlloc == 0 && g.RMBAlloc == 0 {
		return "-"
	}
	return size(float64(g.SndBufAlloc)) + "/" + size(float64(g.RMBAlloc))
}
