package widget

import "testing"

func TestSparkline(t *testing.T) {
	for _, c := range []struct {
		in    []float64
		width int
		want  string
	}{
		{[]float64{0, 0, 0}, 10, "▁▁▁"},
		{[]float64{1, 2, 4, 8}, 10, "▂▂▄█"}, // nonzero is never the zero baseline,
		{[]float64{8, 0, 2, 4, 8}, 4, "▁▂▄█"},
		{nil, 5, ""},
	} {
		if got := Sparkline(c.in, c.width); got != c.want {
			t.Errorf("Sparkline(%v, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

func TestTableFilterSortSelection(t *testing.T) {
	tb := NewTable("NAME", "N")
	tb.SetRows([]Row{{Key: "a", Cells: []string{"alpha", "10"}}, {Key: "b", Cells: []string{"beta", "9"}}, {Key: "c", Cells: []string{"gamma", "100"}}})
	tb.SelectKey("b")
	tb.MoveSort(1) // NAME ascending
	tb.MoveSort(1) // N ascending, as text: no sort values
	if got := keys(tb.Shown()); got != "acb" {
		t.Errorf("sorted by N as text: %s, want acb (10 < 100 < 9)", got)
	}
	if tb.SelectedKey() != "b" {
		t.Errorf("selection moved to %q", tb.SelectedKey())
	}
	tb.SetFilter("ALP")
	if got := keys(tb.Shown()); got != "a" {
		t.Errorf("filter ALP: %s", got)
	}
	tb.SetRows([]Row{{Key: "a", Cells: []string{"alpha", "11"}}, {Key: "d", Cells: []string{"delta", "1"}}})
	if got := keys(tb.Shown()); got != "a" || tb.SelectedKey() != "a" {
		t.Errorf("after new rows: %s selected %q", got, tb.SelectedKey())
	}
}

func keys(rs []Row) string {
	s := ""
	for _, r := range rs {
		s += r.Key
	}
	return s
}

// TestTableSortValues: a column with sort values sorts by them, so rates
// and hex IDs order by value, not by their text; s reverses.
func TestTableSortValues(t *testing.T) {
	tb := NewTable("RATE", "ID")
	tb.SetRows([]Row{
		{Key: "a", Cells: []string{"1.2MiB/s", "0x100"}, Sort: []any{1.2 * (1 << 20), uint32(0x100)}},
		{Key: "b", Cells: []string{"10.0KiB/s", "0x1000"}, Sort: []any{10.0 * (1 << 10), uint32(0x1000)}},
		{Key: "c", Cells: []string{"512B/s", "0x2000"}, Sort: []any{512.0, uint32(0x2000)}},
		{Key: "d", Cells: []string{"0B/s", "0x300"}, Sort: []any{0.0, uint32(0x300)}},
	})
	tb.MoveSort(1)
	if got := keys(tb.Shown()); got != "dcba" {
		t.Errorf("by rate: %s, want dcba (0 B/s < 512 B/s < 10 KiB/s < 1.2 MiB/s)", got)
	}
	tb.ReverseSort()
	if got := keys(tb.Shown()); got != "abcd" {
		t.Errorf("by rate, reversed: %s", got)
	}
	tb.MoveSort(1)
	if c, desc := tb.SortColumn(); c != "ID" || !desc {
		t.Errorf("sort column %s desc %v, want ID, still descending", c, desc)
	}
	tb.ReverseSort()
	if got := keys(tb.Shown()); got != "adbc" {
		t.Errorf("by ID: %s, want adbc (0x100 < 0x300 < 0x1000 < 0x2000)", got)
	}
	tb.MoveSort(-1)
	if c, _ := tb.SortColumn(); c != "RATE" {
		t.Errorf("< went to %s", c)
	}
}

// TestTableScope: a scope shows exactly the rows with its keys, whatever
// their text; the text filter narrows within it; the columns stay scrolled
// across new rows.
func TestTableScope(t *testing.T) {
	tb := NewTable("NAME")
	rows := []Row{{Key: "lgr:1", Cells: []string{"0x1"}}, {Key: "lgr:10", Cells: []string{"0x10"}}, {Key: "lgr:100", Cells: []string{"0x100"}}}
	tb.SetRows(rows)
	tb.SetScope("link group 0x1", []string{"lgr:1"})
	if got := keys(tb.Shown()); got != "lgr:1" {
		t.Errorf("scope lgr:1 shows %s", got)
	}
	if l, k := tb.Scope(); l != "link group 0x1" || len(k) != 1 {
		t.Errorf("scope %q %v", l, k)
	}
	tb.SetScope("", nil)
	tb.SetFilter("0x1")
	if got := keys(tb.Shown()); got != "lgr:1lgr:10lgr:100" {
		t.Errorf("text filter 0x1 shows %s (text matches are not exact: why drills use scopes)", got)
	}
	tb.SetOffset(0, 1)
	tb.SetRows(rows)
	if _, c := tb.GetOffset(); c != 1 {
		t.Errorf("column offset %d after new rows, want 1", c)
	}
}
