package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/smcscope/smcscope/columns"
	"github.com/smcscope/smcscope/tui"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/tui/browser"
)

// browseOptions are smcdump's flags for the browser alone.
type browseOptions struct {
	tail     bool   // --tail: follow -r FILE as it grows
	columns  string // -o column.format:SPEC
	noConfig bool   // --no-config: neither read nor save the user's settings
}

// set takes one -o NAME:VALUE. tshark's gui.column.format is taken for
// column.format (its "Title","%Cus:field" pairs are not: a SPEC names
// each column once).
func (bo *browseOptions) set(s string) error {
	name, value, _ := strings.Cut(s, ":")
	switch name {
	case "column.format", "gui.column.format":
		// The text lines take any field; -I checks what its list can
		// show when it starts (browse).
		if _, err := columns.Parse(value, nil); err != nil {
			return fmt.Errorf("-o %s: %w", name, err)
		}
		bo.columns = value
		return nil
	}
	return fmt.Errorf("-o %q: no such setting (column.format:SPEC)", name)
}

// browse runs smcdump -I: the capture browser over -r FILE (a FIFO and
// stdin read as they arrive) or -i IFACE. -Y is its first display
// filter, -a starts it on every frame, -c reads only the first N frames,
// -w names its export file; flags that shape printed output are refused
// rather than ignored.
func browse(ctx context.Context, o output.Options, bo browseOptions) error {
	if bo.columns != "" {
		if err := browser.ParseColumns(bo.columns); err != nil {
			return &output.UsageError{Msg: "-o column.format: " + err.Error()}
		}
	}
	switch {
	case o.Format != "" || o.Verbose || o.Hex || o.Quiet || len(o.Views) > 0 || len(o.Fields) > 0 || o.Glossary != "":
		return &output.UsageError{Msg: "-I: -T, -e, -G, -V, -x, -q and -z shape printed output; the browser has its own panes"}
	case o.Count < 0:
		return &output.UsageError{Msg: "-c: want a positive count"}
	case o.CaptureFilter != "" && o.Iface == "":
		return &output.UsageError{Msg: "-f is a capture filter for -i; use -Y to filter a file"}
	case bo.tail && (o.Read == "" || o.Read == "-"):
		return &output.UsageError{Msg: "--tail: follows -r FILE (a FIFO or stdin is read as it arrives without it)"}
	case o.Read == "-" && term.IsTerminal(int(os.Stdin.Fd())):
		return &output.UsageError{Msg: "-I -r -: stdin is the terminal; pipe a capture in (tcpdump -w - ... | smcdump -I -r -)"}
	}
	if o.DisplayFilter != "" {
		if _, err := filter.Compile(o.DisplayFilter); err != nil {
			return &output.UsageError{Msg: "-Y: " + err.Error()}
		}
	}
	if err := tui.CheckTerminal(); err != nil {
		// Before the capture is opened (a live capture would start first).
		return &output.UsageError{Msg: "-I: no terminal: the browser needs one; without -I, -r FILE prints the frames (-V the fields, -z smc,expert the findings)"}
	}
	var (
		idx *browser.Index
		err error
	)
	switch {
	case o.Iface != "":
		idx, err = browser.OpenLive(ctx, o.Iface, o.CaptureFilter, o.Snaplen, o.Count)
	case o.Read != "":
		idx, err = browser.OpenInput(ctx, o.Read, o.Count, bo.tail)
	default:
		return &output.UsageError{Msg: "-I: needs -r FILE (- for stdin) or -i IFACE"}
	}
	if err != nil {
		return err
	}
	bro := browser.Options{Write: o.Write, Filter: o.DisplayFilter, All: o.All, Columns: bo.columns}
	if !bo.noConfig {
		bro.History, bro.ColumnsFile, bro.TimeFile = browser.HistoryFile(), browser.ColumnsFile(), browser.TimeFile()
	}
	b := browser.New(ctx, idx, bro)
	if err := b.App.UseTerminal(); err != nil {
		return err
	}
	return b.Run()
}
