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
	Table() *widget.Table
	// Detail is the text of the pane under the table for the row key.
	Detail(key string) string
	// Drill returns the view and filter that enter on row key opens.
	Drill(key string) (view, filter string, ok bool)
}

type place struct {
	view   int
	filter string
	key    string
}

// App is the shell: screens switched with tab, `:` and digits, a `/`
// filter, `?` help, `p` pause, enter/esc drill-down and back, a status line.
type App struct {
	*tview.Application
	screens []Screen
	cur     int
	pages   *tview.Pages
	body    *tview.Flex
	tabs    *tview.TextView
	detail  *tview.TextView
	status  *tview.TextView
	prompt  *tview.InputField
	keys    []Binding
	paused  bool
	onPause func(paused bool)
	back    []place
	// Status is the left part of the status line (source, refresh time);
	// set with SetStatus.
	statusText string
	promptMode rune // ':' or '/' while the prompt is open
}

// NewApp builds the shell over screens (at least one).
func NewApp(title string, screens ...Screen) *App {
	a := &App{Application: tview.NewApplication(), screens: screens}
	a.keys = a.keyTable()
	a.tabs = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
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
	a.pages = tview.NewPages().AddPage("main", root, true, true)
	help := tview.NewTextView().SetText(title + " keys\n\n" + Help(a.keys) + "\nesc or ? closes this help")
	help.SetBorder(true).SetTitle(" help ")
	a.pages.AddPage("help", center(help, 78, len(a.keys)+6), true, false)
	for _, s := range screens {
		t := s.Table()
		t.SetSelectionChangedFunc(func(int, int) { a.refreshDetail() })
	}
	a.SetRoot(a.pages, true).EnableMouse(true)
	a.SetInputCapture(a.input)
	a.show(0)
	return a
}

// complete returns the view name that text starts, or text when none or
// several do.
func (a *App) complete(text string) string {
	var match string
	for _, s := range a.screens {
		if strings.HasPrefix(s.Name(), text) {
			if match != "" {
				return text
			}
			match = s.Name()
		}
	}
	if match == "" {
		return text
	}
	return match
}

// Keys returns the key table (for tests that check the help covers it).
func (a *App) Keys() []Binding { return a.keys }

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
	if f := t.Filter(); f != "" {
		st += fmt.Sprintf("  filter %s: %d rows", tview.Escape(strconv.Quote(f)), len(t.Shown()))
	}
	if c, desc := t.SortColumn(); c != "" {
		st += "  sort " + c + map[bool]string{false: "↑", true: "↓"}[desc]
	}
	a.status.SetText(st + "  [gray]? help  q quit[-]")
}

func (a *App) show(i int) {
	a.cur = i
	var tabs []string
	for j, s := range a.screens {
		if j == i {
			tabs = append(tabs, fmt.Sprintf("[black:aqua] %d %s [-:-]", j+1, s.Name()))
		} else {
			tabs = append(tabs, fmt.Sprintf(" %d %s ", j+1, s.Name()))
		}
	}
	a.tabs.SetText(strings.Join(tabs, ""))
	a.body.Clear()
	// 3:2 leaves the detail six lines on an 80x24 terminal: a connection's
	// or link group's whole story.
	a.body.AddItem(a.screen().Table(), 0, 3, true)
	a.body.AddItem(a.detail, 0, 2, false)
	a.SetFocus(a.screen().Table())
	a.refreshDetail()
	a.drawStatus()
}

// ShowView switches to the named view with a filter; false if unknown.
func (a *App) ShowView(name, filter string) bool {
	for i, s := range a.screens {
		if s.Name() == name {
			a.show(i)
			s.Table().SetFilter(filter)
			s.Table().SelectKey("")
			a.refreshDetail()
			a.drawStatus()
			return true
		}
	}
	return false
}

func (a *App) refreshDetail() {
	s := a.screen()
	a.detail.SetText(s.Detail(s.Table().SelectedKey()))
	a.detail.ScrollToBeginning()
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
		if !a.ShowView(text, "") {
			a.SetStatus(fmt.Sprintf("[red]no view %s[-]", tview.Escape(strconv.Quote(text))))
		}
	case mode == '/' && k == tcell.KeyEscape:
		a.screen().Table().SetFilter("")
		a.refreshDetail()
	}
	a.drawStatus()
}

func (a *App) input(ev *tcell.EventKey) *tcell.EventKey {
	if a.promptMode != 0 {
		return ev
	}
	if name, _ := a.pages.GetFrontPage(); name == "help" {
		if ev.Key() == tcell.KeyEscape || ev.Rune() == '?' || ev.Rune() == 'q' {
			a.pages.HidePage("help")
			a.SetFocus(a.screen().Table())
		}
		return nil
	}
	if Dispatch(a.keys, ev) {
		return nil
	}
	return ev // j/k/g/G and arrows: the table's own keys
}

// keyTable is the shell's one key table: it dispatches (input) and
// documents (`?`) every key.
func (a *App) keyTable() []Binding {
	table := func() *widget.Table { return a.screen().Table() }
	return []Binding{
		{Key: "?", Desc: "help: this list", Match: Rune('?'), Do: func(*tcell.EventKey) { a.pages.ShowPage("help") }},
		{Key: ":", Desc: "switch view (type its name, tab completes, enter goes)", Match: Rune(':'), Do: func(*tcell.EventKey) { a.openPrompt(':') }},
		{Key: "tab", Desc: "next view", Match: KeyIs(tcell.KeyTab), Do: func(*tcell.EventKey) { a.show((a.cur + 1) % len(a.screens)) }},
		{Key: "backtab", Desc: "previous view", Match: KeyIs(tcell.KeyBacktab), Do: func(*tcell.EventKey) { a.show((a.cur + len(a.screens) - 1) % len(a.screens)) }},
		{Key: "/", Desc: "filter the rows (text in any column; esc clears)", Match: Rune('/'), Do: func(*tcell.EventKey) { a.openPrompt('/') }},
		{Key: "s", Desc: "sort by the next column (again: reverse)", Match: Rune('s'), Do: func(*tcell.EventKey) { table().NextSort(); a.drawStatus() }},
		{Key: "enter", Desc: "drill down: the selected row's link group, links or device", Match: KeyIs(tcell.KeyEnter), Do: func(*tcell.EventKey) { a.drill() }},
		{Key: "esc", Desc: "back (or clear the filter, close help)", Match: KeyIs(tcell.KeyEscape), Do: func(*tcell.EventKey) { a.goBack() }},
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

// drill opens what enter on the selected row leads to, remembering the
// way back.
func (a *App) drill() {
	t := a.screen().Table()
	key := t.SelectedKey()
	if view, filter, ok := a.screen().Drill(key); ok {
		a.back = append(a.back, place{a.cur, t.Filter(), key})
		a.ShowView(view, filter)
	}
}

// goBack clears the filter, or returns to where the last drill-down began.
func (a *App) goBack() {
	t := a.screen().Table()
	if t.Filter() != "" {
		t.SetFilter("")
	} else if n := len(a.back); n > 0 {
		p := a.back[n-1]
		a.back = a.back[:n-1]
		a.show(p.view)
		a.screen().Table().SetFilter(p.filter)
		a.screen().Table().SelectKey(p.key)
	}
	a.refreshDetail()
	a.drawStatus()
}

func center(p tview.Primitive, w, h int) tview.Primitive {
	return tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(nil, 0, 1, false).
			AddItem(p, h, 1, true).
			AddItem(nil, 0, 1, false), w, 1, true).
		AddItem(nil, 0, 1, false)
}
