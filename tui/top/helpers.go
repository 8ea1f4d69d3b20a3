package top

import (
	"fmt"

	"github.com/smcscope/smcscope/tui"
	"github.com/smcscope/smcscope/tui/widget"
)

// entryRow is a table row with its sort values.
func entryRow(key string, cells []string, sort []any) widget.Row {
	return widget.Row{Key: key, Cells: cells, Sort: sort}
}

// col is a column and what `?` says of it.
func col(title, help string) tui.Column { return tui.Column{Title: title, Help: help} }

// portKey is a device port's row key.
func portKey(dev string, port int) string { return fmt.Sprintf("%s/%d", dev, port) }
