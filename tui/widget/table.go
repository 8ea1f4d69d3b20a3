package widget

import (
	"sort"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Row is one table row: its cells, a key that survives refreshes (so the
// selection stays on the same thing), and an optional colour.
type Row struct {
	Key   string
	Cells []string
	Color tcell.Color // 0: default
}

// Table is a tview table over Rows with a header, a live filter and a
// sort column. SetRows keeps the selection on the same key.
type Table struct {
	*tview.Table
	header  []string
	all     []Row
	shown   []Row
	filter  string
	sortCol int // -1: as given
	desc    bool
}

// NewTable returns an empty table with the given column titles.
func NewTable(header ...string) *Table {
	t := &Table{Table: tview.NewTable(), header: header, sortCol: -1}
	t.SetFixed(1, 0).SetSelectable(true, false).SetBorder(true)
	t.render()
	return t
}

// SetRows replaces the rows, keeping filter, sort and selection.
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

// NextSort sorts by the next column; on the last column it reverses.
func (t *Table) NextSort() {
	t.sortCol++
	if t.sortCol >= len(t.header) {
		t.sortCol, t.desc = 0, !t.desc
	}
	t.render()
}

// SortColumn returns the sort column's title ("" when unsorted) and order.
func (t *Table) SortColumn() (string, bool) {
	if t.sortCol < 0 {
		return "", false
	}
	return t.header[t.sortCol], t.desc
}

// Shown returns the rows after filter and sort.
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
// same key.
func (t *Table) render() {
	sel := t.SelectedKey()
	defer t.SelectKey(sel)
	t.shown = nil
	for _, r := range t.all {
		if t.filter == "" || matches(r, t.filter) {
			t.shown = append(t.shown, r)
		}
	}
	if c := t.sortCol; c >= 0 {
		sort.SliceStable(t.shown, func(i, j int) bool {
			a, b := cell(t.shown[i], c), cell(t.shown[j], c)
			less := lessCell(a, b)
			if t.desc {
				return lessCell(b, a)
			}
			return less
		})
	}
	t.Clear()
	for i, h := range t.header {
		title := h
		if i == t.sortCol {
			title += map[bool]string{false: "↑", true: "↓"}[t.desc]
		}
		t.SetCell(0, i, tview.NewTableCell(title).SetTextColor(tcell.ColorYellow).SetSelectable(false).SetAttributes(tcell.AttrBold))
	}
	for ri, r := range t.shown {
		for ci, c := range r.Cells {
			cellv := tview.NewTableCell(c)
			if r.Color != 0 {
				cellv.SetTextColor(r.Color)
			}
			t.SetCell(ri+1, ci, cellv)
		}
	}
}

func cell(r Row, c int) string {
	if c < len(r.Cells) {
		return r.Cells[c]
	}
	return ""
}

// lessCell compares numerically when both cells are numbers.
func lessCell(a, b string) bool {
	fa, ea := strconv.ParseFloat(strings.TrimSuffix(a, "/s"), 64)
	fb, eb := strconv.ParseFloat(strings.TrimSuffix(b, "/s"), 64)
	if ea == nil && eb == nil {
		return fa < fb
	}
	return a < b
}

func matches(r Row, f string) bool {
	if strings.ToLower(r.Key) == f {
		return true
	}
	for _, c := range r.Cells {
		if strings.Contains(strings.ToLower(c), f) {
			return true
		}
	}
	return false
}
