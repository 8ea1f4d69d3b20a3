package widget

import (
	"cmp"
	"sort"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Row is one table row: its cells, a key that survives refreshes (so the
// selection stays on the same thing), and an optional colour.
type Row struct {
	Key   string
	Cells []string
	// Sort holds, per column, what the column sorts by when that is not
	// its text: a number (int, int64, uint32, uint64, float64, ...) for a
	// rate written "1.2MiB/s", an ID written "0x100" or a count. A
	// missing or nil entry sorts by the text.
	Sort  []any
	Color tcell.Color // 0: default
}

// Table is a tview table over Rows with a header, a scope (the rows a
// drill-down chose, by key), a live text filter and a sort column.
// SetRows keeps the selection on the same key and the columns scrolled
// where they were.
type Table struct {
	*tview.Table
	header     []string
	all        []Row
	shown      []Row
	filter     string
	scope      map[string]bool // nil: every row
	scopeLabel string
	sortCol    int // -1: as given
	desc       bool
}

// NewTable returns an empty table with the given column titles.
func NewTable(header ...string) *Table {
	t := &Table{Table: tview.NewTable(), header: header, sortCol: -1}
	t.SetFixed(1, 0).SetSelectable(true, false).SetBorder(true)
	t.render()
	return t
}

// Header returns the column titles.
func (t *Table) Header() []string { return t.header }

// SetRows replaces the rows, keeping scope, filter, sort and selection.
func (t *Table) SetRows(rows []Row) {
	t.all = rows
	t.render()
}

// SetFilter shows only rows with a cell containing s (case-insensitive).
func (t *Table) SetFilter(s string) {
	t.filter = strings.ToLower(s)
	t.render()
}

// Filter returns the current filter.
func (t *Table) Filter() string { return t.filter }

// SetScope shows only the rows whose keys are given (a drill-down's
// rows, matched exactly); nil keys show every row. label names the scope
// on the status line.
func (t *Table) SetScope(label string, keys []string) {
	t.scope, t.scopeLabel = nil, ""
	if keys != nil {
		t.scope, t.scopeLabel = make(map[string]bool, len(keys)), label
		for _, k := range keys {
			t.scope[k] = true
		}
	}
	t.render()
}

// Scope returns the scope's label and keys ("" and nil for every row).
func (t *Table) Scope() (string, []string) {
	if t.scope == nil {
		return "", nil
	}
	keys := make([]string, 0, len(t.scope))
	for k := range t.scope {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return t.scopeLabel, keys
}

// SortBy sorts by column col (-1: as given), descending or not.
func (t *Table) SortBy(col int, desc bool) {
	if col < -1 || col >= len(t.header) {
		col = -1
	}
	t.sortCol, t.desc = col, desc
	t.render()
}

// MoveSort sorts by the column delta places right (left when negative)
// of the current one, keeping the direction; from unsorted, +1 is the
// first column and -1 the last.
func (t *Table) MoveSort(delta int) {
	n := len(t.header)
	c := t.sortCol
	switch {
	case c < 0 && delta > 0:
		c = 0
	case c < 0:
		c = n - 1
	default:
		c = ((c+delta)%n + n) % n
	}
	t.SortBy(c, t.desc)
}

// ReverseSort flips the direction (sorting by the first column when
// unsorted).
func (t *Table) ReverseSort() {
	if t.sortCol < 0 {
		t.SortBy(0, false)
		return
	}
	t.SortBy(t.sortCol, !t.desc)
}

// SortColumn returns the sort column's title ("" when unsorted) and order.
func (t *Table) SortColumn() (string, bool) {
	if t.sortCol < 0 {
		return "", false
	}
	return t.header[t.sortCol], t.desc
}

// Shown returns the rows after scope, filter and sort.
func (t *Table) Shown() []Row { return t.shown }

// SelectedKey returns the key of the selected row, "" when none.
func (t *Table) SelectedKey() string {
	r, _ := t.GetSelection()
	if r < 1 || r > len(t.shown) {
		return ""
	}
	return t.shown[r-1].Key
}

// SelectKey selects the row with key, or the first row.
func (t *Table) SelectKey(key string) {
	for i, r := range t.shown {
		if r.Key == key {
			t.Select(i+1, 0)
			return
		}
	}
	if len(t.shown) > 0 {
		t.Select(1, 0)
	}
}

// render rebuilds the shown rows and cells, keeping the selection on the
// same key and the columns scrolled as they were (a refresh must not undo
// h/l).
func (t *Table) render() {
	sel := t.SelectedKey()
	_, col := t.GetOffset()
	defer func() {
		t.SelectKey(sel)
		row, _ := t.GetOffset()
		t.SetOffset(row, col)
	}()
	t.shown = nil
	for _, r := range t.all {
		if (t.scope == nil || t.scope[r.Key]) && (t.filter == "" || matches(r, t.filter)) {
			t.shown = append(t.shown, r)
		}
	}
	if c := t.sortCol; c >= 0 {
		sort.SliceStable(t.shown, func(i, j int) bool {
			a, b := &t.shown[i], &t.shown[j]
			if t.desc {
				a, b = b, a
			}
			return compare(a, b, c) < 0
		})
	}
	t.Clear()
	for i, h := range t.header {
		title := h
		if i == t.sortCol {
			title += map[bool]string{false: "↑", true: "↓"}[t.desc]
		}
		t.SetCell(0, i, tview.NewTableCell(tview.Escape(title)).SetTextColor(tcell.ColorYellow).SetSelectable(false).SetAttributes(tcell.AttrBold))
	}
	for ri, r := range t.shown {
		for ci, c := range r.Cells {
			cellv := tview.NewTableCell(tview.Escape(c))
			if r.Color != 0 {
				cellv.SetTextColor(r.Color)
			}
			t.SetCell(ri+1, ci, cellv)
		}
	}
}

// compare orders two rows by column c: by their sort values when both
// have one (numbers as numbers, so 512B/s < 10.0KiB/s < 1.2MiB/s and
// 0x300 < 0x1000), else by the text.
func compare(a, b *Row, c int) int {
	if x, ok := number(a, c); ok {
		if y, ok := number(b, c); ok {
			return cmp.Compare(x, y)
		}
	}
	return strings.Compare(cell(a, c), cell(b, c))
}

func number(r *Row, c int) (float64, bool) {
	if c >= len(r.Sort) {
		return 0, false
	}
	switch v := r.Sort[c].(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case uint8:
		return float64(v), true
	case uint16:
		return float64(v), true
	case uint32:
		return float64(v), true
	case uint64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

func cell(r *Row, c int) string {
	if c < len(r.Cells) {
		return r.Cells[c]
	}
	return ""
}

func matches(r Row, f string) bool {
	for _, c := range r.Cells {
		if strings.Contains(strings.ToLower(c), f) {
			return true
		}
	}
	return false
}
