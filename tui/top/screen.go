package top

import (
	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/widget"
)

// entry is one row of a list and the model value it shows.
type entry[T any] struct {
	v   T
	row widget.Row
}

// list is a screen of keyed rows over a snapshot (S: a host's
// monitor.Snapshot, or the fleet's): the connections, link groups,
// devices, events and the fleet's views are each one, differing only in
// their rows, detail and drill-down.
type list[S, T any] struct {
	name    string
	aliases []string
	cols    []tui.Column
	t       *widget.Table
	by      map[string]T
	snap    *S
	rows    func(s *S) []entry[T]
	detail  func(v T, s *S) string
	drill   func(v T, s *S) (tui.Drill, bool)
}

func newList[S, T any](name string, aliases []string, cols []tui.Column,
	rows func(*S) []entry[T], detail func(T, *S) string, drill func(T, *S) (tui.Drill, bool)) *list[S, T] {
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.Title
	}
	return &list[S, T]{name: name, aliases: aliases, cols: cols, t: widget.NewTable(titles...), rows: rows, detail: detail, drill: drill}
}

func (l *list[S, T]) Name() string          { return l.name }
func (l *list[S, T]) Aliases() []string     { return l.aliases }
func (l *list[S, T]) Table() *widget.Table  { return l.t }
func (l *list[S, T]) Columns() []tui.Column { return l.cols }

func (l *list[S, T]) update(s *S) {
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

func (l *list[S, T]) Detail(key string) string {
	v, ok := l.by[key]
	if !ok || l.detail == nil {
		return ""
	}
	return l.detail(v, l.snap)
}

func (l *list[S, T]) Drill(key string) (tui.Drill, bool) {
	v, ok := l.by[key]
	if !ok || l.drill == nil {
		return tui.Drill{}, false
	}
	return l.drill(v, l.snap)
}
