// Package tui is the terminal shell smcscope's dashboards share (smctop,
// and the capture browser): one key table that drives both the bindings
// and the `?` help, a `:` view switcher, a `/` filter prompt and a status
// line. Screens live in sub-packages (tui/top for smctop) and widgets in
// tui/widget. Data goroutines never touch widgets: they hand snapshots to
// the UI goroutine with App.Update (tview's QueueUpdateDraw).
package tui
