package output

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/output/zview"
)

// TestTextColumns: -o column.format's text lines hold, per frame, what
// -T fields prints for the same fields (the tracker's included), the
// built-in columns as the default line writes them, a width pads or cuts
// (the last column is not padded), and -T json refuses a layout.
func TestTextColumns(t *testing.T) {
	newTracker := func(v []string) (Tracker, error) { return zview.NewTracker(v) }
	cols, err := columns.Parse("No.,Time,Source,Destination,Protocol,Length,Seq=smc.cdc.seq,smc.conn.id,smc.conn.outcome,Info", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, Options{Read: pingpong, Columns: cols, NewTracker: newTracker})
	if err != nil {
		t.Fatal(err)
	}
	fields, _, err := run(t, Options{Read: pingpong, Format: FormatFields, Separator: "  ",
		Fields: []string{"frame.number", "smc.cdc.seq", "smc.conn.id", "smc.conn.outcome"}, NewTracker: newTracker})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := run(t, Options{Read: pingpong})
	if err != nil {
		t.Fatal(err)
	}
	gl, fl, pl := lines(got), lines(fields), lines(plain)
	if len(gl) != len(pl) || len(gl) < 100 {
		t.Fatalf("%d lines with the layout, %d without", len(gl), len(pl))
	}
	for i, l := range gl {
		c := strings.Split(l, "  ")
		f := strings.Split(fl[i], "  ")
		if c[0] != f[0] {
			t.Fatalf("line %d: frame %s, -T fields %s", i, c[0], f[0])
		}
		// No. Time Source -> Destination  Protocol  Info, as the line.
		if want := strings.Join(c[:2], "  ") + "  " + c[2] + " -> " + c[3] + "  " + c[4] + "  " + strings.Join(c[9:], "  "); want != pl[i] {
			t.Errorf("line %d: %q\nthe default line: %q", i, want, pl[i])
		}
		outcome, _, _ := strings.Cut(c[8], " ") // "0 (pending)": -T fields writes the number
		if c[6] != f[1] || c[7] != f[2] || outcome != f[3] {
			t.Errorf("frame %s: seq %q conn %q outcome %q; -T fields %q %q %q", c[0], c[6], c[7], c[8], f[1], f[2], f[3])
		}
	}
	cut, _ := columns.Parse("No.:6,Info:12", nil)
	out, _, _ := run(t, Options{Read: pingpong, Columns: cut, Count: 1})
	if want := "5       [SYN] seq 3…\n"; out != want {
		t.Errorf("widths: %q, want %q", out, want)
	}
	if _, _, err := run(t, Options{Read: pingpong, Columns: cut, Format: FormatJSON}); err == nil || !strings.Contains(err.Error(), "-o column.format") {
		t.Errorf("-T json with a layout: %v", err)
	}
}

// TestInfoColumnNotes: the Info column says a frame's carrier and its
// problems once, in the default line's order, on a mirror's frames whose
// copies are damaged (the column once wrote the problems twice).
func TestInfoColumnNotes(t *testing.T) {
	frames, lt, err := mutate.ReadFile(ref + "erspan.pcap")
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		if d := frames[i].Data; i%3 == 0 && len(d) > 120 {
			d[len(d)-10] ^= 0x10 // in the carried RoCE packet: its ICRC fails
		}
	}
	damaged := filepath.Join(t.TempDir(), "erspan-damaged.pcap")
	if err := mutate.WriteFile(damaged, lt, frames); err != nil {
		t.Fatal(err)
	}
	cols, err := columns.Parse("No.,Time,Source,Destination,Protocol,Info", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := run(t, Options{Read: damaged, Columns: cols})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := run(t, Options{Read: damaged})
	if err != nil {
		t.Fatal(err)
	}
	gl, pl := lines(got), lines(plain)
	if len(gl) != len(pl) {
		t.Fatalf("%d lines with the layout, %d without", len(gl), len(pl))
	}
	noted := 0
	for i, l := range gl {
		c := strings.SplitN(l, "  ", 6)
		if want := strings.Join(c[:2], "  ") + "  " + c[2] + " -> " + c[3] + "  " + c[4] + "  " + c[5]; want != pl[i] {
			t.Errorf("line %d: %q\nthe default line: %q", i, want, pl[i])
		}
		if n := strings.Count(l, "[bad ICRC"); n > 1 {
			t.Errorf("line %d says its bad ICRC %d times: %q", i, n, l)
		} else if n == 1 && strings.Contains(l, "] [bad ICRC") {
			noted++
		}
	}
	if noted == 0 {
		t.Error("no line with a carrier and a bad ICRC: the test tests nothing")
	}
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
