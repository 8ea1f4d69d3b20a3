package browser

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/track/rows"
	"github.com/smcscope/smcscope/tui"
)

// Options are the browser's settings.
type Options struct {
	Write  string // -w: export file for `w`
	Filter string // -Y: the display filter applied at the start
	All    bool   // -a: start with every frame, not only the SMC-relevant ones
	// History is the file the filters applied are kept in, read at the
	// start (HistoryFile; "": kept in memory only).
	History string
	// Columns is the list's layout, a column spec (columns.go; smcdump -o
	// column.format:SPEC); "" is the saved one, else Wireshark's.
	Columns string
	// ColumnsFile is where the layout is kept when the user changes it,
	// and read from at the start (ColumnsFile; "": not kept).
	ColumnsFile string
	// TimeFile is where the time format t chose is kept, and read from
	// at the start (TimeFile; "": not kept).
	TimeFile string
}

// Browser is the capture browser over an Index.
type Browser struct {
	App    *tui.Shell
	idx    *Index
	opts   Options
	list   *tview.Table
	rows   *rowContent
	tree   *tview.TreeView
	hex    *hexView
	status *tview.TextView
	prompt *tview.InputField
	body   *tview.Flex
	// listBox is the packet list's pane; lower holds the field tree and
	// the hex pane; hint is the lines above the prompt (see setHint).
	listBox   tview.Primitive
	lower     *lowerPanes
	hint      *tview.TextView
	hintText  string
	hintLines int
	// statusLines is the status line's height: it wraps, up to
	// maxStatusLines, rather than cut a message or a read error's cause.
	// statusText is its text without the keys' hint, which fitStatus
	// adds where it costs no line.
	statusLines int
	statusText  string

	promptKind promptKind
	history    []string // filters applied, oldest first (↑/↓ in the prompt)
	histPos    int      // the history entry the prompt shows; len: the text typed
	historyErr string   // why the history file could not be read or written, for the status line
	draft      string   // the text typed, kept while ↑ shows older filters
	// exportMarked: the export prompt is for the marked frames (W);
	// confirm is a file name the user was told exists.
	exportMarked bool
	confirm      string

	needle     needle // the last search (ctrl-f, n, N)
	needleText string // as typed
	found      span   // the bytes of the search hit, highlighted once its frame is shown
	// collapsed are the field tree's layers the user collapsed (by key):
	// they stay collapsed in the frames shown after.
	collapsed map[string]bool

	back, fwd []place // the jump history ([ and ])
	restoring bool    // a place is being restored: no jump to record

	zoomed    tview.Primitive // the pane z shows alone, nil for all
	split     int             // the list's share of the height, in tenths
	hexHidden bool            // x

	timeFmt timeFormat // t
	sort    sortState  // < > s
	// sorting is the order a sort still running in the background will
	// give (valid while sortRunning): a key pressed meanwhile moves on
	// from it, not from the order shown.
	sorting     sortState
	sortRunning bool
	// refused is the column > or < last reached whose sort was refused
	// (too many rows to decode), valid while refusedSet: the next press
	// moves on from it, so a large list still reaches Length.
	refused    int
	refusedSet bool
	// reveal is a column the list's next draw scrolls into view (the
	// column just sorted by), revealNone when none.
	reveal int
	// unsorted is the list in frame order, as setList set it.
	unsorted frameList
	// cols is the list's layout (columns.go); fieldCols its fields, in
	// order, which rows are decoded with.
	cols      []listColumn
	fieldCols []decode.FieldDef
	// settingsErr says why a saved setting (the layout, the time format)
	// was not read or written.
	settingsErr string
	widths      []int // of the list's columns (fitColumns; the last takes the rest)
	hoff        int   // characters the list is scrolled to the left (←/→)

	mode    string // "relevant", "all", "filter EXPR", "follow N"
	base    string // where esc goes: "relevant" or "all" (a, -a)
	marks   map[int32]bool
	message string
	shown   int32 // frame in the tree and hex panes
	// pending cancels the filter pass running in the background: a list
	// chosen meanwhile (esc, f) is not replaced by its late result.
	pending context.CancelFunc
	// liveList makes the list shown again (a filter's pass, a followed
	// connection's frames) while the input grows: it is run again over
	// the frames that arrive (filtered is how many frames the list's last
	// run covered); nil for the lists that are not made again.
	liveList func(context.Context) ([]int32, error)
	filtered int
	data     []byte // its bytes
	ctx      context.Context
}

// New builds the browser over an index.
func New(ctx context.Context, idx *Index, o Options) *Browser {
	b := &Browser{idx: idx, opts: o, marks: map[int32]bool{}, collapsed: map[string]bool{}, ctx: ctx, base: "relevant"}
	if o.All {
		b.base = "all"
	}
	b.rows = &rowContent{b: b, lines: map[int32]row{}}
	b.list = tview.NewTable().SetContent(b.rows).SetSelectable(true, false)
	b.list.SetSelectionChangedFunc(func(row, _ int) { b.showFrame(row) })
	b.tree = tview.NewTreeView()
	b.tree.SetChangedFunc(b.highlight)
	b.tree.SetBorder(true).SetTitle(" fields ")
	b.hex = newHexView()
	b.hex.SetBorder(true).SetTitle(" hex ")
	b.status = tview.NewTextView().SetDynamicColors(true).SetWordWrap(true)
	b.statusLines = 1
	if o.History != "" {
		h, err := loadHistory(o.History)
		if err != nil {
			b.historyErr = fmt.Sprintf("[yellow]filter history not read: %s[-]", tview.Escape(err.Error()))
		}
		b.history = h
	}
	b.reveal = revealNone
	b.cols = defaultColumns()
	if o.ColumnsFile != "" {
		switch cols, err := loadColumns(o.ColumnsFile); {
		case err != nil:
			b.settingsErr = fmt.Sprintf("[yellow]columns not read: %s[-]", tview.Escape(err.Error()))
		case cols != nil:
			b.cols = cols
		}
	}
	if o.Columns != "" {
		if cols, err := parseColumns(o.Columns); err == nil {
			b.cols = cols
		} else {
			b.settingsErr = fmt.Sprintf("[yellow]columns: %s[-]", tview.Escape(err.Error()))
		}
	}
	b.setColumns(b.cols)
	if o.TimeFile != "" {
		f, err := loadTimeFormat(o.TimeFile)
		if err != nil {
			b.settingsErr = fmt.Sprintf("[yellow]time format not read: %s[-]", tview.Escape(err.Error()))
		}
		b.timeFmt = f
	}
	b.hint = tview.NewTextView().SetDynamicColors(true).SetWrap(true)
	b.prompt = tview.NewInputField()
	b.prompt.SetChangedFunc(b.promptChanged)
	b.prompt.SetDoneFunc(b.promptDone)
	b.prompt.SetInputCapture(b.promptKey)
	b.listBox = newListPane(b)
	b.lower = &lowerPanes{Flex: tview.NewFlex(), b: b}
	b.body = tview.NewFlex().SetDirection(tview.FlexRow)
	b.split = defaultSplit
	b.layout()
	b.App = tui.NewShell("smcdump -I", b.body)
	b.App.SetKeys(b.keyTable())
	b.App.SetOwnKeys(b.ownKey)
	b.App.SetHelpReturn(func() tview.Primitive { return b.list })
	b.App.SetBeforeDrawFunc(func(s tcell.Screen) bool {
		w, _ := s.Size()
		b.fitStatus(w)
		return false
	})
	b.setList(b.baseList(), b.base, 0)
	if o.Filter != "" {
		b.applyFilter(o.Filter)
	}
	return b
}

// Keys returns the key table (tests check `?` lists each).
func (b *Browser) Keys() []tui.Binding { return b.App.Keys() }

// Run shows the browser until the user quits or the context ends (SIGTERM,
// SIGINT, SIGHUP: the terminal is restored as by q); the list grows as the
// index does (a live capture follows the tail unless the user scrolled
// away).
func (b *Browser) Run() error {
	// Stopped from the event loop: tview's Stop from another goroutine
	// races with Run setting up the screen.
	stop := context.AfterFunc(b.ctx, func() { b.App.QueueUpdate(b.App.Stop) })
	defer stop()
	go b.watch()
	return b.App.Run()
}

// baseList is the list esc returns to: the SMC-relevant frames, or every
// frame after a or -a.
func (b *Browser) baseList() frameList {
	if b.base == "all" {
		return b.idx.allList()
	}
	return b.idx.relevantList()
}

// watch refreshes the list while the index grows.
func (b *Browser) watch() {
	for {
		ch := b.idx.Changed()
		select {
		case <-b.ctx.Done():
			return
		case <-ch:
		case <-time.After(500 * time.Millisecond):
		}
		n, done, err := b.idx.Progress()
		b.App.QueueUpdateDraw(func() {
			if (b.mode == "relevant" || b.mode == "all") && b.sort == (sortState{}) {
				row, _ := b.list.GetSelection()
				atEnd := row >= b.rows.GetRowCount()-1
				ns := b.idx.relevantList()
				if b.mode == "all" {
					ns = b.idx.allList()
				}
				b.rows.mu.Lock()
				first := b.rows.ns.len() == 0
				b.rows.ns = ns
				b.rows.mu.Unlock()
				b.unsorted = ns
				// A list shorter than the pane when last drawn left tview's
				// table following its end (trackEnd), which would now
				// scroll the grown list away from the selection: keeping
				// the offset clears it.
				top, _ := b.list.GetOffset()
				b.list.SetOffset(top, 0)
				if first && !b.idx.grows() {
					// tview keeps an empty table scrolled to its end; a
					// file opens at its first frame.
					b.list.Select(0, 0)
					b.list.ScrollToBeginning()
				}
				if b.idx.grows() && atEnd && ns.len() > 0 {
					b.list.Select(ns.len()-1, 0) // live: follow the tail unless scrolled away
				}
				if b.shown == 0 && ns.len() > 0 {
					r, _ := b.list.GetSelection()
					b.showFrame(max(r, 0))
				}
			} else if b.liveList != nil && b.pending == nil && b.sort == (sortState{}) && n > b.filtered {
				b.refilter()
			}
			b.drawStatus(n, done, err)
		})
		if done {
			return
		}
	}
}

// setList shows ns as the packet list and selects frame keep there: the
// frame the user was on stays selected when the list changes (follow,
// esc, a filter), or the nearest one after it when the list lacks it; 0
// selects the first row.
func (b *Browser) setList(ns frameList, mode string, keep int32) {
	b.jumped()
	if b.pending != nil {
		b.pending()
		b.pending = nil
	}
	b.sortRunning, b.refusedSet = false, false
	b.message = ""
	b.liveList = nil
	b.rows.setFrames(ns)
	b.mode, b.unsorted, b.sort = mode, ns, sortState{}
	row, _ := ns.rowOf(keep)
	b.selectRow(row)
	b.showFrame(row)
	b.redraw()
}

// selectRow selects a row of the list, scrolled to the middle of the pane
// when it was off screen. A list shorter than the pane leaves tview's
// table following its end (trackEnd), which a longer list would keep,
// with the selection off screen: setting the offset clears that.
func (b *Browser) selectRow(row int) {
	top, _ := b.list.GetOffset()
	_, _, _, h := b.list.GetInnerRect()
	if row < top || row >= top+h {
		top = max(0, row-h/2)
	}
	b.list.SetOffset(top, 0)
	b.list.Select(row, 0)
}

// rowOf returns the row of frame n in ns (ascending frame numbers) and
// whether it is there; when it is not, the row of the first frame after
// n (the last row when none is).
func rowOf(ns []int32, n int32) (int, bool) {
	i, found := slices.BinarySearch(ns, n)
	if i == len(ns) && i > 0 {
		i--
	}
	return i, found
}

// rowOf is rowOf over the list, which a sort may have put out of frame
// order: then the row of frame n, or the first row.
func (b *Browser) rowOf(n int32) (int, bool) {
	b.rows.mu.Lock()
	defer b.rows.mu.Unlock()
	if b.sort == (sortState{}) {
		return b.rows.ns.rowOf(n)
	}
	if i := b.rows.ns.index(n); i >= 0 {
		return i, true
	}
	return 0, false
}

// redraw rewrites the status line.
func (b *Browser) redraw() {
	n, done, err := b.idx.Progress()
	b.drawStatus(n, done, err)
}

func (b *Browser) drawStatus(n int, done bool, err error) {
	st := fmt.Sprintf("%s, %d rows", tview.Escape(b.mode), b.rows.GetRowCount())
	if done && err == nil && n > 0 && b.mode == "relevant" && b.rows.GetRowCount() == 0 {
		// Nothing to list is not nothing read: a capture of no SMC frame
		// (the wrong file, or a framing its link type does not say).
		st += "  [yellow]no SMC frame: a lists every frame[-]"
	}
	if b.message != "" {
		st += "  " + b.message
	}
	if b.historyErr != "" {
		st += "  " + b.historyErr
	}
	if b.settingsErr != "" {
		st += "  " + b.settingsErr
	}
	if len(b.marks) > 0 {
		st += fmt.Sprintf("  %d marked", len(b.marks))
	}
	st += fmt.Sprintf("  %s %d frames", tview.Escape(b.idx.Name()), n)
	if l := b.idx.Limit(); l > 0 && n >= l {
		st += fmt.Sprintf(" (-c %d)", l)
	}
	switch dir, size, why, _, from := b.idx.Kept(); {
	case dir == "" && why != "":
		st += fmt.Sprintf(" [yellow](in memory: %s)[-]", tview.Escape(why))
	case dir != "":
		verb := "unpacked" // a gzip file
		if b.idx.pipe {
			verb = "copied" // what a pipe gave, to read frames back
		}
		if why == "" {
			st += fmt.Sprintf(" [gray](%s to %s, %s)[-]", verb, tview.Escape(dir), mib(size))
		} else {
			st += fmt.Sprintf(" [yellow](%s to %s, stopped: %s; frames from %d in memory)[-]", verb, tview.Escape(dir), tview.Escape(why), from)
		}
	}
	switch {
	case b.idx.grows():
		st += " " + b.liveState(done, err)
	case !done:
		st += " [yellow](indexing…)[-]"
	}
	if err != nil {
		st += " [red]" + tview.Escape(err.Error()) + "[-]"
	}
	b.statusText = st
	_, _, w, _ := b.body.GetRect()
	b.fitStatus(w)
}

// liveState is the status line's word on an input that grows: live while
// frames may still come (with how long ago the last one did, once that is
// a while, so a quiet input is told from a stuck screen), ended once the
// writer closed the pipe.
func (b *Browser) liveState(done bool, err error) string {
	switch {
	case done && err == nil && (b.idx.live || b.idx.LimitReached()):
		return "[gray](stopped)[-]"
	case done && err == nil:
		return "[gray](ended: the writer closed it)[-]"
	case done:
		return "[gray](ended)[-]"
	}
	what := "live"
	if b.idx.tail {
		what = "following the file as it grows"
	}
	last := b.idx.LastFrame()
	switch {
	case last.IsZero():
		return fmt.Sprintf("[green](%s: waiting for the first frame)[-]", what)
	case time.Since(last) >= 2*time.Second:
		return fmt.Sprintf("[green](%s: last frame %s ago)[-]", what, time.Since(last).Truncate(time.Second))
	}
	return fmt.Sprintf("[green](%s)[-]", what)
}

const maxStatusLines = 4

// statusHints are the keys' hints the status line ends with, the longest
// first: a line that ran onto another for "q quit" alone (at 80 columns,
// a filter's and the file's words) would take a row from the list.
var statusHints = []string{"  [gray]? help  q quit[-]", "  [gray]? help[-]", ""}

// fitStatus writes the status line for width w, with the longest key
// hint that takes no line more than its text, and gives it the lines it
// takes.
func (b *Browser) fitStatus(w int) {
	if w <= 0 {
		return
	}
	// The lines a text takes: the view's own word wrap of its text
	// without the colour tags.
	wrapped := func(s string) int {
		b.status.SetText(s)
		return max(len(tview.WordWrap(b.status.GetText(true), w)), 1)
	}
	text := b.statusText
	need := wrapped(text)
	for _, h := range statusHints {
		if wrapped(text+h) <= need {
			text += h
			break
		}
	}
	lines := min(need, maxStatusLines)
	if lines != b.statusLines {
		b.statusLines = lines
		b.body.ResizeItem(b.status, lines, 0)
	}
}

// mib says a size in MiB, or GiB from 10 GiB.
func mib(n int64) string {
	if n >= 10<<30 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%d MiB", (n+1<<20-1)>>20)
}

func (b *Browser) selected() int32 {
	row, _ := b.list.GetSelection()
	b.rows.mu.Lock()
	defer b.rows.mu.Unlock()
	if row < 0 || row >= b.rows.ns.len() {
		return 0
	}
	return b.rows.ns.at(row)
}

func (b *Browser) applyFilter(expr string) {
	if expr == "" {
		b.setList(b.baseList(), b.base, b.selected())
		return
	}
	flt, err := filter.Compile(expr)
	if err != nil {
		return // shown while typing
	}
	b.message = "[yellow]filtering…[-]"
	covered, _, _ := b.idx.Progress()
	b.background(func(ctx context.Context) func() {
		start := time.Now()
		ns, err := b.idx.Filter(ctx, flt)
		return func() {
			b.setList(listOf(ns), "filter "+expr, b.selected())
			b.message = fmt.Sprintf("(%v)", time.Since(start).Round(time.Millisecond))
			if err != nil {
				b.message = "[red]" + tview.Escape(err.Error()) + "[-]"
				return
			}
			b.keepLive(func(ctx context.Context) ([]int32, error) { return b.idx.Filter(ctx, flt) }, covered)
		}
	})
}

// keepLive makes the list shown again with again as an input that grows
// brings frames; covered is how many frames it was made from.
func (b *Browser) keepLive(again func(context.Context) ([]int32, error), covered int) {
	if !b.idx.grows() {
		return
	}
	b.liveList, b.filtered = again, covered
	b.catchUp()
}

// catchUp makes the live list again when frames came during its last run.
func (b *Browser) catchUp() {
	if n, _, _ := b.idx.Progress(); n > b.filtered {
		b.refilter()
	}
}

// refilter makes the live list again over an input that grew (one run at
// a time, as the list is told of new frames): the list takes in the new
// frames and follows its tail as the unfiltered one does. The earlier
// frames are in it as before, so the rows above stay in place.
func (b *Browser) refilter() {
	again, mode := b.liveList, b.mode
	covered, _, _ := b.idx.Progress()
	b.background(func(ctx context.Context) func() {
		ns, err := again(ctx)
		return func() {
			if err != nil || b.mode != mode {
				return
			}
			row, _ := b.list.GetSelection()
			atEnd := row >= b.rows.GetRowCount()-1
			b.rows.setFrames(listOf(ns))
			b.unsorted, b.filtered = listOf(ns), covered
			if atEnd && len(ns) > 0 {
				b.list.Select(len(ns)-1, 0)
			}
			b.catchUp()
		}
	})
}

// background runs work (a pass over the capture) off the UI goroutine,
// then the function it returns on it, unless a list chosen meanwhile (esc,
// f) or another pass replaced it: setList and the next pass cancel it.
func (b *Browser) background(work func(ctx context.Context) (done func())) {
	if b.pending != nil {
		b.pending()
	}
	b.sortRunning = false // sortBy sets it again for its own work
	ctx, cancel := context.WithCancel(b.ctx)
	b.pending = cancel
	go func() {
		done := work(ctx)
		b.App.QueueUpdateDraw(func() {
			if ctx.Err() != nil {
				return // replaced meanwhile
			}
			b.pending = nil
			cancel()
			done()
			b.redraw()
		})
	}()
}

// gotoFrame selects the frame `:N` names; one outside the list is shown
// among all frames, and the status line says so.
func (b *Browser) gotoFrame(text string) {
	if text == "" {
		return
	}
	n, err := strconv.Atoi(strings.TrimPrefix(text, "#"))
	if err != nil {
		b.message = "[red]:" + tview.Escape(text) + ": not a frame number[-]"
		return
	}
	total, done, _ := b.idx.Progress()
	if n < 1 || n > total {
		so := ""
		if !done {
			so = " so far"
		}
		b.message = fmt.Sprintf("[red]frame %d: the capture has %d frames%s[-]", n, total, so)
		return
	}
	row, in := b.rowOf(int32(n))
	if !in {
		mode := b.mode
		b.setList(b.idx.allList(), "all", int32(n))
		b.message = fmt.Sprintf("[yellow]frame %d is not in the list (%s): showing all frames[-]", n, tview.Escape(mode))
		return
	}
	b.jumped()
	b.selectRow(row)
}

// ownKey reports the keys that belong to the focused widget, not to the
// key table: typing in the prompt, a tracker pane's own keys, and the
// moving keys of the field tree (j/k, g/G, J/K into a layer or up to it,
// space) and of the hex pane (j/k, g/G, h/l).
func (b *Browser) ownKey(ev *tcell.EventKey) bool {
	if b.App.GetFocus() == b.prompt {
		return true
	}
	if name, _ := b.App.Pages.GetFrontPage(); name == "pane" {
		return true // the tracker pane has its own keys (enter, esc, q)
	}
	if ev.Key() != tcell.KeyRune {
		return false
	}
	switch b.App.GetFocus() {
	case b.tree:
		return strings.ContainsRune("jkgGJK ", ev.Rune())
	case b.hex:
		return strings.ContainsRune("jkgGhl", ev.Rune())
	}
	return false
}

// keyTable is the browser's one key table: it dispatches (input) and
// documents (`?`) every key.
func (b *Browser) keyTable() []tui.Binding {
	// Every key's action ends by redrawing the status line, so what it
	// says about the key (a message, why nothing happened) shows at once.
	do := func(f func()) func(*tcell.EventKey) { return func(*tcell.EventKey) { f(); b.redraw() } }
	return []tui.Binding{
		{Key: "j/k, ↓/↑, PgUp/PgDn", Desc: "move in the packet list"},
		{Key: "←/→", Desc: "scroll the packet list left / right: a column at a time, then through Info", Match: func(ev *tcell.EventKey) bool {
			return b.App.GetFocus() == b.list && (ev.Key() == tcell.KeyLeft || ev.Key() == tcell.KeyRight)
		}, Do: func(ev *tcell.EventKey) {
			if ev.Key() == tcell.KeyLeft {
				b.scroll(-1)
			} else {
				b.scroll(1)
			}
		}},
		{Key: "i", Desc: "scroll the packet list to its Info column (again: back to No.)", Match: tui.Rune('i'), Do: do(b.toInfo)},
		{Key: "> <", Desc: "sort the list by the next / previous column (typed values: times, addresses, lengths; No. is frame order)", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == '>' || ev.Rune() == '<')
		}, Do: func(ev *tcell.EventKey) { b.moveSort(map[rune]int{'>': 1, '<': -1}[ev.Rune()]); b.redraw() }},
		{Key: "s", Desc: "reverse the sort order", Match: tui.Rune('s'), Do: do(b.reverseSort)},
		{Key: "t", Desc: "time format: relative (seconds since the first frame), absolute (UTC time of day), delta (since the row above), epoch", Match: tui.Rune('t'), Do: do(func() {
			b.cycleTime()
			b.message = "time: " + timeFormatNames[b.timeFmt]
			if b.opts.TimeFile != "" {
				if err := saveFile(b.opts.TimeFile, ".time-format-*", timeFormatKeys[b.timeFmt]+"\n"); err != nil {
					b.settingsErr = fmt.Sprintf("[yellow]time format not saved: %s[-]", tview.Escape(err.Error()))
				}
			}
		})},
		{Key: "g/G", Desc: "first / last frame"},
		{Key: "/", Desc: "display filter (the -Y language; red with its error while it does not compile, enter applies, ↑/↓ earlier filters, tab completes field names)",
			Match: tui.Rune('/'), Do: do(func() {
				expr, _ := strings.CutPrefix(b.mode, "filter ")
				if expr == b.mode {
					expr = ""
				}
				b.openPrompt(promptFilter, expr)
			})},
		{Key: "esc", Desc: "clear the filter or the followed connection (back to the SMC-relevant frames, or to all after a); the frame stays selected", Match: tui.KeyIs(tcell.KeyEscape), Do: do(func() {
			// A filter still running (A, /, on a large capture) counts:
			// the list is about to become it, so esc drops it.
			if b.mode != b.base || b.pending != nil {
				b.setList(b.baseList(), b.base, b.selected())
			}
		})},
		{Key: "f", Desc: "follow the selected frame's connection: handshake, CLC, its links' LLC, CDC, WRITEs", Match: tui.Rune('f'), Do: do(func() {
			conn, _ := b.idx.Conn(int(b.selected()))
			if conn == 0 {
				b.message = "[yellow]the frame belongs to no connection[-]"
				return
			}
			covered, _, _ := b.idx.Progress()
			b.setList(listOf(b.idx.Follow(conn)), "follow connection "+strconv.Itoa(conn), b.selected())
			b.message = "S: its bytes"
			b.keepLive(func(context.Context) ([]int32, error) { return b.idx.Follow(conn), nil }, covered)
		})},
		{Key: "S", Desc: "the application bytes of the selected frame's connection, both directions in order as its CDCs released them (client red, server blue, gaps marked), as Wireshark's Follow Stream", Match: tui.Rune('S'), Do: do(b.showStream)},
		{Key: "ctrl-f", Desc: "find the next frame whose bytes hold hex (e2:d4:c3:d9, 0xe2d4c3d9) or a text (\"SMC-LAB\"), or whose Info or field tree matches /REGEXP/", Match: tui.KeyIs(tcell.KeyCtrlF), Do: do(func() { b.openPrompt(promptSearch, b.needleText) })},
		{Key: "n N", Desc: "next / previous frame of the search", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == 'n' || ev.Rune() == 'N')
		}, Do: func(ev *tcell.EventKey) { b.find(map[rune]int{'n': 1, 'N': -1}[ev.Rune()]); b.redraw() }},
		{Key: "[ ]", Desc: "back / forward through the places jumped from (f, :N, a filter, esc, a pane's enter, a search hit), with the frame selected there", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == '[' || ev.Rune() == ']')
		}, Do: func(ev *tcell.EventKey) { b.goBack(map[rune]int{'[': -1, ']': 1}[ev.Rune()]); b.redraw() }},
		{Key: "a", Desc: "all frames / SMC-relevant frames only", Match: tui.Rune('a'), Do: do(func() {
			if b.base = "all"; b.mode == "all" {
				b.base = "relevant"
			}
			b.setList(b.baseList(), b.base, b.selected())
		})},
		{Key: "c", Desc: "conversations pane (the tracker's connections: client, server, CDCs and bytes C→S and S→C) over the selected one's detail; enter lists its frames, ←/→ scroll the columns, PgUp/PgDn the detail", Match: tui.Rune('c'), Do: do(func() { b.showPane("conversations") })},
		{Key: "l", Desc: "link groups pane: state, links with their client ⇄ server QPs, history in the detail; enter lists the group's frames", Match: tui.Rune('l'), Do: do(func() { b.showPane("linkgroups") })},
		{Key: "d", Desc: "declines pane: who declined whom (server → client), when, why (code, kernel name, meaning whole in the detail)", Match: tui.Rune('d'), Do: do(func() { b.showPane("declines") })},
		{Key: "e", Desc: "expert pane: the capture's findings (smcdump -z smc,expert), the most severe first, meaning and what to check in the detail; enter goes to the finding's first frame. In the list ! marks a frame with a warning or error, i a note", Match: tui.Rune('e'), Do: do(func() { b.showPane("expert") })},
		{Key: "L", Desc: "list the selected frame's link group", Match: tui.Rune('L'), Do: do(func() { b.linkGroupOf(b.selected()) })},
		{Key: ":N", Desc: "go to frame N", Match: tui.Rune(':'), Do: do(func() { b.openPrompt(promptGoto, "") })},
		{Key: "m", Desc: "mark / unmark the frame", Match: tui.Rune('m'), Do: do(func() {
			if n := b.selected(); n != 0 {
				if b.marks[n] {
					delete(b.marks, n)
				} else {
					b.marks[n] = true
				}
			}
		})},
		{Key: "M", Desc: "unmark every frame", Match: tui.Rune('M'), Do: do(func() {
			b.message = fmt.Sprintf("unmarked %d frames", len(b.marks))
			clear(b.marks)
		})},
		{Key: "'", Desc: "next marked frame in the list (from the top after the last)", Match: tui.Rune('\''), Do: do(b.nextMark)},
		{Key: "w", Desc: "write the list's frames: to the -w file or a new name (FILE-2...), not over a file unless confirmed; .pcap pcap, .csv the columns, else pcapng", Match: tui.Rune('w'), Do: do(func() { b.openExport(false) })},
		{Key: "W", Desc: "write the marked frames, as w does", Match: tui.Rune('W'), Do: do(func() { b.openExport(true) })},
		{Key: "tab", Desc: "next pane: list, field tree, hex (not while hidden; zoomed, the next pane is zoomed)", Match: tui.KeyIs(tcell.KeyTab), Do: do(b.nextPane)},
		{Key: "enter", Desc: "in the field tree: expand / collapse a layer (it stays so in the frames shown after)"},
		{Key: "J/K", Desc: "in the field tree: into a layer / up to its heading"},
		{Key: "C", Desc: "add the field selected in the tree as a column, before the last (kept for the next start, as o's layout is)", Match: tui.Rune('C'), Do: do(b.addFieldColumn)},
		{Key: "o", Desc: "edit the columns: [TITLE=]NAME[:WIDTH],... of No., Time, Source, Destination, Protocol, Length, Info and any field (tab completes)", Match: tui.Rune('o'), Do: do(func() { b.openPrompt(promptColumns, formatColumns(b.cols)) })},
		{Key: "{ } ( ) D", Desc: "the column at the list's left edge (←/→ bring one there): move it left / right, narrower / wider, remove it", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && strings.ContainsRune("{}()D", ev.Rune())
		}, Do: func(ev *tcell.EventKey) {
			switch ev.Rune() {
			case '{', '}':
				b.moveColumn(map[rune]int{'{': -1, '}': 1}[ev.Rune()])
			case '(', ')':
				b.resizeColumn(map[rune]int{'(': -1, ')': 1}[ev.Rune()])
			default:
				b.removeColumn()
			}
			b.redraw()
		}},
		{Key: "A", Desc: "apply the field selected in the tree as a filter (field == value; a layer: the layer present)", Match: tui.Rune('A'), Do: do(func() { b.fieldFilter(true) })},
		{Key: "! & | ^", Desc: "the tree's field as a filter: not it; the list's filter and it; or it; and not it (Wireshark's Apply as Filter variants)", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && filterOps[ev.Rune()] != nil
		}, Do: func(ev *tcell.EventKey) { b.fieldFilterOp(ev.Rune()); b.redraw() }},
		{Key: "P", Desc: "prepare the field selected in the tree as a filter: the filter bar opens with it, to edit before enter", Match: tui.Rune('P'), Do: do(func() { b.fieldFilter(false) })},
		{Key: "z", Desc: "zoom: the focused pane (list, field tree, hex) alone on the screen, or all panes again", Match: tui.Rune('z'), Do: do(b.zoom)},
		{Key: "+ -", Desc: "grow / shrink the packet list (the field tree and hex pane get the rest)", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == '+' || ev.Rune() == '-')
		}, Do: func(ev *tcell.EventKey) { b.resize(map[rune]int{'+': 1, '-': -1}[ev.Rune()]); b.redraw() }},
		{Key: "x", Desc: "hide / show the hex pane (the field tree takes its width)", Match: tui.Rune('x'), Do: do(b.toggleHex)},
		{Key: "?", Desc: "this help", Match: tui.Rune('?'), Do: do(b.App.ShowHelp)},
		{Key: "q", Desc: "quit", Match: tui.Rune('q'), Do: do(b.App.Stop)},
	}
}

// nextMark selects the next marked frame of the list after the selected
// one, from the top after the last.
func (b *Browser) nextMark() {
	if len(b.marks) == 0 {
		b.message = "[yellow]no marked frames (m marks one)[-]"
		return
	}
	ns := b.rows.frames()
	cur, _ := b.list.GetSelection()
	next := func(i int) {
		if i <= cur {
			b.message = "[yellow]from the top[-]"
		}
		b.jumped()
		b.selectRow(i)
	}
	if ns.x != nil {
		// The index's list, in frame order and read from the index: the
		// marks, fewer than its frames, are looked up in it instead.
		after, first := -1, -1
		for n := range b.marks {
			if i, in := ns.rowOf(n); in {
				if i > cur && (after < 0 || i < after) {
					after = i
				}
				if first < 0 || i < first {
					first = i
				}
			}
		}
		switch {
		case after >= 0:
			next(after)
		case first >= 0:
			next(first)
		default:
			b.message = "[yellow]no marked frame in this list[-]"
		}
		return
	}
	for k := 1; k <= ns.len(); k++ {
		if i := (cur + k) % ns.len(); b.marks[ns.at(i)] {
			next(i)
			return
		}
	}
	b.message = "[yellow]no marked frame in this list[-]"
}

// linkGroupOf lists the frames of frame n's link group.
func (b *Browser) linkGroupOf(n int32) {
	conn, link := b.idx.Conn(int(n))
	s := b.idx.Snapshot()
	if s == nil {
		b.message = "[yellow]no link groups yet: the index is being built[-]"
		return
	}
	for _, g := range rows.LGRRows(s) {
		hit := false
		for _, l := range g.Links {
			hit = hit || (link != 0 && l == link)
		}
		for _, c := range g.Conns {
			hit = hit || (conn != 0 && c == conn)
		}
		if hit {
			b.setList(listOf(b.idx.LinkGroup(g.Links, g.Conns)), "link group "+strconv.Itoa(g.ID), n)
			return
		}
	}
	b.message = fmt.Sprintf("[yellow]frame %d belongs to no link group (no SMC-R link or connection on one)[-]", n)
}
