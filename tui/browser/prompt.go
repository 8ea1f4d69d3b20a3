package browser

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
)

// promptKind is what the one-line prompt above the status line asks for.
type promptKind uint8

const (
	promptNone    promptKind = iota
	promptFilter             // `/`: a display filter
	promptGoto               // `:`: a frame number
	promptWrite              // `w`, `W`: the file to export to
	promptSearch             // ctrl-f: bytes or a text to find
	promptColumns            // o: the list's columns
)

var promptLabels = [...]string{promptFilter: "/", promptGoto: ":", promptWrite: "write to: ", promptSearch: "find (hex, text or /regexp/): ", promptColumns: "columns: "}

// maxHistory bounds the filters ↑ and ↓ go through.
const maxHistory = 100

// openPrompt opens the prompt with text in it (the cursor after it).
func (b *Browser) openPrompt(k promptKind, text string) {
	b.promptKind = k
	b.histPos, b.draft = len(b.history), text
	if n := len(b.history); n > 0 && b.history[n-1] == text {
		b.histPos = n - 1 // ↑ goes to the filter before the one shown
	}
	b.prompt.SetLabel(promptLabels[k]).SetText(text).SetFieldBackgroundColor(tcell.ColorDarkBlue)
	b.setHint("")
	b.layout()
	b.App.SetFocus(b.prompt)
	b.promptChanged(text)
}

func (b *Browser) closePrompt() {
	b.promptKind = promptNone
	b.setHint("")
	b.layout()
	b.App.SetFocus(b.list)
}

// setHint sets the lines between the panes and the prompt: a filter's
// whole error, wrapped to the terminal's width rather than cut at the
// status line's end, or the names tab can complete.
func (b *Browser) setHint(text string) {
	b.hintText = text
	b.hint.SetText(text)
	lines := 0
	if text != "" {
		_, _, w, _ := b.body.GetRect()
		if w <= 0 {
			w = 80
		}
		lines = min(len(tview.WordWrap(text, w)), 4)
	}
	if lines != b.hintLines {
		b.hintLines = lines
		b.layout()
	}
}

// promptChanged colours the filter as it is typed: green when it
// compiles, red with the column and text of the error when it does not.
func (b *Browser) promptChanged(text string) {
	if b.promptKind == promptColumns {
		b.columnsChanged(text)
		return
	}
	if b.promptKind != promptFilter {
		return
	}
	if strings.TrimSpace(text) == "" {
		b.prompt.SetFieldBackgroundColor(tcell.ColorDarkBlue)
		b.setHint("")
		return
	}
	if _, err := filter.Compile(text); err != nil {
		b.prompt.SetFieldBackgroundColor(tcell.ColorDarkRed)
		b.setHint("[red]" + tview.Escape(filterError(err)) + "[-]")
	} else {
		b.prompt.SetFieldBackgroundColor(tcell.ColorDarkGreen)
		b.setHint("")
	}
}

// filterError is a filter's compile error as one line.
func filterError(err error) string {
	var se *filter.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("column %d: %s", se.Col, se.Msg)
	}
	return err.Error()
}

// promptKey handles the prompt's own keys before the input field: ↑/↓
// through the filters applied before, tab to complete a field name.
func (b *Browser) promptKey(ev *tcell.EventKey) *tcell.EventKey {
	if b.promptKind == promptColumns && ev.Key() == tcell.KeyTab {
		text, hint := complete(b.prompt.GetText())
		b.prompt.SetText(strings.TrimSuffix(text, " "))
		if hint != "" {
			b.setHint("[gray]" + tview.Escape(hint) + "[-]")
		}
		return nil
	}
	if b.promptKind != promptFilter {
		return ev
	}
	switch ev.Key() {
	case tcell.KeyUp, tcell.KeyDown:
		if b.histPos == len(b.history) {
			b.draft = b.prompt.GetText() // what was typed comes back after the newest
		}
		if ev.Key() == tcell.KeyUp && b.histPos > 0 {
			b.histPos--
		} else if ev.Key() == tcell.KeyDown && b.histPos < len(b.history) {
			b.histPos++
		} else {
			return nil
		}
		text := b.draft
		if b.histPos < len(b.history) {
			text = b.history[b.histPos]
		}
		b.prompt.SetText(text)
		return nil
	case tcell.KeyTab:
		text, hint := complete(b.prompt.GetText())
		b.prompt.SetText(text)
		if hint != "" {
			b.setHint("[gray]" + tview.Escape(hint) + "[-]")
		}
		return nil
	}
	return ev
}

func (b *Browser) promptDone(k tcell.Key) {
	kind, text := b.promptKind, strings.TrimSpace(b.prompt.GetText())
	if k == tcell.KeyEnter && kind == promptFilter && text != "" {
		if _, err := filter.Compile(text); err != nil {
			return // the prompt stays open with the error under it
		}
	}
	var cols []listColumn
	if k == tcell.KeyEnter && kind == promptColumns {
		var err error
		if cols, err = parseColumns(text); text == "" {
			cols = defaultColumns()
		} else if err != nil {
			return // the prompt stays open with the error under it
		}
	}
	if k == tcell.KeyEnter && kind == promptWrite && !b.mayWrite(text) {
		return // the prompt stays open, asking to confirm
	}
	if k == tcell.KeyEnter && kind == promptSearch {
		nd, err := parseNeedle(text)
		if err != nil {
			b.setHint("[red]" + tview.Escape(err.Error()) + "[-]")
			return
		}
		b.needle, b.needleText = nd, text
	}
	b.closePrompt()
	if k != tcell.KeyEnter {
		return
	}
	switch kind {
	case promptFilter:
		b.remember(text)
		b.applyFilter(text)
	case promptGoto:
		b.gotoFrame(text)
	case promptWrite:
		b.export(text)
	case promptSearch:
		b.find(1)
	case promptColumns:
		b.changeColumns(cols)
	}
	b.redraw()
}

// remember adds a filter to the history, once, as its newest entry.
func (b *Browser) remember(text string) {
	if text == "" {
		return
	}
	b.history = slices.DeleteFunc(b.history, func(h string) bool { return h == text })
	b.history = append(b.history, text)
	if len(b.history) > maxHistory {
		b.history = b.history[len(b.history)-maxHistory:]
	}
	if b.opts.History != "" {
		b.historyErr = ""
		if err := saveHistory(b.opts.History, b.history); err != nil {
			b.historyErr = fmt.Sprintf("[yellow]filter history not saved: %s[-]", tview.Escape(err.Error()))
		}
	}
}

// filterWords are the names a filter may use besides the catalogue's
// fields: its protocol prefixes and Wireshark's either-direction aliases.
var filterWords = sync.OnceValue(func() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, d := range decode.Fields() {
		for _, name := range []string{d.Name, d.Wireshark} {
			for i := range len(name) {
				if name[i] == '.' {
					add(name[:i])
				}
			}
			if name != "" {
				add(name)
			}
		}
	}
	for _, a := range []string{"eth.addr", "ip.addr", "tcp.port", "udp.port", "frame"} {
		add(a)
	}
	slices.Sort(out)
	return out
})

// complete completes the field name being typed at the end of text: to
// the name when one matches, else to what all that match share, with the
// matches listed in hint (as many as fit a few lines).
func complete(text string) (string, string) {
	i := strings.LastIndexFunc(text, func(r rune) bool {
		return !(r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	word := text[i+1:]
	var match []string
	for _, w := range filterWords() {
		if strings.HasPrefix(w, word) {
			match = append(match, w)
		}
	}
	switch len(match) {
	case 0:
		return text, "no field starts with " + word
	case 1:
		return text[:i+1] + match[0] + " ", ""
	}
	common := match[0]
	for _, m := range match[1:] {
		for !strings.HasPrefix(m, common) {
			common = common[:len(common)-1]
		}
	}
	hint := fmt.Sprintf("%d fields: %s", len(match), strings.Join(match[:min(len(match), 40)], " "))
	if len(match) > 40 {
		hint += " …"
	}
	return text[:i+1] + common, hint
}
