package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
)

// Binding is one key of a key table: what help shows (Key, Desc) and,
// when Match is set, what the key does. The same table dispatches the keys
// (Dispatch) and prints the help (Help), so no bound key goes undescribed.
// A binding without Match documents a key the focused widget handles
// itself (j/k in a table).
type Binding struct {
	Key   string // as shown in help: "q", "?", "enter", "tab"
	Desc  string
	Match func(*tcell.EventKey) bool
	Do    func(*tcell.EventKey)
}

// Rune matches a plain key.
func Rune(r rune) func(*tcell.EventKey) bool {
	return func(ev *tcell.EventKey) bool { return ev.Key() == tcell.KeyRune && ev.Rune() == r }
}

// KeyIs matches a special key (tcell.KeyEnter, tcell.KeyEscape, ...).
func KeyIs(k tcell.Key) func(*tcell.EventKey) bool {
	return func(ev *tcell.EventKey) bool { return ev.Key() == k }
}

// Dispatch runs the first binding that matches ev and reports whether one
// did.
func Dispatch(keys []Binding, ev *tcell.EventKey) bool {
	for _, k := range keys {
		if k.Match != nil && k.Match(ev) {
			k.Do(ev)
			return true
		}
	}
	return false
}

// Help formats the key table as the `?` overlay's text.
func Help(keys []Binding) string {
	var b strings.Builder
	w := 0
	for _, k := range keys {
		w = max(w, len(k.Key))
	}
	for _, k := range keys {
		fmt.Fprintf(&b, " %-*s  %s\n", w, k.Key, k.Desc)
	}
	return b.String()
}
