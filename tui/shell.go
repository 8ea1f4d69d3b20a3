package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Shell is what every smcscope terminal program shares: the application,
// one key table that both dispatches and documents every key, the one
// help page (`?`) made from it, and the pages the program's body and
// overlays live on. smctop's App and smcdump -I's browser are built on
// it, so their keys and help work the same way.
type Shell struct {
	*tview.Application
	Pages *tview.Pages
	title string
	keys  []Binding
	help  *tview.TextView
	// helpExtra adds text under the keys in `?` (smctop: what the current
	// view's columns mean).
	helpExtra func() string
	// own reports keys that belong to the focused widget before the key
	// table sees them (a prompt being typed in, an overlay's own keys).
	own func(*tcell.EventKey) bool
	// back is focused again when the help closes.
	back func() tview.Primitive
}

// NewShell makes the shell with main as its first page.
func NewShell(title string, main tview.Primitive) *Shell {
	s := &Shell{Application: tview.NewApplication(), title: title}
	s.help = tview.NewTextView().SetDynamicColors(false).SetWrap(true)
	s.help.SetBorder(true).SetTitle(" help: ↑/↓ scroll, esc or ? closes ")
	// Full screen and scrollable: the key list is longer than an 80x24
	// terminal is high.
	s.Pages = tview.NewPages().AddPage("main", main, true, true).AddPage("help", s.help, true, false)
	s.SetRoot(s.Pages, true).EnableMouse(true)
	s.SetInputCapture(s.input)
	return s
}

// SetKeys sets the key table.
func (s *Shell) SetKeys(keys []Binding) { s.keys = keys }

// AddKeys adds bindings to the key table (a replay's keys), before the
// keys the table only documents; call it before Run.
func (s *Shell) AddKeys(bs ...Binding) {
	i := len(s.keys)
	for i > 0 && s.keys[i-1].Match == nil {
		i--
	}
	s.keys = append(s.keys[:i], append(bs, s.keys[i:]...)...)
}

// SetKeyHelp changes what help says of the binding whose Key is key.
func (s *Shell) SetKeyHelp(key, desc string) {
	for i := range s.keys {
		if s.keys[i].Key == key {
			s.keys[i].Desc = desc
		}
	}
}

// Keys returns the key table (for tests that check the help covers it).
func (s *Shell) Keys() []Binding { return s.keys }

// SetHelpExtra sets what `?` shows under the keys.
func (s *Shell) SetHelpExtra(f func() string) { s.helpExtra = f }

// SetOwnKeys sets which keys go to the focused widget before the key
// table: a prompt's typing, an overlay's enter and esc.
func (s *Shell) SetOwnKeys(f func(*tcell.EventKey) bool) { s.own = f }

// SetHelpReturn sets what is focused when the help closes.
func (s *Shell) SetHelpReturn(f func() tview.Primitive) { s.back = f }

// ShowHelp opens the help page: the key table, then the extra text.
func (s *Shell) ShowHelp() {
	var b strings.Builder
	b.WriteString(s.title + " keys\n\n" + Help(s.keys))
	if s.helpExtra != nil {
		b.WriteString(s.helpExtra())
	}
	s.help.SetText(b.String())
	s.help.ScrollToBeginning()
	s.Pages.ShowPage("help")
	s.SetFocus(s.help)
}

// HelpShown reports whether the help page is open.
func (s *Shell) HelpShown() bool {
	name, _ := s.Pages.GetFrontPage()
	return name == "help"
}

func (s *Shell) input(ev *tcell.EventKey) *tcell.EventKey {
	if s.HelpShown() {
		if ev.Key() == tcell.KeyEscape || ev.Rune() == '?' || ev.Rune() == 'q' {
			s.Pages.HidePage("help")
			if s.back != nil {
				s.SetFocus(s.back())
			}
			return nil
		}
		return ev // scrolls the help
	}
	if s.own != nil && s.own(ev) {
		return ev
	}
	if Dispatch(s.keys, ev) {
		return nil
	}
	return ev // the focused widget's own keys: j/k, arrows
}
