package browser

import (
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/output"
)

// The packet list has Wireshark's columns, aligned: No., Time, Source,
// Destination, Protocol, Length, Info, and any field the user adds
// (columns.go). A row is decoded once, to typed values (times, endpoints,
// lengths) and its field columns' text, and formatted when drawn, so the
// time format (t) and the horizontal scroll (←/→) cost no decoding.

// The list's names of what a column shows (package columns' kinds).
const (
	colNo     = columns.No
	colTime   = columns.Time
	colSource = columns.Source
	colDest   = columns.Destination
	colProto  = columns.Protocol
	colLength = columns.Length
	colInfo   = columns.Info
	colField  = columns.Field
)

// maxEndpointWidth caps the Source and Destination columns: the widest
// IPv6 address with a port, [ffff:...:ffff]:65535.
const maxEndpointWidth = 47

// timeFormat is how the Time column shows a frame's time (t cycles).
type timeFormat uint8

const (
	timeRelative timeFormat = iota // seconds since the first frame, as smcdump's lines
	timeAbsolute                   // time of day, UTC
	timeDelta                      // seconds since the row above (Wireshark's delta displayed)
	timeEpoch                      // seconds since 1970
	numTimeFormats
)

var timeFormatNames = [numTimeFormats]string{"relative", "absolute (UTC)", "delta", "epoch"}

// row is one decoded row of the list: its columns as typed values.
type row struct {
	time     time.Time
	src, dst output.Endpoint
	proto    string
	length   int // bytes on the wire
	info     string
	class    rowClass
	fields   []string // the field columns' text, in the layout's order (Browser.fieldCols)
}

// rowClass says what a frame is, from its decoded layers, for the list's
// colours.
type rowClass uint8

const (
	rowPlain   rowClass = iota
	rowError            // a decode error or malformed SMC message: red
	rowDecline          // a CLC Decline: yellow
	rowLLC              // link-group control: aqua
	rowCLC              // the CLC handshake: green
)

// classOf says what a decoded frame is.
func classOf(f *capture.Frame) rowClass {
	switch {
	case f.Err != nil || f.SMCMalformed || len(f.CLCErr) > 0:
		return rowError
	}
	for _, c := range f.CLC {
		if c.Type == decode.CLCTypeDecline {
			return rowDecline
		}
	}
	switch {
	case f.LLC != nil:
		return rowLLC
	case len(f.CLC) > 0:
		return rowCLC
	}
	return rowPlain
}

// rowOfFrame reads a decoded frame's columns. A segment that completes
// several CLC messages has one row, their summaries joined by " | ".
func rowOfFrame(f *capture.Frame) row {
	// The protocol of its last CLC message (-1 where it has none).
	r := row{time: f.CI.Timestamp, proto: output.Protocol(f, len(f.CLC)-1), length: f.CI.Length, class: classOf(f)}
	r.src, r.dst = output.Endpoints(f)
	r.info = string(output.AppendInfo(nil, f, -1))
	return r
}

// lines decodes frames to their rows.
func (b *Browser) lines(ns []int32) map[int32]row { return b.idx.rows(ns, b.fieldCols) }

// rows decodes frames to their rows, with the values of fields.
func (x *Index) rows(ns []int32, fields []decode.FieldDef) map[int32]row {
	out := make(map[int32]row, len(ns))
	_ = x.Decode(ns, func(n int32, f *capture.Frame) {
		r := rowOfFrame(f)
		if len(fields) > 0 {
			r.fields = x.fieldTexts(n, f, fields)
		}
		out[n] = r
	})
	return out
}

// fieldTexts are frame n's values of fields, as the field tree writes
// them (hex, names), occurrences joined by commas.
func (x *Index) fieldTexts(n int32, f *capture.Frame, fields []decode.FieldDef) []string {
	rec := f.Fields()
	out := make([]string, len(fields))
	for i, d := range fields {
		if trackerColumns[d.ID] {
			conn, link := x.Conn(int(n))
			if v := map[decode.FieldID]int{fConnID: conn, fLinkID: link}[d.ID]; v != 0 {
				out[i] = strconv.Itoa(v)
			}
			continue
		}
		var s []string
		for k, id := range rec.IDs {
			if id == d.ID {
				s = append(s, rec.Vals[k].Display(d))
			}
		}
		out[i] = strings.Join(s, ",")
	}
	return out
}

// maxCachedRows bounds the rows kept decoded: scrolling through a whole
// big capture would otherwise keep every row.
const maxCachedRows = 200000

// rowContent is the virtual table content: the frame numbers of the list
// and the rows decoded so far (only those the user looked at).
type rowContent struct {
	tview.TableContentReadOnly
	b     *Browser
	mu    sync.Mutex
	ns    frameList
	lines map[int32]row
}

// frames is the list's frames, in its order; the list is not changed
// afterwards (setFrames replaces it).
func (c *rowContent) frames() frameList {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ns
}

func (c *rowContent) setFrames(ns frameList) {
	c.mu.Lock()
	c.ns = ns
	c.mu.Unlock()
}

func (c *rowContent) GetRowCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ns.len()
}

func (c *rowContent) GetColumnCount() int { return 1 }

// ensure decodes the rows lo..hi-1 of the list that are not decoded yet.
func (c *rowContent) ensure(lo, hi int) {
	c.mu.Lock()
	lo, hi = max(0, lo), min(c.ns.len(), hi)
	var want []int32
	for i := lo; i < hi; i++ {
		n := c.ns.at(i)
		if _, ok := c.lines[n]; !ok {
			want = append(want, n)
		}
	}
	c.mu.Unlock()
	if len(want) == 0 {
		return
	}
	got := c.b.lines(want)
	c.mu.Lock()
	if len(c.lines)+len(got) > maxCachedRows {
		c.lines = make(map[int32]row, len(got))
	}
	for k, v := range got {
		c.lines[k] = v
	}
	c.mu.Unlock()
}

// at returns the list's row i, decoding the rows around it when it is not
// decoded yet (the rows about to be drawn), and the row above it for
// the delta time.
func (c *rowContent) at(i int) (n int32, r, prev row, ok bool) {
	c.mu.Lock()
	if i < 0 || i >= c.ns.len() {
		c.mu.Unlock()
		return 0, r, prev, false
	}
	n = c.ns.at(i)
	_, have := c.lines[n]
	var above int32
	if i > 0 {
		above = c.ns.at(i - 1)
	}
	if i > 0 && have {
		_, have = c.lines[above]
	}
	c.mu.Unlock()
	if !have {
		c.ensure(i-16, i+64)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r = c.lines[n]
	if i > 0 {
		prev = c.lines[above]
	}
	return n, r, prev, true
}

func (c *rowContent) GetCell(i, _ int) *tview.TableCell {
	n, r, prev, ok := c.at(i)
	if !ok {
		return nil
	}
	// The first column marks a frame: * marked by the user, else ! for
	// an expert warning or error on it, i for a note or chat (e lists
	// them).
	sev := c.b.idx.Severity(int(n))
	mark := " "
	switch {
	case c.b.marks[n]:
		mark = "*"
	case sev >= expert.Warn:
		mark = "!"
	case sev > expert.SeverityNone:
		mark = "i"
	}
	cols := c.b.cells(n, r, prev)
	cell := tview.NewTableCell(tview.Escape(mark + c.b.scrolled(c.b.join(cols)))).SetExpansion(1)
	switch {
	case r.class == rowError || sev == expert.Error:
		cell.SetTextColor(tcell.ColorRed)
	case r.class == rowDecline || sev == expert.Warn:
		cell.SetTextColor(tcell.ColorYellow)
	case r.class == rowLLC:
		cell.SetTextColor(tcell.ColorAqua)
	case r.class == rowCLC:
		cell.SetTextColor(tcell.ColorGreen)
	}
	return cell
}

// cells formats row r of frame n as the list's columns; prev is the row
// above it (for the delta time).
func (b *Browser) cells(n int32, r, prev row) []string {
	c := make([]string, len(b.cols))
	field := 0
	for i, col := range b.cols {
		switch col.Kind {
		case colNo:
			c[i] = strconv.Itoa(int(n))
		case colTime:
			c[i] = b.formatTime(r.time, prev.time)
		case colSource:
			c[i] = r.src.String()
		case colDest:
			c[i] = r.dst.String()
		case colProto:
			c[i] = r.proto
		case colLength:
			c[i] = strconv.Itoa(r.length)
		case colInfo:
			c[i] = r.info
		case colField:
			if field < len(r.fields) {
				c[i] = r.fields[field]
			}
			field++
		}
	}
	return c
}

// formatTime writes t in the chosen format; prev is the time of the row
// above (zero for the first row).
func (b *Browser) formatTime(t, prev time.Time) string {
	if t.IsZero() {
		return ""
	}
	digits := b.idx.shown
	switch b.timeFmt {
	case timeAbsolute:
		// The decimals of the epoch time, cut as frame.time_epoch cuts
		// them: rounding could carry into the seconds.
		epoch := string(decode.AppendTime(nil, t.UnixNano(), digits))
		_, frac, _ := strings.Cut(epoch, ".")
		if frac == "" {
			return t.UTC().Format("15:04:05")
		}
		return t.UTC().Format("15:04:05") + "." + frac
	case timeDelta:
		if prev.IsZero() {
			prev = t
		}
		return string(output.AppendSeconds(nil, t.Sub(prev), digits))
	case timeEpoch:
		return string(decode.AppendTime(nil, t.UnixNano(), digits))
	}
	return string(output.AppendSeconds(nil, t.Sub(b.idx.base), digits))
}

// join lays the columns out at their widths, two spaces apart; the last
// one (Info in Wireshark's layout) takes the rest of the line.
func (b *Browser) join(c []string) string {
	var s strings.Builder
	for i := range c {
		if i > 0 {
			s.WriteString("  ")
		}
		text, w := c[i], b.width(i)
		if i == len(c)-1 {
			s.WriteString(text)
			break
		}
		if n := utf8.RuneCountInString(text); n > w {
			text = string([]rune(text)[:max(w-1, 0)]) + "…"
		} else if pad := strings.Repeat(" ", w-n); b.cols[i].rightAligned() {
			text = pad + text
		} else {
			text += pad
		}
		s.WriteString(text)
	}
	return s.String()
}

// scrolled is a row's text scrolled hoff characters to the left (←/→).
func (b *Browser) scrolled(text string) string {
	if b.hoff <= 0 {
		return text
	}
	i := 0
	for k := range text {
		if i == b.hoff {
			return text[k:]
		}
		i++
	}
	return ""
}

// width is column i's width: the user's, or fitted to the rows.
func (b *Browser) width(i int) int {
	if w := b.cols[i].Width; w > 0 {
		return w
	}
	return b.widths[i]
}

// maxFieldWidth caps a field column fitted to its rows (a CLC's EID, a
// bytes field): o sets a wider one.
const maxFieldWidth = 32

// fitColumns widens the columns to the rows lo..hi-1 (those on screen):
// columns only grow, so rows keep their places as the list scrolls.
func (b *Browser) fitColumns(lo, hi int) {
	if len(b.widths) != len(b.cols) {
		b.widths = make([]int, len(b.cols))
	}
	head := b.headerCells()
	last := len(b.cols) - 1
	for i := range last {
		b.widths[i] = max(b.widths[i], utf8.RuneCountInString(head[i]))
	}
	for i := lo; i < hi; i++ {
		n, r, prev, ok := b.rows.at(i)
		if !ok {
			break
		}
		c := b.cells(n, r, prev)
		for k := range last {
			w := utf8.RuneCountInString(c[k])
			switch b.cols[k].Kind {
			case colSource, colDest:
				w = min(w, maxEndpointWidth)
			case colField:
				w = min(w, maxFieldWidth)
			}
			b.widths[k] = max(b.widths[k], w)
		}
	}
}

// headerCells are the column titles: the time format when it is not
// relative, an arrow on the sorted column.
func (b *Browser) headerCells() []string {
	c := make([]string, len(b.cols))
	for i, col := range b.cols {
		c[i] = col.Heading()
		if col.Kind == colTime && col.Title == "" && b.timeFmt != timeRelative {
			c[i] = timeFormatNames[b.timeFmt]
		}
	}
	if b.sort.on && b.sort.col < len(c) {
		c[b.sort.col] += " " + b.sort.arrow()
	}
	return c
}

// header is the list's column titles, laid out and scrolled as the rows.
func (b *Browser) header() string {
	return " " + b.scrolled(b.join(b.headerCells()))
}

// listPane is the packet list's pane: a border around the column header
// and the table of rows. Before drawing, it decodes the rows about to be
// shown and fits the columns to them, so every row on screen is laid out
// with the same widths.
type listPane struct {
	*tview.Flex
	b    *Browser
	head *tview.TextView
}

func newListPane(b *Browser) *listPane {
	p := &listPane{Flex: tview.NewFlex().SetDirection(tview.FlexRow), b: b}
	p.head = tview.NewTextView().SetWrap(false).SetDynamicColors(false)
	p.head.SetTextStyle(tcell.StyleDefault.Bold(true).Underline(true))
	p.AddItem(p.head, 1, 0, false).AddItem(b.list, 0, 1, true)
	p.SetBorder(true).SetTitle(" frames ")
	return p
}

func (p *listPane) Draw(screen tcell.Screen) {
	b := p.b
	top, _ := b.list.GetOffset()
	_, _, _, h := p.GetInnerRect()
	sel, _ := b.list.GetSelection()
	if sel < top || sel >= top+h {
		top = max(0, sel-h/2) // the table scrolls to the selection as it draws
	}
	b.rows.ensure(top-1, top+h+1)
	b.fitColumns(top, top+h)
	if b.reveal != revealNone {
		_, _, w, _ := b.list.GetInnerRect()
		b.revealColumn(b.reveal, w)
		b.reveal = revealNone
	}
	p.head.SetText(b.header())
	p.Flex.Draw(screen)
}

// MouseHandler sorts the list by the column whose title is clicked, as
// Wireshark does (again: the other way); the rest goes to the pane.
func (p *listPane) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (consumed bool, capture tview.Primitive) {
	inner := p.Flex.MouseHandler()
	return func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		x, y := event.Position()
		hx, hy, _, _ := p.head.GetRect()
		click := action == tview.MouseLeftClick || action == tview.MouseLeftDoubleClick // two quick clicks: both count
		if !click || y != hy || !p.head.InRect(x, y) {
			return inner(action, event, setFocus)
		}
		// The header is the rows' layout after one cell for the marks.
		b := p.b
		if col := b.columnAt(x - hx - 1 + b.hoff); col >= 0 {
			s := sortState{col: col, on: true}
			if t := b.sortTarget(); t.on && t.col == col {
				s.desc = !t.desc
			}
			b.sortBy(s)
			b.redraw()
		}
		setFocus(b.list)
		return true, nil
	}
}

// columnAt is the column at character at of a row's text, -1 for the
// gap between two columns.
func (b *Browser) columnAt(at int) int {
	for i := range len(b.cols) - 1 {
		w := b.width(i)
		if at < w {
			return i
		}
		if at -= w + 2; at < 0 {
			return -1
		}
	}
	return len(b.cols) - 1
}

// Focus gives the table the focus: the pane is what the layout places,
// the table what keys move.
func (p *listPane) Focus(delegate func(tview.Primitive)) { delegate(p.b.list) }

// HasFocus reports whether the table has the focus.
func (p *listPane) HasFocus() bool { return p.b.list.HasFocus() }

// infoStep is how far ←/→ move within the Info column, past the others.
const infoStep = 16

// scroll moves the list's text by one step to the right (dir 1) or left
// (-1): to the start of the next or previous column, so that each press
// hides or shows one column whole, then infoStep characters at a time
// through Info.
func (b *Browser) scroll(dir int) {
	var stops []int
	at := 0
	for i := range len(b.cols) - 1 {
		stops = append(stops, at)
		at += b.width(i) + 2
	}
	info := at
	switch {
	case dir > 0 && b.hoff >= info:
		b.hoff += infoStep
	case dir > 0:
		for _, s := range append(stops, info) {
			if s > b.hoff {
				b.hoff = s
				break
			}
		}
	case b.hoff > info:
		b.hoff = max(info, b.hoff-infoStep)
	default:
		for i := len(stops) - 1; i >= 0; i-- {
			if stops[i] < b.hoff {
				b.hoff = stops[i]
				break
			}
		}
	}
}

// toInfo scrolls the list so that Info (the last column) starts at its
// left edge, or back to the first column when it does.
func (b *Browser) toInfo() {
	info := 0
	for i := range len(b.cols) - 1 {
		info += b.width(i) + 2
	}
	if b.hoff == info {
		b.hoff = 0
	} else {
		b.hoff = info
	}
}

// revealNone: no column to scroll into view.
const revealNone = -1

// revealColumn scrolls the list (as ←/→ do, a column at a time) so that
// column col shows whole in a list w wide: the column just sorted by,
// which at 80 columns may lie past the right edge, its values cut to "…".
func (b *Browser) revealColumn(col int, w int) {
	if w <= 0 || col >= len(b.cols) {
		return
	}
	var stops []int
	at := 0
	for i := range col {
		stops = append(stops, at)
		at += b.width(i) + 2
	}
	width := max(b.width(col), utf8.RuneCountInString(b.headerCells()[col]))
	if col == len(b.cols)-1 {
		width = min(width, infoStep) // its start is what tells it
	}
	// The row's mark takes one cell, and a row cut at the edge ends in
	// "…", which takes one more.
	room := w - 2
	switch {
	case at < b.hoff:
		b.hoff = at
	case at+width-b.hoff > room:
		b.hoff = at
		for _, s := range stops {
			if at+width-s <= room {
				b.hoff = s
				break
			}
		}
	}
}

// cycleTime switches the Time column to the next format; its width is
// fitted again.
func (b *Browser) cycleTime() {
	b.timeFmt = (b.timeFmt + 1) % numTimeFormats
	for i, c := range b.cols {
		if c.Kind == colTime && i < len(b.widths) {
			b.widths[i] = 0
		}
	}
}
