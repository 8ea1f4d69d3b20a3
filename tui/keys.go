package tui

import (
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
)

// Binding is one key and what it does. The same table binds the keys and
// prints the help, so every bound key is described.
type Binding struct {
	Key  string // as shown in help: "q", "?", "enter", "tab"
	Desc string
	key  tcell.Key
	r    rune
}

// Keys is the shell's key table; screens add theirs with App.Bind.
var baseKeys = []Binding{
	{Key: "?", Desc: "help: this list", key: tcell.KeyRune, r: '?'},
	{Key: ":", Desc: "switch view (type its name, tab completes, enter goes)", key: tcell.KeyRune, r: ':'},
	{Key: "tab", Desc: "next view", key: tcell.KeyTab},
	{Key: "backtab", Desc: "previous view", key: tcell.KeyBacktab},
	{Key: "/", Desc: "filter the rows (text in any column; esc clears)", key: tcell.KeyRune, r: '/'},
	{Key: "s", Desc: "sort by the next column (again: reverse)", key: tcell.KeyRune, r: 's'},
	{Key: "enter", Desc: "drill down: the selected row's link group, links or device", key: tcell.KeyEnter},
	{Key: "esc", Desc: "back (or clear the filter, close help)", key: tcell.KeyEscape},
	{Key: "p", Desc: "pause / resume refreshing", key: tcell.KeyRune, r: 'p'},
	{Key: "j/k, ↓/↑", Desc: "move down / up", key: tcell.KeyRune, r: 'j'},
	{Key: "g/G", Desc: "first / last row", key: tcell.KeyRune, r: 'g'},
	{Key: "1-5", Desc: "views by number", key: tcell.KeyRune, r: '1'},
	{Key: "q", Desc: "quit", key: tcell.KeyRune, r: 'q'},
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
