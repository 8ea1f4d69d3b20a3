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
	tb.NextSort() // NAME ascending
	tb.NextSort() // N ascending, numerically
	if got := keys(tb.Shown()); got != "bac" {
		t.Errorf("sorted by N: %s, want bac (9 < 10 < 100)", got)
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
