package top

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
)

var eventColumns = []tui.Column{
	col("TIME", "when it happened (UTC): the frame's time for the wire, the trace time for tracepoints, the refresh that saw it for differences"),
	col("SOURCE", "wire (decoded frames), tracepoint (the kernel's smc: tracepoints), diff (two refreshes of the kernel's state differ)"),
	col("KIND", "fallback, smc, lgr-created, lgr-deleted, link-up, link-down, link-rejected, failover, counter, handshake-error, expert (a finding: smcdump -z smc,expert's catalogue)"),
	col("WHAT", "what happened, with codes by kernel name"),
}

func newEvents() *list[monitor.Snapshot, monitor.Event] {
	return newList("events", []string{"ev", "log"}, eventColumns, eventRows, eventDetail, eventDrill)
}

// eventRows is the event screen's model, newest first.
func eventRows(s *monitor.Snapshot) []entry[monitor.Event] {
	out := make([]entry[monitor.Event], 0, len(s.Events))
	if len(s.Events) == 0 {
		from := "snapshot differences"
		for _, src := range s.Sources {
			if src.Name == monitor.SourceEvents {
				from = src.Detail
			}
		}
		return append(out, entry[monitor.Event]{row: entryRow("none", []string{"-", "-", "-", "no event yet (from " + from + ")"}, nil)})
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		ev := s.Events[i]
		row := entryRow(strconv.Itoa(i), []string{ev.Time.UTC().Format("15:04:05.000"), string(ev.Source), string(ev.Kind), ev.Text},
			[]any{ev.Time.UnixNano()})
		switch ev.Kind {
		case monitor.EventFallback, monitor.EventLinkDown, monitor.EventHandshakeErr, monitor.EventCounter:
			row.Color = tcell.ColorRed
		case monitor.EventFailover, monitor.EventLGRDeleted, monitor.EventLinkRejected:
			row.Color = tcell.ColorYellow
		case monitor.EventExpert:
			row.Color = severityColor(ev.Severity)
		}
		out = append(out, entry[monitor.Event]{ev, row})
	}
	return out
}

func eventDetail(ev monitor.Event, _ *monitor.Snapshot) string {
	if ev.Kind == "" {
		return ""
	}
	s := fmt.Sprintf("%s  %s (%s)\n%s\n", ev.Time.UTC().Format("2006-01-02 15:04:05.000000"), ev.Kind, ev.Source, ev.Text)
	if ev.Frame != 0 {
		s += fmt.Sprintf("frame %d of the capture\n", ev.Frame)
	}
	if ev.Finding != 0 {
		d := ev.Finding.Def()
		s += fmt.Sprintf("finding %s (%s, %s): %s\ncheck: %s\n", d.Name, d.Severity, d.Source, d.Meaning, d.Check)
	}
	return s
}

// severityColor is how a finding's row reads: errors red, warnings
// yellow, notes and chats as any row.
func severityColor(sev monitor.Severity) tcell.Color {
	switch expert.Severity(sev) {
	case expert.Error:
		return tcell.ColorRed
	case expert.Warn:
		return tcell.ColorYellow
	}
	return tcell.ColorDefault
}

// findingLines lists an object's expert findings under its detail.
func findingLines(b *strings.Builder, fs []monitor.Finding, indent string) {
	for _, f := range fs {
		frames := fmt.Sprintf("frame %d", f.First)
		if f.Count > 1 {
			frames = fmt.Sprintf("%d frames %d..%d", f.Count, f.First, f.Last)
		}
		fmt.Fprintf(b, "%s%s %s: %s", indent, f.Severity, f.ID, frames)
		if f.Detail != "" {
			b.WriteString(": " + f.Detail)
		}
		b.WriteString("\n")
	}
}

// eventDrill opens the connection or link group the event is about.
func eventDrill(ev monitor.Event, _ *monitor.Snapshot) (tui.Drill, bool) {
	switch {
	case ev.Conn != "":
		return tui.Drill{View: "connections", Label: ev.Conn, Keys: []string{ev.Conn}, Select: ev.Conn}, true
	case ev.LGR != "":
		return tui.Drill{View: "linkgroups", Label: "link group of the event", Keys: []string{ev.LGR}, Select: ev.LGR}, true
	}
	return tui.Drill{}, false
}
