package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/internal/numfmt"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/widget"
)

var overviewColumns = []tui.Column{
	col("WHAT", "what is counted; indented rows are parts of the row above"),
	col("NOW", "how many exist now (ended connections and lost links are counted apart)"),
	col("RATE", "per second over the last refresh, from the kernel's SMC statistics (bytes: B/s)"),
	col("NOTE", "totals since the module loaded, and what the row means"),
}

// overviewRow is one line of the overview: its key, and what it counts
// and its note, which the detail says whole.
type overviewRow struct{ key, what, note string }

func newOverview() *list[monitor.Snapshot, overviewRow] {
	return newList("overview", []string{"ov", "home"}, overviewColumns, overviewEntries, overviewDetail, overviewDrill)
}

func overviewEntries(s *monitor.Snapshot) []entry[overviewRow] {
	rows := overviewRows(s)
	out := make([]entry[overviewRow], len(rows))
	for i, r := range rows {
		out[i] = entry[overviewRow]{overviewRow{key: r.Key, what: strings.TrimSpace(r.Cells[0]), note: r.Cells[3]}, r}
	}
	return out
}

// overviewRows is the overview's model: counts now and rates.
func overviewRows(s *monitor.Snapshot) []widget.Row {
	v := s.Overview
	rate := func(r *float64) string {
		if r == nil {
			return "-/s"
		}
		return known(noRates(s), fmt.Sprintf("%.1f", *r)) + "/s"
	}
	bytesRate := func(r *float64) string {
		if r == nil {
			return "-"
		}
		return bytesRate(*r)
	}
	warn := func(bad bool) tcell.Color {
		if bad {
			return tcell.ColorRed
		}
		return 0
	}
	// The rates come from the kernel's SMC statistics; a capture replay
	// has none and says so rather than showing zeros, and its totals are
	// what the capture showed.
	kernel := func(rate, note string) (string, string) {
		if s.Kernel == nil {
			return "", "(no kernel statistics)"
		}
		return rate, note
	}
	okRate, okNote := kernel(rate(v.SuccessRate), fmt.Sprintf("%d SMC handshakes succeeded since the module loaded", v.SuccessTotal))
	fbRate, fbNote := kernel(rate(v.FallbackRate), fmt.Sprintf("%d since the module loaded", v.FallbacksTotal))
	if s.Kernel == nil && !s.WireTime.IsZero() {
		okNote = fmt.Sprintf("the capture: %d became SMC", v.SuccessTotal)
		if v.JoinedSMC > 0 {
			were := "were"
			if v.JoinedSMC == 1 {
				were = "was"
			}
			okNote += fmt.Sprintf(", %d %s before it began", v.JoinedSMC, were)
		}
		fbNote = fmt.Sprintf("the capture: %d fallbacks (each side once)", v.FallbacksTotal)
	}
	hsRate, hsNote := kernel(rate(v.HandshakeErrorRate), hsLimit(v.HSLimitation))
	ioRate, ioNote := kernel(bytesRate(v.RxBytesRate)+" / "+bytesRate(v.TxBytesRate), "kernel SMC statistics")
	connNote := fmt.Sprintf("%d listening", v.Listening)
	if v.Ended > 0 {
		connNote += fmt.Sprintf(", %d ended (listed, not counted)", v.Ended)
	}
	lgrNote := fmt.Sprintf("%s, %d active", numfmt.Count(v.Links, "link"), v.LinksActive)
	if v.LinksLost > 0 {
		lgrNote += fmt.Sprintf(", %d lost", v.LinksLost)
	}
	if v.LinksUnknown > 0 {
		lgrNote += fmt.Sprintf(", %d not known (no traffic seen to work)", v.LinksUnknown)
	}
	redNote := "one link: a port or RNIC failure ends them"
	if v.RedundancyUnknown > 0 {
		redNote += fmt.Sprintf("; %d more with one link seen, whose other links the capture may not show (it joined after their setup, or has none of their RoCE traffic)", v.RedundancyUnknown)
	}
	rows := []widget.Row{
		{Key: "conns", Cells: []string{"connections", fmt.Sprint(v.Conns), "", connNote}},
		{Key: "smcr", Cells: []string{"  SMC-R", fmt.Sprint(v.SMCR), okRate, okNote}, Color: tcell.ColorGreen},
		{Key: "smcd", Cells: []string{"  SMC-D", fmt.Sprint(v.SMCD), "", ""}},
		{Key: "fallback", Cells: []string{"  fallback to TCP", fmt.Sprint(v.Fallback), fbRate, fbNote}, Color: warn(v.Fallback > 0 || positive(v.FallbackRate))},
		{Key: "pending", Cells: []string{"  pending/failed", fmt.Sprintf("%d/%d", v.Pending, v.Failed), "", "handshake or first link not finished / ended without SMC or fallback"}},
		{Key: "hserr", Cells: []string{"handshake errors", countOrDash(v.HandshakeErrors), hsRate, hsNote}, Color: warn(positive(v.HandshakeErrorRate))},
		{Key: "lgrs", Cells: []string{"link groups", fmt.Sprint(v.LinkGroups), "", lgrNote}, Color: warn(v.LinksLost > 0)},
		{Key: "unlisted", Cells: []string{"  conns without socket", countOrDash(v.UnlistedConns), "",
			"in the groups' counts, not in the socket list: closed by their application, closing with the peer"}},
		{Key: "noredundancy", Cells: []string{"  without redundancy", fmt.Sprint(v.NoRedundancy), "", redNote}, Color: warn(v.NoRedundancy > 0)},
		{Key: "rnics", Cells: []string{"RNICs", fmt.Sprint(v.RNICs), "", fmt.Sprintf("ports %d active, %d down", v.PortsActive, v.PortsDown)}, Color: warn(v.PortsDown > 0)},
		{Key: "errors", Cells: []string{"  error counters moving", fmt.Sprint(v.ErrorCounters), "", "out_of_sequence, packet_seq_err, timeouts, RNR, CNP/ECN ..."}, Color: warn(v.ErrorCounters > 0)},
		{Key: "traffic", Cells: []string{"SMC bytes rx / tx", "", ioRate, ioNote}},
	}
	for _, r := range s.Fallbacks {
		rows = append(rows, widget.Row{
			Key:   fmt.Sprintf("fb-%s-%x", r.Side, r.Reason.Code),
			Cells: []string{fmt.Sprintf("fallback %s %s", r.Side, r.Reason.Name), fmt.Sprint(r.Count), rate(&r.Rate), r.Reason.Meaning},
			Color: warn(r.Rate > 0),
		})
	}
	return rows
}

func hsLimit(on *bool) string {
	if on == nil {
		return ""
	}
	if *on {
		return "handshake limitation ON"
	}
	return "handshake limitation off"
}

// overviewDetail is the selected row's note whole (the table cuts it at
// the screen's width), then the sources (and why one is missing) and the
// net.smc settings.
func overviewDetail(r overviewRow, s *monitor.Snapshot) string {
	var b strings.Builder
	if r.note != "" {
		fmt.Fprintf(&b, "%s: %s\n", r.what, r.note)
	}
	b.WriteString("sources:\n")
	for _, src := range s.Sources {
		state := "yes"
		if !src.Available {
			state = "NO "
		}
		fmt.Fprintf(&b, "  %-12s %s  %s\n", src.Name, state, src.Detail)
	}
	if len(s.Settings) > 0 {
		b.WriteString("settings:")
		for _, st := range s.Settings {
			fmt.Fprintf(&b, "  %s=%s", st.Name, st.Value)
		}
		b.WriteString("\n")
	}
	for _, e := range s.CounterErrors() {
		fmt.Fprintf(&b, "RDMA counter left out: %s\n", e)
	}
	return b.String()
}

// overviewDrill opens the rows a count is made of: the connections of a
// mode, the groups without redundancy, the devices.
func overviewDrill(r overviewRow, s *monitor.Snapshot) (tui.Drill, bool) {
	conns := func(label string, keep func(monitor.ConnRow) bool) (tui.Drill, bool) {
		keys := []string{}
		for _, c := range s.Conns {
			if keep(c) {
				keys = append(keys, c.Key)
			}
		}
		return tui.Drill{View: "connections", Label: label, Keys: keys}, true
	}
	now := func(c monitor.ConnRow) bool {
		return !(c.Source == monitor.SourceWire && c.State == monitor.StateClosed) && c.Mode != monitor.ModeListen
	}
	mode := func(m monitor.Mode) func(monitor.ConnRow) bool {
		return func(c monitor.ConnRow) bool { return now(c) && c.Mode == m }
	}
	switch {
	case r.key == "conns":
		return conns("connections now", now)
	case r.key == "smcr":
		return conns("SMC-R connections", mode(monitor.ModeSMCR))
	case r.key == "smcd":
		return conns("SMC-D connections", mode(monitor.ModeSMCD))
	case r.key == "fallback":
		return conns("fallback connections", mode(monitor.ModeFallback))
	case strings.HasPrefix(r.key, "fb-"):
		return conns("fallbacks", func(c monitor.ConnRow) bool { return c.Mode == monitor.ModeFallback })
	case r.key == "pending":
		return conns("pending and failed connections", func(c monitor.ConnRow) bool {
			return now(c) && (c.Mode == monitor.ModePending || c.Mode == monitor.ModeFailed)
		})
	case r.key == "lgrs":
		return tui.Drill{View: "linkgroups"}, true
	case r.key == "noredundancy":
		keys := []string{}
		for _, g := range s.LinkGroups {
			if g.Kind == monitor.ModeSMCR && !g.Redundant && !g.RedundancyUnknown && !g.Deleted {
				keys = append(keys, g.Key)
			}
		}
		return tui.Drill{View: "linkgroups", Label: "link groups without redundancy", Keys: keys}, true
	case r.key == "rnics" || r.key == "errors":
		return tui.Drill{View: "devices"}, true
	}
	return tui.Drill{}, false
}
