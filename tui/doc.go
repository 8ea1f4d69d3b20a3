// Package tui is the terminal shell smcscope's programs share. Shell
// (shell.go) is what smctop and smcdump -I both run on: the application,
// one key table that drives both the bindings and the `?` help page, and
// the pages their bodies and overlays live on. App (app.go) is smctop's
// kind of program on top of it: table screens switched with tab, `:` and
// digits, a `/` filter, drill-downs that esc undoes one level at a time,
// a detail pane and a status line. Screens live in sub-packages (tui/top
// for smctop, tui/browser is smcdump -I) and widgets in tui/widget. Data
// goroutines never touch widgets: they hand snapshots to the UI goroutine
// with tview's QueueUpdateDraw.
package tui
