package top

import (
	"fmt"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/widget"
)

type events struct {
	t  *widget.Table
	by map[string]monitor.Event
}

func newEvents() *events { return &events{t: widget.NewTable("TIME", "SOURCE", "KIND", "WHAT")} }

func (e *events) Name() string         { return "events" }
func (e *events) Table() *widget.Table { return e.t }

func (e *events) update(s *monitor.Snapshot) {
	e.by = map[string]monitor.Event{}
	for i, ev := range s.Events {
		e.by[fmt.Sprint(i)] = ev
	}
	e.t.SetRows(eventRows(s))
}

// eventRows is the event screen's model, newest first.
func eventRows(s *monitor.Snapshot) []widget.Row {
	rows := make([]widget.Row, 0, len(s.Events))
	if len(s.Events) == 0 {
		from := "snapshot differences"
		for _, src := range s.Sources {
			if src.Name == "events" {
				from = src.Detail
			}
		}
		return append(rows, widget.Row{Key: "none", Cells: []string{"-", "-", "-", "no event yet (from " + from + ")"}})
	}
	for i := len(s.Events) - 1; i >= 0; i-- {
		ev := s.Events[i]
		var c tcell.Color
		switch ev.Kind {
		case monitor.EventFallback, monitor.EventLinkDown, monitor.EventHandshakeErr, monitor.EventCounter:
			c = tcell.ColorRed
		case monitor.EventFailover, monitor.EventLGRDeleted:
			c = tcell.ColorYellow
		}
		rows = append(rows, widget.Row{Key: fmt.Sprint(i), Color: c, Cells: []string{ev.Time.Format("15:04:05.000"), string(ev.Source), string(ev.Kind), ev.Text}})
	}
	return rows
}

func (e *events) Detail(key string) string {
	ev, ok := e.by[key]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s  %s (%s)\n%s\n", ev.Time.Format("2006-01-02 15:04:05.000"), ev.Kind, ev.Source, ev.Text)
}

func (e *events) Drill(string) (string, string, bool) { return "", "", false }
