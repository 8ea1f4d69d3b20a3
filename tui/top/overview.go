package top

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/widget"
)

type overview struct {
	t *widget.Table
	s *monitor.Snapshot
}

func newOverview() *overview { return &overview{t: widget.NewTable("WHAT", "NOW", "RATE", "NOTE")} }

func (o *overview) Name() string               { return "overview" }
func (o *overview) Table() *widget.Table       { return o.t }
func (o *overview) update(s *monitor.Snapshot) { o.s = s; o.t.SetRows(overviewRows(s)) }

// overviewRows is the overview's model: counts now and rates.
func overviewRows(s *monitor.Snapshot) []widget.Row {
	v := s.Overview
	rate := func(r float64) string { return fmt.Sprintf("%.1f/s", r) }
	warn := func(bad bool) tcell.Color {
		if bad {
			return tcell.ColorRed
		}
		return 0
	}
	// The totals and rates come from the kernel's SMC statistics; a
	// capture replay has none, and says so rather than showing zeros.
	kernel := func(rate, note string) (string, string) {
		if s.Kernel == nil {
			return "", "(no kernel statistics)"
		}
		return rate, note
	}
	okRate, okNote := kernel(rate(v.SuccessRate), "kernel: SMC handshakes that succeeded")
	fbRate, fbNote := kernel(rate(v.FallbackRate), fmt.Sprintf("%d since boot", v.FallbacksTotal))
	hsRate, hsNote := kernel(rate(v.HandshakeErrorRate), hsLimit(v.HSLimitation))
	ioRate, ioNote := kernel(rate(v.RxBytesRate)+" / "+rate(v.TxBytesRate), "kernel SMC statistics")
	rows := []widget.Row{
		{Key: "conns", Cells: []string{"connections", fmt.Sprint(v.Conns), "", fmt.Sprintf("%d listening", v.Listening)}},
		{Key: "smcr", Cells: []string{"  SMC-R", fmt.Sprint(v.SMCR), okRate, okNote}, Color: tcell.ColorGreen},
		{Key: "smcd", Cells: []string{"  SMC-D", fmt.Sprint(v.SMCD), "", ""}},
		{Key: "fallback", Cells: []string{"  fallback to TCP", fmt.Sprint(v.Fallback), fbRate, fbNote}, Color: warn(v.Fallback > 0 || v.FallbackRate > 0)},
		{Key: "pending", Cells: []string{"  pending/failed", fmt.Sprint(v.Pending), "", "handshake or first link not finished"}},
		{Key: "hserr", Cells: []string{"handshake errors", fmt.Sprint(v.HandshakeErrors), hsRate, hsNote}, Color: warn(v.HandshakeErrorRate > 0)},
		{Key: "lgrs", Cells: []string{"link groups", fmt.Sprint(v.LinkGroups), "", fmt.Sprintf("%d links, %d active", v.Links, v.LinksActive)}},
		{Key: "noredundancy", Cells: []string{"  without redundancy", fmt.Sprint(v.NoRedundancy), "", "one link: a port or RNIC failure ends them"}, Color: warn(v.NoRedundancy > 0)},
		{Key: "rnics", Cells: []string{"RNICs", fmt.Sprint(v.RNICs), "", fmt.Sprintf("ports %d active, %d down", v.PortsActive, v.PortsDown)}, Color: warn(v.PortsDown > 0)},
		{Key: "errors", Cells: []string{"  error counters moving", fmt.Sprint(v.ErrorCounters), "", "out_of_sequence, packet_seq_err, timeouts, RNR, CNP/ECN ..."}, Color: warn(v.ErrorCounters > 0)},
		{Key: "traffic", Cells: []string{"SMC bytes rx / tx", "", ioRate, ioNote}},
	}
	for _, r := range s.Fallbacks {
		rows = append(rows, widget.Row{
			Key:   fmt.Sprintf("fb-%s-%x", r.Side, r.Reason.Code),
			Cells: []string{fmt.Sprintf("fallback %s %s", r.Side, r.Reason.Name), fmt.Sprint(r.Count), rate(r.Rate), r.Reason.Meaning},
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

func (o *overview) Detail(string) string {
	if o.s == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("sources:\n")
	for _, src := range o.s.Sources {
		state := "yes"
		if !src.Available {
			state = "NO "
		}
		fmt.Fprintf(&b, "  %-12s %s  %s\n", src.Name, state, src.Detail)
	}
	if len(o.s.Settings) > 0 {
		b.WriteString("settings:")
		for _, st := range o.s.Settings {
			fmt.Fprintf(&b, "  %s=%s", st.Name, st.Value)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (o *overview) Drill(key string) (string, string, bool) {
	switch {
	case key == "fallback" || strings.HasPrefix(key, "fb-"):
		return "connections", "fallback", true
	case key == "smcr":
		return "connections", "SMC-R", true
	case key == "pending":
		return "connections", "pending", true
	case key == "conns":
		return "connections", "", true
	case key == "lgrs":
		return "linkgroups", "", true
	case key == "noredundancy":
		return "linkgroups", "no-redundancy", true
	case key == "rnics" || key == "errors":
		return "devices", "", true
	}
	return "", "", false
}
