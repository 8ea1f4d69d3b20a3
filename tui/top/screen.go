package top

import (
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/widget"
)

// entry is one row of a list and the model value it shows.
type entry[T any] struct {
	v   T
	row widget.Row
}

// list is a screen of keyed rows over a snapshot: the connections, link
// groups, devices and events are each one, differing only in their rows,
// detail and drill-down.
type list[T any] struct {
	name    string
	aliases []string
	cols    []tui.Column
	t       *widget.Table
	by      map[string]T
	snap    *monitor.Snapshot
	rows    func(s *monitor.Snapshot) []entry[T]
	detail  func(v T, s *monitor.Snapshot) string
	drill   func(v T, s *monitor.Snapshot) (tui.Drill, bool)
}

func newList[T any](name string, aliases []string, cols []tui.Column,
	rows func(*monitor.Snapshot) []entry[T], detail func(T, *monitor.Snapshot) string, drill func(T, *monitor.Snapshot) (tui.Drill, bool)) *list[T] {
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.Title
	}
	return &list[T]{name: name, aliases: aliases, cols: cols, t: widget.NewTable(titles...), rows: rows, detail: detail, drill: drill}
}

func (l *list[T]) Name() string          { return l.name }
func (l *list[T]) Aliases() []string     { return l.aliases }
func (l *list[T]) Table() *widget.Table  { return l.t }
func (l *list[T]) Columns() []tui.Column { return l.cols }

func (l *list[T]) update(s *monitor.Snapshot) {
	l.snap = s
	es := l.rows(s)
	l.by = make(map[string]T, len(es))
	rows := make([]widget.Row, len(es))
	for i, e := range es {
		l.by[e.row.Key] = e.v
		rows[i] = e.row
	}
	l.t.SetRows(rows)
}

func (l *list[T]) Detail(key string) string {
	v, ok := l.by[key]
	if !ok || l.detail == nil {
		return ""
	}
	return l.detail(v, l.snap)
}

func (l *list[T]) Drill(key string) (tui.Drill, bool) {
	v, ok := l.by[key]
	if !ok || l.drill == nil {
		return tui.Drill{}, false
	}
	return l.drill(v, l.snap)
}
