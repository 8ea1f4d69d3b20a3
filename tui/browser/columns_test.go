package browser

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
)

// TestParseColumns: the column spec's forms, and one clear line for what
// it cannot show.
func TestParseColumns(t *testing.T) {
	cols, err := parseColumns(`"No.", Time ,Seq=smc.cdc.seq:6,smc.conn.id,info`)
	if err != nil {
		t.Fatal(err)
	}
	if got := formatColumns(cols); got != "No.,Time,Seq=smc.cdc.seq:6,smc.conn.id,Info" {
		t.Errorf("formatted again: %q", got)
	}
	if formatColumns(defaultColumns()) != "No.,Time,Source,Destination,Protocol,Length,Info" {
		t.Errorf("default: %q", formatColumns(defaultColumns()))
	}
	for spec, want := range map[string]string{
		"No.,smc.bogus":        `column "smc.bogus": no such column or field`,
		"No.,smc.conn.state:x": `column "smc.conn.state": width "x"`,
		"smc.conn.outcome":     `column "smc.conn.outcome": the tracker fills it`,
		" , ":                  "no column",
	} {
		if _, err := parseColumns(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", spec, err, want)
		}
	}
}

// TestColumnChoice: C adds the tree's field as a column before Info, o
// edits the layout (remove, reorder, title, width), a field column sorts
// on its typed value (numbers as numbers), the layout is kept for the
// next start unless none is to be kept, and -o's spec wins over it.
func TestColumnChoice(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "smcscope", "columns")
	h := open(t, "pingpong.pcap", 120, 40, Options{ColumnsFile: saved})
	h.Until("[SYN]")
	h.gotoFrame(t, 23) // a CDC: seq 1; the tree focused
	h.selectNode(t, "smc.cdc.seq = ")
	h.Key(tcell.KeyRune, 'C')
	h.Until("columns: No.,Time,Source,Destination,Protocol,Length,smc.cdc.seq,Info")
	head := h.listLines()[0]
	if !strings.Contains(head, "Length  smc.cdc.seq  Info") {
		t.Errorf("C: header %q", head)
	}
	if b, err := os.ReadFile(saved); err != nil || string(b) != "No.,Time,Source,Destination,Protocol,Length,smc.cdc.seq,Info\n" {
		t.Errorf("C: saved %q, %v", b, err)
	}
	h.Key(tcell.KeyTab, 0) // the hex pane, then the list
	h.Key(tcell.KeyTab, 0)
	if !h.focusIsList() {
		t.Fatal("tab tab: not back in the list")
	}

	// o: Info first is no use; Seq after No., narrow; Source gone.
	h.prompt(tcell.KeyRune, 'o', "No.,Seq=smc.cdc.seq:5,Time,smc.conn.id,Protocol,Info")
	h.Until("columns: No.,Seq=smc.cdc.seq:5,Time,smc.conn.id,Protocol,Info")
	lines := h.listLines()
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "No.    Seq") || strings.Contains(lines[0], "Source") {
		t.Errorf("o: header %q", lines[0])
	}
	row := lineOf(lines, 23)
	if f := strings.Fields(row); len(f) < 5 || f[1] != "1" || f[3] != "1" || f[4] != "CDC" {
		t.Errorf("o: frame 23's row %q, want seq 1, connection 1, CDC", row)
	}
	// A bad spec stays in the prompt, red, with its error.
	h.Key(tcell.KeyRune, 'o')
	h.Type(",smc.nope")
	if scr := h.Sync(); !strings.Contains(scr, `column "smc.nope": no such column or field`) {
		t.Errorf("bad spec: no error under the prompt:\n%s", scr)
	}
	h.Key(tcell.KeyEnter, 0)
	if got := h.promptText(); !strings.HasSuffix(got, ",smc.nope") {
		t.Errorf("enter on a bad spec closed the prompt (%q)", got)
	}
	h.Key(tcell.KeyEscape, 0)

	// Sorted by Seq, numbers as numbers: 9 before 10.
	h.prompt(tcell.KeyRune, '/', "smc.cdc")
	h.Until("filter smc.cdc, ")
	h.Key(tcell.KeyRune, '>')
	h.Until("sorted by Seq ↑")
	ns, rows := h.listRows(5000)
	var seqs []int
	for i := range ns {
		if rows[i].fields == nil {
			continue
		}
		n, err := strconv.Atoi(rows[i].fields[0])
		if err != nil {
			t.Fatalf("frame %d: seq %q", ns[i], rows[i].fields[0])
		}
		seqs = append(seqs, n)
	}
	if len(seqs) < 20 || !slices.IsSorted(seqs) || seqs[len(seqs)-1] < 10 {
		t.Errorf("sorted by Seq: %v", seqs[:min(len(seqs), 40)])
	}
	h.Key(tcell.KeyRune, 's')
	h.Until("sorted by Seq ↓")
	h.Key(tcell.KeyRune, '>')
	h.Until("sorted by Time ↑")
	h.Key(tcell.KeyRune, '>')
	h.Until("sorted by smc.conn.id ↑")

	// The next start has the layout; -o's wins; none kept: Wireshark's.
	h = open(t, "pingpong.pcap", 120, 40, Options{ColumnsFile: saved})
	if head := h.Until("[SYN]"); !strings.Contains(head, "Seq  ") || strings.Contains(head, "Source") {
		t.Errorf("restart: not the saved layout:\n%s", head)
	}
	h = open(t, "pingpong.pcap", 120, 40, Options{ColumnsFile: saved, Columns: "No.,roce.bth.dqpn,Info"})
	if head := h.listLines()[0]; !strings.Contains(head, "No.  roce.bth.dqpn  Info") {
		t.Errorf("-o: header %q", head)
	}
	h = open(t, "pingpong.pcap", 120, 40, Options{})
	if head := h.listLines()[0]; !strings.Contains(head, "Source") || strings.Contains(head, "Seq") {
		t.Errorf("no columns file: header %q", head)
	}
	// o with nothing: back to Wireshark's.
	h = open(t, "pingpong.pcap", 120, 40, Options{ColumnsFile: saved})
	h.prompt(tcell.KeyRune, 'o', "")
	h.Until("columns: No.,Time,Source,Destination,Protocol,Length,Info")
}

// lineOf is the list line of frame n.
func lineOf(lines []string, n int) string {
	for _, l := range lines[1:] {
		if f := strings.Fields(strings.TrimLeft(l, "!i*")); len(f) > 0 && f[0] == strconv.Itoa(n) {
			return l
		}
	}
	return ""
}

// TestFieldColumnValues: a field column writes what the tree writes (hex,
// names), and the tracker's link of each frame.
func TestFieldColumnValues(t *testing.T) {
	h := open(t, "pingpong.pcap", 200, 40, Options{Columns: "No.,roce.bth.opcode,smc.link.id,Info"})
	h.Until("[SYN]")
	h.gotoFrame(t, 23)
	if row := strings.Join(strings.Fields(lineOf(h.listLines(), 23)), " "); !strings.HasPrefix(row, "23 0x4 (RC SEND Only) 1 CDC seq 1") {
		t.Errorf("frame 23: %q", row)
	}
}

// TestExportColumns: W to a .csv name writes the marked frames' rows in
// the list's columns (the chosen ones), headings first, values whole.
func TestExportColumns(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rows.csv")
	h := open(t, "pingpong.pcap", 100, 30, Options{Columns: "No.,Seq=smc.cdc.seq,Protocol,Info"})
	h.Until("[SYN]")
	h.gotoFrame(t, 23)
	h.Key(tcell.KeyTab, 0) // the hex pane, then the list
	h.Key(tcell.KeyTab, 0)
	h.Key(tcell.KeyRune, 'm')
	h.Key(tcell.KeyRune, 'j')
	h.Key(tcell.KeyRune, 'm')
	h.Key(tcell.KeyRune, 'W')
	h.clearPrompt()
	h.Type(out)
	h.Key(tcell.KeyEnter, 0)
	h.Until("wrote the columns of 2 frames")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 || lines[0] != "No.,Seq,Protocol,Info" || !strings.HasPrefix(lines[1], "23,1,CDC,CDC seq 1 token 1 prod 0/64 cons 0/64 | RoCE RC SEND Only QP 0x000011 PSN 0x780022") {
		t.Errorf("CSV:\n%s", b)
	}
}

// TestSortFirstColumn: a layout that does not start with No. sorts by its
// first column too (frame order is No.'s place, or before the first
// column), and No. up is frame order wherever it is.
func TestSortFirstColumn(t *testing.T) {
	h := open(t, "pingpong.pcap", 120, 40, Options{Columns: "Length,Protocol,Info"})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, '>')
	h.Until("sorted by Length ↑")
	h.Key(tcell.KeyRune, '<')
	h.Until("sorted by Info ↑")
	h = open(t, "pingpong.pcap", 120, 40, Options{Columns: "Length,No.,Info"})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, '<')
	h.Until("sorted by Length ↑")
	h.Key(tcell.KeyRune, '>')
	h.Until("frame order")
	h.Key(tcell.KeyRune, 's')
	h.Until("sorted by No. ↓")
}

// TestColumnKeys: the column at the list's left edge (→ brings the next
// there) moves with { and }, narrows and widens with ( and ), and goes
// with D; each change is the layout kept.
func TestColumnKeys(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "columns")
	h := open(t, "pingpong.pcap", 120, 40, Options{ColumnsFile: saved})
	h.Until("[SYN]")
	h.Key(tcell.KeyRight, 0) // Time at the edge
	h.Key(tcell.KeyRune, '}')
	h.Until("columns: No.,Source,Time,Destination,")
	if l := strings.TrimLeft(h.listLines()[0], " "); !strings.HasPrefix(l, "Time") {
		t.Errorf("} : Time is not at the left edge any more: %q", l)
	}
	h.Key(tcell.KeyRune, ')')
	h.Key(tcell.KeyRune, ')')
	h.Until("columns: No.,Source,Time:12,Destination,")
	h.Key(tcell.KeyRune, '(')
	h.Until("columns: No.,Source,Time:10,Destination,")
	h.Key(tcell.KeyRune, '{')
	h.Key(tcell.KeyRune, '{')
	h.Until("columns: Time:10,No.,Source,Destination,")
	h.Key(tcell.KeyRune, '{')
	h.Until("at the end already")
	h.Key(tcell.KeyRune, 'D')
	h.Until("columns: No.,Source,Destination,Protocol,Length,Info")
	if b, err := os.ReadFile(saved); err != nil || string(b) != "No.,Source,Destination,Protocol,Length,Info\n" {
		t.Errorf("saved %q, %v", b, err)
	}
	h.Key(tcell.KeyRune, 'i') // Info, the last column, at the edge
	h.Key(tcell.KeyRune, ')')
	h.Until("the last column takes the rest of the line")
}

// TestTimeFormatKept: the time format t chose is the next start's.
func TestTimeFormatKept(t *testing.T) {
	saved := filepath.Join(t.TempDir(), "time-format")
	h := open(t, "pingpong.pcap", 120, 40, Options{TimeFile: saved})
	h.Until("[SYN]")
	h.Key(tcell.KeyRune, 't')
	h.Key(tcell.KeyRune, 't')
	h.Until("time: delta")
	h = open(t, "pingpong.pcap", 120, 40, Options{TimeFile: saved})
	if head := h.listLines()[0]; !strings.Contains(head, "delta") {
		t.Errorf("restarted: header %q, want the delta time kept", head)
	}
	if err := os.WriteFile(saved, []byte("sideways\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h = open(t, "pingpong.pcap", 120, 40, Options{TimeFile: saved})
	h.untilSquashed(t, `"sideways" is no time format`)
}
