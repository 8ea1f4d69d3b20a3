// Package render prints smctop's snapshot as text (smctop --once -o text)
// and holds the cell texts tui/top shares with it (Endpoint, Process,
// Dash, ...). JSON is the snapshot marshalled as it is. smcdump's -z views
// are package output/zview's; the kernel's key=value lines are package
// smcnl's.
package render
