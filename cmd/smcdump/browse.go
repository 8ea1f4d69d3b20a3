package main

import (
	"context"
	"github.com/smcscope/smcscope/tui"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/tui/browser"
)

// browse runs smcdump -I: the capture browser over -r FILE or -i IFACE.
// -Y is its first display filter, -a starts it on every frame, -c reads
// only the first N frames, -w names its export file; flags that shape
// printed output are refused rather than ignored.
func browse(ctx context.Context, o output.Options) error {
	switch {
	case o.Format != "" || o.Verbose || o.Hex || o.Quiet || len(o.Views) > 0 || len(o.Fields) > 0 || o.Glossary != "":
		return &output.UsageError{Msg: "-I: -T, -e, -G, -V, -x, -q and -z shape printed output; the browser has its own panes"}
	case o.Count < 0:
		return &output.UsageError{Msg: "-c: want a positive count"}
	case o.CaptureFilter != "" && o.Iface == "":
		return &output.UsageError{Msg: "-f is a capture filter for -i; use -Y to filter a file"}
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
	case o.Read != "" && o.Read != "-":
		idx, err = browser.OpenLimit(ctx, o.Read, o.Count)
	default:
		return &output.UsageError{Msg: "-I: needs -r FILE or -i IFACE (not stdin)"}
	}
	if err != nil {
		return err
	}
	return browser.New(ctx, idx, browser.Options{Write: o.Write, Filter: o.DisplayFilter, All: o.All, History: browser.HistoryFile()}).Run()
}
