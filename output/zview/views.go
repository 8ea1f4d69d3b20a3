package zview

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/numfmt"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// Views writes the -z views of several specs (track.ParseView) in order,
// from one snapshot, so they agree with each other. format is "text"
// (tables framed like tshark -z output) or "json".
func Views(w io.Writer, s *track.Snapshot, specs []string, format string) error {
	for _, spec := range specs {
		name, arg, err := track.ParseView(spec)
		if err != nil {
			return err
		}
		if err := View(w, s, name, arg, format); err != nil {
			return err
		}
	}
	return nil
}

// View writes one view of a snapshot: the tracker's typed rows as an
// aligned table ("text", the default when empty) or as compact JSON (one
// line).
func View(w io.Writer, s *track.Snapshot, name, arg, format string) error {
	if format == "" {
		format = "text"
	}
	if format != "text" && format != "json" {
		return fmt.Errorf("view %s: unknown format %q (text or json)", name, format)
	}
	var v any
	var text func(*tabwriter.Writer)
	switch name {
	case track.ViewConns:
		cv := rows.Conns(s)
		v, text = cv, func(tw *tabwriter.Writer) { textConns(tw, s, cv.Conns) }
	case track.ViewLinks:
		lr := rows.LinkRows(s)
		v, text = lr, func(tw *tabwriter.Writer) { textLinks(tw, s, lr) }
	case track.ViewLGR:
		gr := rows.LGRRows(s)
		v, text = gr, func(tw *tabwriter.Writer) { textLGRs(tw, s, gr) }
	case track.ViewDecline:
		d := rows.Declines(s)
		v, text = d, func(tw *tabwriter.Writer) { textDecline(tw, s, d) }
	case track.ViewExpert:
		ev := s.ExpertView()
		if arg != "" {
			min, ok := expert.ParseSeverity(arg)
			if !ok {
				return fmt.Errorf("%w: %s,%s", track.ErrUnknownView, name, arg)
			}
			ev = ev.AtLeast(min)
		}
		v, text = ev, func(tw *tabwriter.Writer) { textExpert(tw, ev) }
	case track.ViewTimeline:
		tl, err := rows.TimelineOf(s, arg)
		if err != nil {
			return err
		}
		v, text = tl, func(tw *tabwriter.Writer) { textTimeline(tw, tl) }
	case track.ViewFollow:
		return fmt.Errorf("view %s needs the frames (smcdump -z), not a snapshot", name)
	default:
		_, _, err := track.ParseView(name)
		if err == nil {
			err = fmt.Errorf("%w: %q", track.ErrUnknownView, name)
		}
		return err
	}
	if format == "json" {
		return writeJSON(w, v)
	}
	// Framed like tshark -z output, so several views read apart.
	const rule = "================================================================================\n"
	if _, err := io.WriteString(w, rule); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	text(tw)
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, rule)
	return err
}

// fmtMS writes a handshake step's milliseconds, "-" where not known and
// ">=" before a lower bound (rows.Durations.AtLeast).
func fmtMS(v float64, atLeast bool) string {
	switch {
	case v < 0:
		return "-"
	case atLeast:
		return ">=" + strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func textConns(tw *tabwriter.Writer, s *track.Snapshot, conns []rows.Conn) {
	fmt.Fprintf(tw, "SMC connections: %d\n", len(conns))
	fmt.Fprintln(tw, "ID\tClient\tServer\tOutcome\tDetail\tVer\tLGR\tLink\tCDC C>S\tCDC S>C\tBytes C>S\tBytes S>C\tWRITE C>S\tWRITE S>C\tConfirm ms\t1st CDC ms\tFrames\tClose\tNotes")
	for _, r := range conns {
		client, server := r.Ends()
		c2s, s2c := &r.Client2Srv, &r.Srv2Client
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n",
			r.ID, client, server, r.Outcome, r.Detail, rows.VersionName(r.Version), rows.Known(r.LGR), rows.LinkName(r.Link),
			rows.FlowCount(c2s, c2s.CDCs), rows.FlowCount(s2c, s2c.CDCs), rows.ByteCount(c2s), rows.ByteCount(s2c),
			rows.WriteCount(c2s, c2s.WriteBytes), rows.WriteCount(s2c, s2c.WriteBytes), fmtMS(r.Handshake.Confirm, r.Handshake.AtLeast), fmtMS(r.Handshake.FirstCDC, r.Handshake.AtLeast),
			r.Frames, rows.Dash(r.Close), rows.Dash(r.Notes()))
	}
	st := &s.Stats
	untracked := strconv.Itoa(st.TCPUntracked)
	if st.TCPDamaged > 0 {
		untracked += fmt.Sprintf(" (damaged copies %d)", st.TCPDamaged)
	}
	fmt.Fprintf(tw, "frames %d: attached to a connection %d (late %d), link only %d, unattached %d, TCP not tracked %s, other %d; retransmissions %d; evicted connections %d\n",
		st.Frames, st.ConnAttached, st.LateAttached, st.LinkOnly, st.Unattached, untracked, st.Other, st.Retrans, st.Evicted)
	if st.Malformed > 0 {
		fmt.Fprintf(tw, "malformed SMC messages %d (frame.error shows each)\n", st.Malformed)
	}
	if st.CaptureDups > 0 {
		note := "followed once"
		if st.CaptureDupsOtherPath > 0 {
			note += fmt.Sprintf("; %d came by another path than the first: a mirror session or an overlay carried one of the two", st.CaptureDupsOtherPath)
		}
		if a := st.ApartText(); a != "" {
			note += "; " + a
		}
		fmt.Fprintf(tw, "frames the capture holds twice %d (%s)\n", st.CaptureDups, note)
	}
	if st.MirrorLost > 0 {
		fmt.Fprintf(tw, "frames a mirror session numbered that the capture does not hold %d (smc.capture.mirror_lost)\n", st.MirrorLost)
	}
	if st.MirrorDamaged > 0 {
		fmt.Fprintf(tw, "frames a mirror session numbered that the capture holds damaged %d (not missing: taken for the numbers they hid)\n", st.MirrorDamaged)
	}
	if s.Folded() {
		t := s.Totals()
		textConnTotals(tw, &t.Conns)
	}
}

// textConnTotals says what was folded and counts every connection: the
// rows above are only the newest when a capture holds more connections
// than the tracker keeps whole.
func textConnTotals(tw *tabwriter.Writer, c *track.ConnTotals) {
	if c.Folded > 0 {
		open := ""
		if c.FoldedOpen > 0 {
			open = fmt.Sprintf(" (%d still open: their later frames count as TCP not tracked)", c.FoldedOpen)
		}
		if c.FoldedIdle > 0 {
			open += fmt.Sprintf(" (%d ended by being idle)", c.FoldedIdle)
		}
		fmt.Fprintf(tw, "listed %d of %d connections; folded into the totals below: the %d oldest%s\n", c.Listed, c.Conns, c.Folded, open)
		if c.Rule != "" {
			fmt.Fprintf(tw, "%s\n", c.Rule)
		}
	}
	var by []string
	for _, o := range c.ByOutcome() {
		by = append(by, fmt.Sprintf("%s %d", o.Outcome, o.Count))
	}
	fmt.Fprintf(tw, "all %d connections: %s; closed %d; frames %d\n", c.Conns, rows.Dash(strings.Join(by, ", ")), c.Closed, c.Frames)
	for _, x := range []struct {
		dir string
		f   *track.FlowTotals
	}{{"C>S", &c.C2S}, {"S>C", &c.S2C}} {
		fmt.Fprintf(tw, "all %s: %d CDCs, %d B produced, %d B in %d RDMA WRITEs, %d B over TCP\n",
			x.dir, x.f.CDCs, x.f.Bytes, x.f.WriteBytes, x.f.Writes, x.f.TCPBytes)
	}
}

// connList lists a link's or link group's connections, and how many more
// were folded.
func connList(ids []int, folded int) string {
	if folded == 0 {
		return rows.IDList(ids)
	}
	if len(ids) == 0 {
		return fmt.Sprintf("%d folded", folded)
	}
	return fmt.Sprintf("%s +%d folded", rows.IDList(ids), folded)
}

func textLinks(tw *tabwriter.Writer, s *track.Snapshot, links []rows.Link) {
	fmt.Fprintf(tw, "SMC-R links: %d (C = client, S = server = link-group owner; A/B when roles are unknown)\n", len(links))
	fmt.Fprintln(tw, "ID\tLGR\tLink\tState\tClient addr QPN\tServer addr QPN\tPkts C>S\tPkts S>C\tACK\tNAK\tRNR\tPSN gaps\tRetrans\tConns\tDeleted")
	for _, r := range links {
		c, sv := "C ", "S "
		if r.Inferred {
			c, sv = "A ", "B "
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			r.ID, r.LGR, rows.LinkName(r.LinkID), r.State, c+endText(r.Client), sv+endText(r.Server),
			r.C2S.Packets, r.S2C.Packets, r.C2S.Acks+r.S2C.Acks, r.C2S.NAKs+r.S2C.NAKs, r.C2S.RNRs+r.S2C.RNRs,
			r.C2S.PSNGaps+r.S2C.PSNGaps, r.C2S.Retrans+r.S2C.Retrans, connList(r.Conns, r.ConnsFolded), r.Deletion())
	}
	if t := s.Totals(); t.Links.Folded > 0 {
		l := &t.Links
		var by []string
		for _, st := range l.ByState() {
			by = append(by, fmt.Sprintf("%s %d", st.State, st.Count))
		}
		fmt.Fprintf(tw, "listed %d of %d links; folded into these totals (history dropped): the %d oldest\n", l.Listed, l.Links, l.Folded)
		fmt.Fprintf(tw, "all %d links: %s; packets C>S %d S>C %d; ACK %d NAK %d RNR %d; PSN gaps %d; retransmissions %d\n",
			l.Links, rows.Dash(strings.Join(by, ", ")), l.C2S.Packets, l.S2C.Packets, l.C2S.Acks+l.S2C.Acks, l.C2S.NAKs+l.S2C.NAKs,
			l.C2S.RNRs+l.S2C.RNRs, l.C2S.PSNGaps+l.S2C.PSNGaps, l.C2S.Retrans+l.S2C.Retrans)
	}
	for _, r := range links {
		if len(r.History) == 0 && len(r.Credits) == 0 {
			continue
		}
		// Headed by the kernel's link number; the row ID tells apart
		// links whose number the capture did not show.
		fmt.Fprintf(tw, "link %s (ID %d):\n", rows.LinkName(r.LinkID), r.ID)
		for _, c := range r.Credits {
			fmt.Fprintf(tw, "  ANCK credits %s\n", c.Text())
		}
		for _, h := range r.History {
			fmt.Fprintf(tw, "  %s\n", h)
		}
	}
}

// endText shows a link end as "addr QPN", or "-" when nothing is known
// (the client end of a rejected ADD_LINK, which only echoes the request).
func endText(e rows.End) string {
	if e.Addr == "" && e.QPN == "" {
		return "-"
	}
	return rows.Dash(e.Addr) + " " + rows.Dash(e.QPN)
}

func textLGRs(tw *tabwriter.Writer, s *track.Snapshot, groups []rows.LGR) {
	fmt.Fprintf(tw, "SMC-R link groups: %d\n", len(groups))
	fmt.Fprintln(tw, "ID\tState\tServer peer\tClient peer\tServer lgr\tClient lgr\tVer\tMax links\tMax conns\tLinks\tConns\tDeleted")
	for _, r := range groups {
		state := r.State
		if r.Inferred {
			state += " (joined mid-stream)"
		}
		links := strings.Join(r.LinkStates, " ")
		if r.LinksFolded > 0 {
			links = strings.TrimSpace(fmt.Sprintf("%s +%d folded", links, r.LinksFolded))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, state, r.ServerPeerID, r.ClientPeerID,
			rows.Dash(r.ServerLGRID), rows.Dash(r.ClientLGRID), rows.VersionName(r.Version), rows.Known(r.MaxLinks), rows.Known(r.MaxConns), rows.Dash(links), connList(r.Conns, r.ConnsFolded), r.Deletion())
	}
	if t := s.Totals(); t.LinkGroups.Folded > 0 {
		g := &t.LinkGroups
		fmt.Fprintf(tw, "listed %d of %d link groups; folded with their links: the %d oldest; deleted: %d of all\n", g.Listed, g.LinkGroups, g.Folded, g.Deleted)
	}
	for _, r := range groups {
		if len(r.History) == 0 && r.ANCK == "" {
			continue
		}
		fmt.Fprintf(tw, "link group %d:\n", r.ID)
		if r.ANCK != "" {
			fmt.Fprintf(tw, "  ANCK (Alibaba Cloud Linux): %s\n", r.ANCK)
		}
		for _, h := range r.History {
			fmt.Fprintf(tw, "  %s\n", h)
		}
	}
}

func textDecline(tw *tabwriter.Writer, s *track.Snapshot, v rows.DeclineView) {
	if c := s.Totals().Conns; c.Folded > 0 {
		fmt.Fprintf(tw, "SMC fallbacks: %d of %d connections (%d listed, %d folded: counted by reason below)\n",
			len(v.Fallbacks)+v.Folded, c.Conns, len(v.Fallbacks), v.Folded)
	} else {
		fmt.Fprintf(tw, "SMC fallbacks: %d of %d connections\n", len(v.Fallbacks), len(s.Conns))
	}
	fmt.Fprintln(tw, "ID\tClient\tServer\tBy\tStage\tCode\tName\tMeaning\tFrame")
	for _, r := range v.Fallbacks {
		oos := ""
		if r.OutOfSync {
			oos = " [out of sync]"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\t%d\n", r.ID, r.Client, r.Server, r.By, r.Stage, rows.Dash(r.Code), rows.Dash(r.Name), r.Meaning, oos, r.Frame)
	}
	if len(v.ByReason) > 0 {
		fmt.Fprintln(tw, "by reason:")
		for _, r := range v.ByReason {
			fmt.Fprintf(tw, "  %d\t%s\n", r.Count, r.Reason)
		}
	}
}

func textTimeline(tw *tabwriter.Writer, tl rows.Timeline) {
	c := &tl.Conn
	fmt.Fprintf(tw, "SMC connection %d: %s -> %s, %s (%s)\n", c.ID, rows.Dash(c.Client), rows.Dash(c.Server), c.Outcome, c.Detail)
	if tl.Note != "" {
		fmt.Fprintln(tw, tl.Note)
	}
	fmt.Fprintln(tw, "Frame\tTime\tDir\tWhat\tMeaning")
	for _, e := range tl.Events {
		at := ""
		if e.AtLeast {
			at = ">="
		}
		fmt.Fprintf(tw, "%d\t%s%.6f\t%s\t%s\t%s\n", e.Frame, at, e.Rel, e.Dir, e.What, e.Info)
	}
	if tl.Cut > 0 {
		fmt.Fprintf(tw, "(%d more events not kept: Options.TimelineMax)\n", tl.Cut)
	}
	fmt.Fprintf(tw, "C->S: %d CDCs, %d B produced, %d B by RDMA WRITE; S->C: %d CDCs, %d B produced, %d B by RDMA WRITE; close: %s\n",
		c.Client2Srv.CDCs, c.Client2Srv.Bytes, c.Client2Srv.WriteBytes, c.Srv2Client.CDCs, c.Srv2Client.Bytes, c.Srv2Client.WriteBytes, rows.Dash(c.Close))
}

// textExpert writes smc,expert as tshark -z expert does: a block per
// severity, the most severe first, a line per finding with its frames,
// then each object that shows it and what to check next.
func textExpert(tw *tabwriter.Writer, v track.ExpertView) {
	n, objs := 0, 0
	var by []string
	for _, g := range v.Severities {
		for _, r := range g.Findings {
			n++
			objs += r.Objects
		}
		by = append(by, fmt.Sprintf("%s %d", g.Severity, len(g.Findings)))
	}
	floor := ""
	if v.MinSeverity != "" {
		floor = fmt.Sprintf(" at %s or above (%d below not shown)", v.MinSeverity, v.Below)
	}
	if n == 0 {
		fmt.Fprintf(tw, "SMC expert findings%s: none\n", floor)
		return
	}
	fmt.Fprintf(tw, "SMC expert findings%s: %d on %s (%s)\n", floor, n, numfmt.Count(objs, "object"), strings.Join(by, ", "))
	for _, g := range v.Severities {
		fmt.Fprintf(tw, "\n%s (%s, %s)\n", severityTitle(g.Severity), numfmt.Count(len(g.Findings), "finding"), numfmt.Count(g.Frames, "frame"))
		fmt.Fprintln(tw, "  Finding\tGroup\tFrames\tObjects\tFirst\tLast\tMeaning")
		for _, r := range g.Findings {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%s\n", r.ID, r.Group, r.Count, r.Objects, r.First, r.Last, r.Meaning)
		}
		// Then, under the aligned table, the objects of each finding.
		for _, r := range g.Findings {
			fmt.Fprintf(tw, "  %s:\n", r.ID)
			for _, in := range r.Instances {
				name := in.Name
				frames := fmt.Sprintf("frame %d", in.First)
				if in.Count > 1 || in.Last != in.First {
					frames = fmt.Sprintf("%d frames %d..%d", in.Count, in.First, in.Last)
				}
				fmt.Fprintf(tw, "    %s, %s: %s\n", name, frames, rows.Dash(in.Detail))
				if in.Check != "" {
					fmt.Fprintf(tw, "      check: %s\n", in.Check)
				}
			}
			if r.FoldedObjects > 0 {
				fmt.Fprintf(tw, "    (%d more objects folded into the totals, counted above)\n", r.FoldedObjects)
			}
			// The catalogue's advice, unless every object has its own.
			if r.FoldedObjects > 0 || slices.ContainsFunc(r.Instances, func(in track.ExpertInstance) bool { return in.Check == "" }) {
				fmt.Fprintf(tw, "    check: %s\n", r.Check)
			}
		}
	}
}

// severityTitle is a severity's heading, as tshark's "Errors", "Warns".
func severityTitle(s string) string {
	switch s {
	case "error":
		return "Errors"
	case "warn":
		return "Warnings"
	case "note":
		return "Notes"
	case "chat":
		return "Chats"
	}
	return s
}
