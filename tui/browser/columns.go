package browser

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/decode"
)

// The packet list's columns are the user's choice (package columns: its
// spec is the flag's, the o prompt's and the config file's).

// listColumn is one column of the packet list: its spec, and what the
// list makes of it.
type listColumn struct{ columns.Column }

// rightAligned columns hold numbers.
func (c listColumn) rightAligned() bool {
	if c.Kind == colField {
		k := c.Field.Kind
		return (k == decode.KindUint && !c.Field.Hex && c.Field.Enum == nil) || k == decode.KindTime
	}
	return c.Kind == colNo || c.Kind == colTime || c.Kind == colLength
}

// defaultColumns is Wireshark's layout.
func defaultColumns() []listColumn { return listColumns(columns.Default()) }

func listColumns(cs []columns.Column) []listColumn {
	cols := make([]listColumn, len(cs))
	for i, c := range cs {
		cols[i] = listColumn{c}
	}
	return cols
}

// trackerColumns are the tracker's fields a column can show: the index
// keeps them per frame. Others are known only in a pass over the whole
// capture.
var trackerColumns = map[decode.FieldID]bool{fConnID: true, fLinkID: true}

// parseColumns reads a column spec.
func parseColumns(spec string) ([]listColumn, error) {
	cs, err := columns.Parse(spec, func(d decode.FieldDef) error {
		if d.Owner.Tracker() && !trackerColumns[d.ID] {
			return errors.New("the tracker fills it in a pass over the whole capture; of its fields a column shows smc.conn.id and smc.link.id (a filter takes any)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return listColumns(cs), nil
}

// formatColumns writes a layout as its spec.
func formatColumns(cols []listColumn) string {
	cs := make([]columns.Column, len(cols))
	for i, c := range cols {
		cs[i] = c.Column
	}
	return columns.Format(cs)
}

// ColumnsFile is where smcdump -I keeps the list's column layout (the
// spec, one line): smcscope/columns in the user's configuration
// directory, beside the filter history; "" when there is none.
func ColumnsFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "smcscope", "columns")
}

// loadColumns reads a saved layout; nil without error when none was saved.
func loadColumns(path string) ([]listColumn, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	cols, err := parseColumns(string(bytes.TrimSpace(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cols, nil
}

// saveColumns keeps a layout, through a file renamed over the old one.
func saveColumns(path string, cols []listColumn) error {
	return saveFile(path, ".columns-*", formatColumns(cols)+"\n")
}

// ParseColumns checks a column spec (smcdump -o column.format:SPEC), for
// the flag's error before the browser starts.
func ParseColumns(spec string) error {
	_, err := parseColumns(spec)
	return err
}

// setColumns makes cols the list's layout: the rows are decoded again
// for the fields it shows, the widths fitted again, and the list back in
// frame order (a sort's column may be gone).
func (b *Browser) setColumns(cols []listColumn) {
	b.cols = cols
	b.fieldCols = b.fieldCols[:0]
	for _, c := range cols {
		if c.Kind == colField {
			b.fieldCols = append(b.fieldCols, c.Field)
		}
	}
	b.widths = make([]int, len(cols))
	b.hoff = 0
	b.rows.mu.Lock()
	b.rows.lines = map[int32]row{}
	b.rows.mu.Unlock()
	if b.sort != (sortState{}) || b.sortRunning {
		b.sortBy(sortState{})
	}
	b.refusedSet = false
}

// changeColumns applies a layout the user chose (C, o) and keeps it in
// the columns file.
func (b *Browser) changeColumns(cols []listColumn) {
	b.setColumns(cols)
	b.message = "columns: " + tview.Escape(formatColumns(cols))
	if b.opts.ColumnsFile == "" {
		return
	}
	b.settingsErr = ""
	if err := saveColumns(b.opts.ColumnsFile, cols); err != nil {
		b.settingsErr = fmt.Sprintf("[yellow]columns not saved: %s[-]", tview.Escape(err.Error()))
	}
}

// addFieldColumn adds the field selected in the field tree as a column
// before the last one (Info), as Wireshark's "Apply as Column".
func (b *Browser) addFieldColumn() {
	var ref *treeRef
	if node := b.tree.GetCurrentNode(); node != nil {
		ref, _ = node.GetReference().(*treeRef)
	}
	if ref == nil || !ref.hasField {
		b.message = "[yellow]select a field in the field tree first (tab goes there); o names any field[-]"
		return
	}
	d := decode.Def(ref.field)
	for _, c := range b.cols {
		if c.Kind == colField && c.Field.ID == d.ID {
			b.message = fmt.Sprintf("[yellow]%s is a column already (o edits the columns)[-]", d.Name)
			return
		}
	}
	cols := slices.Clone(b.cols)
	cols = slices.Insert(cols, max(len(cols)-1, 0), listColumn{columns.Column{Kind: colField, Field: d}})
	b.changeColumns(cols)
}

// columnsHelp is the o prompt's hint while its spec is good.
const columnsHelp = "[gray][TITLE=[]NAME[:WIDTH[], comma-separated: No. Time Source Destination Protocol Length Info or a field (tab completes); the last takes the rest; empty: Wireshark's[-]"

// columnsChanged checks the o prompt's spec as it is typed, as the
// filter bar checks a filter.
func (b *Browser) columnsChanged(text string) {
	if strings.TrimSpace(text) == "" {
		b.prompt.SetFieldBackgroundColor(tcell.ColorDarkBlue)
		b.setHint(columnsHelp)
		return
	}
	if _, err := parseColumns(text); err != nil {
		b.prompt.SetFieldBackgroundColor(tcell.ColorDarkRed)
		b.setHint("[red]" + tview.Escape(err.Error()) + "[-]")
		return
	}
	b.prompt.SetFieldBackgroundColor(tcell.ColorDarkGreen)
	b.setHint(columnsHelp)
}

// leftColumn is the column at the list's left edge (←/→ scroll a column
// at a time): the one {, }, (, ) and D act on.
func (b *Browser) leftColumn() int {
	at := 0
	for i := range len(b.cols) - 1 {
		at += b.width(i) + 2
		if b.hoff < at {
			return i
		}
	}
	return len(b.cols) - 1
}

// startOf is where column i starts in a row's text.
func (b *Browser) startOf(i int) int {
	at := 0
	for k := range i {
		at += b.width(k) + 2
	}
	return at
}

// moveColumn moves the column at the left edge one place left (dir -1)
// or right, the list scrolled to keep it at the edge.
func (b *Browser) moveColumn(dir int) {
	i := b.leftColumn()
	j := i + dir
	if j < 0 || j >= len(b.cols) {
		b.message = "[yellow]the column is at the end already[-]"
		return
	}
	cols, widths := slices.Clone(b.cols), slices.Clone(b.widths)
	cols[i], cols[j] = cols[j], cols[i]
	widths[i], widths[j] = widths[j], widths[i]
	b.changeColumns(cols)
	copy(b.widths, widths) // fitted again as drawn; no jump meanwhile
	b.hoff = b.startOf(j)
}

// resizeColumn makes the column at the left edge narrower (dir -1) or
// wider by two characters; the width is then the user's, kept with the
// layout.
func (b *Browser) resizeColumn(dir int) {
	i := b.leftColumn()
	if i == len(b.cols)-1 {
		b.message = "[yellow]the last column takes the rest of the line: move another one to the edge (←/→)[-]"
		return
	}
	cols := slices.Clone(b.cols)
	cols[i].Width = min(max(b.width(i)+2*dir, 1), 200)
	widths, hoff := slices.Clone(b.widths), b.hoff
	b.changeColumns(cols)
	copy(b.widths, widths)
	b.hoff = hoff
}

// removeColumn takes the column at the left edge out of the layout.
func (b *Browser) removeColumn() {
	if len(b.cols) == 1 {
		b.message = "[yellow]the list's last column stays (o changes it)[-]"
		return
	}
	i := b.leftColumn()
	widths := slices.Delete(slices.Clone(b.widths), i, i+1)
	b.changeColumns(slices.Delete(slices.Clone(b.cols), i, i+1))
	copy(b.widths, widths)
	b.hoff = b.startOf(min(i, len(b.cols)-1))
}

// timeFormatKeys name the time formats in the file that keeps the one
// chosen.
var timeFormatKeys = [numTimeFormats]string{"relative", "absolute", "delta", "epoch"}

// TimeFile is where smcdump -I keeps the time format t chose:
// smcscope/time-format in the user's configuration directory; "" when
// there is none.
func TimeFile() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "smcscope", "time-format")
}

// loadTimeFormat reads the time format kept in path: relative when none
// was kept.
func loadTimeFormat(path string) (timeFormat, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return timeRelative, nil
	}
	if err != nil {
		return timeRelative, err
	}
	name := string(bytes.TrimSpace(b))
	for f, k := range timeFormatKeys {
		if k == name {
			return timeFormat(f), nil
		}
	}
	return timeRelative, fmt.Errorf("%s: %q is no time format (relative, absolute, delta, epoch)", path, name)
}
