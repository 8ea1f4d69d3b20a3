package tui

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/tui/widget"
)

// ErrNoTerminal says the process has no terminal to draw on.
var ErrNoTerminal = errors.New("no terminal")

// CheckTerminal returns ErrNoTerminal, with the cause, when the process
// has no controlling terminal. tcell draws on /dev/tty whatever stdin and
// stdout are, so without one (setsid, a service, ssh -T) the application
// would fail only once it runs, after the caller has started its sources.
func CheckTerminal() error {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNoTerminal, err)
	}
	return f.Close()
}

// Screen is one view of the shell: a table of rows and a detail text for
// the selected row. Drill says where enter goes from a row.
type Screen interface {
	Name() string
	// Aliases are other names `:` takes for the view ("conns", "lgr").
	Aliases() []string
	Table() *widget.Table
	// Columns explain the table's columns and units, for `?`.
	Columns() []Column
	// Detail is the text of the pane under the table for the row key.
	Detail(key string) string
	// Drill returns where enter on row key leads.
	Drill(key string) (Drill, bool)
}

// Column is one table column as `?` explains it.
type Column struct {
	Title, Help string
}

// Drill is where enter leads: a view showing exactly the rows with the
// given keys (a connection's link group, a group's devices), not the rows
// whose text happens to contain a word.
type Drill struct {
	View   string
	Label  string   // names the rows on the status line: "link group 0x100"
	Keys   []string // the rows shown; nil shows every row
	Select string   // the row selected, "" the first
}

// place is where a drill-down began, for esc.
type place struct {
	view       int
	filter     string
	scopeLabel string
	scope      []string
	key        string
}

// App is the shell: screens switched with tab, `:` and digits, a `/`
// filter, `?` help, `p` pause, enter/esc drill-down and back, a status line.
type App struct {
	*Shell
	screens []Screen
	cur     int
	body    *tview.Flex
	tabs    *tabBar
	detail  *tview.TextView
	status  *tview.TextView
	prompt  *tview.InputField
	paused  bool
	onPause func(paused bool)
	back    []place
	// detailKey is the row the detail pane shows: the pane keeps its
	// scroll position while a refresh redraws the same row.
	detailKey string
	// Status is the left part of the status line (source, refresh time);
	// set with SetStatus.
	statusText string
	promptMode rune // ':' or '/' while the prompt is open
	// backOut, when set, names where esc goes when there is nothing
	// left to undo here: the fleet view a host's dashboard was opened
	// from (esc then stops this App).
	backOut string
}

// NewApp builds the shell over screens (at least one).
func NewApp(title string, screens ...Screen) *App {
	a := &App{screens: screens}
	a.tabs = newTabBar(screens)
	a.detail = tview.NewTextView().SetDynamicColors(false).SetWrap(true)
	a.detail.SetBorder(true).SetTitle(" detail ")
	a.status = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	a.prompt = tview.NewInputField()
	a.prompt.SetDoneFunc(a.promptDone)
	a.prompt.SetChangedFunc(func(text string) {
		if a.promptMode == '/' {
			a.screen().Table().SetFilter(text)
			a.refreshDetail()
		}
	})
	a.prompt.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyTab && a.promptMode == ':' {
			a.prompt.SetText(a.complete(a.prompt.GetText()))
			return nil
		}
		return ev
	})
	a.body = tview.NewFlex().SetDirection(tview.FlexRow)
	root := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.tabs, 1, 0, false).
		AddItem(a.body, 0, 1, true).
		AddItem(a.status, 1, 0, false)
	a.Shell = NewShell(title, root)
	a.SetKeys(a.keyTable())
	a.SetHelpExtra(a.columnHelp)
	a.SetOwnKeys(func(*tcell.EventKey) bool { return a.promptMode != 0 })
	a.SetHelpReturn(func() tview.Primitive { return a.screen().Table() })
	for _, s := range screens {
		t := s.Table()
		t.SetSelectionChangedFunc(func(int, int) { a.refreshDetail() })
	}
	a.show(0)
	return a
}

// complete returns the view name that text starts, or text when none or
// several do.
func (a *App) complete(text string) string {
	if i, ok := a.resolve(text); ok {
		return a.screens[i].Name()
	}
	return text
}

// resolve finds the view `:` names: by name or alias, or by the start of
// exactly one view's name or aliases ("c", "conn", "lgr", "dev").
func (a *App) resolve(text string) (int, bool) {
	text = strings.ToLower(strings.TrimSpace(text))
	if text == "" {
		return 0, false
	}
	found := -1
	for i, s := range a.screens {
		names := append([]string{s.Name()}, s.Aliases()...)
		for _, n := range names {
			if n == text {
				return i, true
			}
			if strings.HasPrefix(n, text) {
				if found >= 0 && found != i {
					return 0, false
				}
				found = i
			}
		}
	}
	return found, found >= 0
}

// Paused reports whether the screens are paused (p); call it on the UI
// goroutine.
func (a *App) Paused() bool { return a.paused }

// SetPauseFunc sets what runs, on the UI goroutine, when p pauses or
// resumes the screens.
func (a *App) SetPauseFunc(f func(paused bool)) { a.onPause = f }

func (a *App) togglePause() {
	a.paused = !a.paused
	if a.onPause != nil {
		a.onPause(a.paused)
	}
	a.drawStatus()
}

// Current returns the current screen.
func (a *App) Current() Screen { return a.screen() }

func (a *App) screen() Screen { return a.screens[a.cur] }

// SetStatus sets the status line's text (call on the UI goroutine). It
// may hold colour tags, so user text in it (file and interface names,
// error texts) must be passed through tview.Escape.
func (a *App) SetStatus(s string) {
	a.statusText = s
	a.drawStatus()
}

// Refresh redraws the detail pane after the screens got new rows (call on
// the UI goroutine).
func (a *App) Refresh() { a.refreshDetail(); a.drawStatus() }

func (a *App) drawStatus() {
	st := a.statusText
	if a.paused {
		st = "[red]PAUSED[-]  " + st
	}
	t := a.screen().Table()
	if label, _ := t.Scope(); label != "" {
		st += fmt.Sprintf("  [aqua]%s: %d rows (esc back)[-]", tview.Escape(label), len(t.Shown()))
	}
	if f := t.Filter(); f != "" {
		st += fmt.Sprintf("  filter %s: %d rows", tview.Escape(strconv.Quote(f)), len(t.Shown()))
	}
	if c, desc := t.SortColumn(); c != "" {
		st += "  sort " + c + map[bool]string{false: "↑", true: "↓"}[desc]
	}
	if a.backOut != "" && len(a.back) == 0 && t.Filter() == "" {
		st += "  [aqua]esc: back to " + tview.Escape(a.backOut) + "[-]"
	}
	a.status.SetText(st + "  [gray]? help  q quit[-]")
}

func (a *App) show(i int) {
	a.cur = i
	a.tabs.cur = i
	a.body.Clear()
	// 3:2 leaves the detail six lines on an 80x24 terminal: a connection's
	// or link group's whole story.
	a.body.AddItem(a.screen().Table(), 0, 3, true)
	a.body.AddItem(a.detail, 0, 2, false)
	a.SetFocus(a.screen().Table())
	a.refreshDetail()
	a.drawStatus()
}

// ShowView switches to the named view (or one `:` resolves) with a text
// filter and every row; false if there is no such view.
func (a *App) ShowView(name, filter string) bool {
	i, ok := a.resolve(name)
	if !ok {
		return false
	}
	a.show(i)
	t := a.screen().Table()
	t.SetScope("", nil)
	t.SetFilter(filter)
	t.SelectKey("")
	a.refreshDetail()
	a.drawStatus()
	return true
}

// refreshDetail shows the selected row's detail. A refresh redraws the
// same row's detail where it was scrolled to; another row starts at its
// top.
func (a *App) refreshDetail() {
	s := a.screen()
	key := s.Table().SelectedKey()
	row, col := a.detail.GetScrollOffset()
	a.detail.SetText(s.Detail(key))
	if key == a.detailKey {
		a.detail.ScrollTo(row, col)
	} else {
		a.detail.ScrollToBeginning()
	}
	a.detailKey = key
}

// scrollDetail moves the detail pane by n lines (a page when n is 0 or
// less than a page).
func (a *App) scrollDetail(pages int) {
	_, _, _, h := a.detail.GetInnerRect()
	row, col := a.detail.GetScrollOffset()
	row = max(0, row+pages*max(1, h-1))
	a.detail.ScrollTo(row, col)
}

// columnHelp is what `?` says under the keys: what each column of the
// current view means and in which unit.
func (a *App) columnHelp() string {
	var b strings.Builder
	s := a.screen()
	fmt.Fprintf(&b, "\ncolumns of %s", s.Name())
	if al := s.Aliases(); len(al) > 0 {
		fmt.Fprintf(&b, " (:%s)", strings.Join(append([]string{s.Name()}, al...), ", :"))
	}
	b.WriteString("\n\n")
	cols := s.Columns()
	w := 0
	for _, c := range cols {
		w = max(w, len(c.Title))
	}
	for _, c := range cols {
		fmt.Fprintf(&b, " %-*s  %s\n", w, c.Title, c.Help)
	}
	return b.String()
}

func (a *App) openPrompt(mode rune) {
	a.promptMode = mode
	label := ":"
	if mode == '/' {
		label = "/"
		a.prompt.SetText(a.screen().Table().Filter())
	} else {
		a.prompt.SetText("")
	}
	a.prompt.SetLabel(label)
	a.body.AddItem(a.prompt, 1, 0, true)
	a.SetFocus(a.prompt)
}

func (a *App) closePrompt() {
	a.body.RemoveItem(a.prompt)
	a.promptMode = 0
	a.SetFocus(a.screen().Table())
	a.drawStatus()
}

func (a *App) promptDone(k tcell.Key) {
	text := strings.TrimSpace(a.prompt.GetText())
	mode := a.promptMode
	a.closePrompt()
	switch {
	case mode == ':' && k == tcell.KeyEnter:
		if text == "q" || text == "quit" {
			a.Stop()
			return
		}
		if i, ok := a.resolve(text); ok {
			a.show(i)
		} else {
			a.SetStatus(fmt.Sprintf("[red]no view %s[-]", tview.Escape(strconv.Quote(text))))
		}
	case mode == '/' && k == tcell.KeyEscape:
		a.screen().Table().SetFilter("")
		a.refreshDetail()
	}
	a.drawStatus()
}

// keyTable is the shell's one key table: it dispatches (input) and
// documents (`?`) every key.
func (a *App) keyTable() []Binding {
	table := func() *widget.Table { return a.screen().Table() }
	return []Binding{
		{Key: "?", Desc: "help: the keys, and the columns of this view with their units", Match: Rune('?'), Do: func(*tcell.EventKey) { a.ShowHelp() }},
		{Key: ":", Desc: "switch view: its name, a short name or its start (" + a.viewHint() + "), tab completes", Match: Rune(':'), Do: func(*tcell.EventKey) { a.openPrompt(':') }},
		{Key: "tab", Desc: "next view", Match: KeyIs(tcell.KeyTab), Do: func(*tcell.EventKey) { a.show((a.cur + 1) % len(a.screens)) }},
		{Key: "backtab", Desc: "previous view", Match: KeyIs(tcell.KeyBacktab), Do: func(*tcell.EventKey) { a.show((a.cur + len(a.screens) - 1) % len(a.screens)) }},
		{Key: "/", Desc: "filter the rows (text in any column; esc clears)", Match: Rune('/'), Do: func(*tcell.EventKey) { a.openPrompt('/') }},
		{Key: "> <", Desc: "sort by the next / previous column (numbers and units by value)", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyRune && (ev.Rune() == '>' || ev.Rune() == '<')
		}, Do: func(ev *tcell.EventKey) {
			table().MoveSort(map[bool]int{true: 1, false: -1}[ev.Rune() == '>'])
			a.drawStatus()
		}},
		{Key: "s", Desc: "reverse the sort order (unsorted: sort by the first column)", Match: Rune('s'), Do: func(*tcell.EventKey) { table().ReverseSort(); a.drawStatus() }},
		{Key: "enter", Desc: "drill down: a connection's link group, a group's devices, a device's link groups", Match: KeyIs(tcell.KeyEnter), Do: func(*tcell.EventKey) { a.drill() }},
		{Key: "esc", Desc: "back one level: clear the filter typed here, else back to where enter was pressed", Match: KeyIs(tcell.KeyEscape), Do: func(*tcell.EventKey) { a.goBack() }},
		{Key: "PgDn PgUp", Desc: "scroll the detail pane", Match: func(ev *tcell.EventKey) bool {
			return ev.Key() == tcell.KeyPgDn || ev.Key() == tcell.KeyPgUp
		}, Do: func(ev *tcell.EventKey) { a.scrollDetail(map[bool]int{true: 1, false: -1}[ev.Key() == tcell.KeyPgDn]) }},
		{Key: "p", Desc: "pause / resume the screens (the exporter keeps refreshing)", Match: Rune('p'), Do: func(*tcell.EventKey) { a.togglePause() }},
		{Key: "1-9", Desc: "views by number", Match: func(ev *tcell.EventKey) bool {
			r := ev.Rune()
			return ev.Key() == tcell.KeyRune && r >= '1' && r <= '9' && int(r-'1') < len(a.screens)
		}, Do: func(ev *tcell.EventKey) { a.show(int(ev.Rune() - '1')) }},
		{Key: "q", Desc: "quit", Match: Rune('q'), Do: func(*tcell.EventKey) { a.Stop() }},
		{Key: "j/k, ↓/↑", Desc: "move down / up"},
		{Key: "g/G", Desc: "first / last row"},
		{Key: "h/l, ←/→", Desc: "scroll the columns (narrow terminals)"},
	}
}

// viewHint names each view by its shortest name, for the `:` help.
func (a *App) viewHint() string {
	var hs []string
	for _, sc := range a.screens {
		h := sc.Name()
		for _, al := range sc.Aliases() {
			if len(al) < len(h) {
				h = al
			}
		}
		hs = append(hs, ":"+h)
	}
	return strings.Join(hs, " ")
}

// SetDrillHelp says what enter leads to in this App's views, for `?`.
func (a *App) SetDrillHelp(desc string) { a.SetKeyHelp("enter", "drill down: "+desc) }

// SetBackOut makes esc, with nothing left to undo, stop the App: it was
// opened from where (the fleet view), and the status line says so.
func (a *App) SetBackOut(where string) {
	a.backOut = where
	a.SetKeyHelp("esc", "back one level: clear the filter typed here, else back to where enter was pressed, else back to "+where)
	a.drawStatus()
}

// drill opens what enter on the selected row leads to, remembering the
// way back.
func (a *App) drill() {
	t := a.screen().Table()
	key := t.SelectedKey()
	d, ok := a.screen().Drill(key)
	if !ok {
		return
	}
	i, ok := a.resolve(d.View)
	if !ok {
		return
	}
	label, scope := t.Scope()
	a.back = append(a.back, place{a.cur, t.Filter(), label, scope, key})
	a.show(i)
	nt := a.screen().Table()
	nt.SetFilter("")
	nt.SetScope(d.Label, d.Keys)
	nt.SelectKey(d.Select)
	a.refreshDetail()
	a.drawStatus()
}

// goBack undoes one level: a filter typed on this screen, else the last
// drill-down (back to its row, with the filter and scope it had).
func (a *App) goBack() {
	t := a.screen().Table()
	if t.Filter() != "" {
		t.SetFilter("")
	} else if n := len(a.back); n > 0 {
		p := a.back[n-1]
		a.back = a.back[:n-1]
		t.SetScope("", nil)
		a.show(p.view)
		pt := a.screen().Table()
		pt.SetScope(p.scopeLabel, p.scope)
		pt.SetFilter(p.filter)
		pt.SelectKey(p.key)
	} else if a.backOut != "" {
		a.Stop()
		return
	}
	a.refreshDetail()
	a.drawStatus()
}
