package main

import (
	"context"
	"errors"

	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/tui/browser"
)

// browse runs smcdump -I: the capture browser over -r FILE or -i IFACE.
func browse(ctx context.Context, o output.Options) error {
	var (
		idx *browser.Index
		err error
	)
	switch {
	case o.Iface != "":
		idx, err = browser.OpenLive(ctx, o.Iface, o.CaptureFilter)
	case o.Read != "" && o.Read != "-":
		idx, err = browser.Open(ctx, o.Read)
	default:
		return &output.UsageError{Msg: "-I: needs -r FILE or -i IFACE (not stdin)"}
	}
	if err != nil {
		return err
	}
	if o.Format != "" || o.Verbose || o.Quiet || len(o.Views) > 0 {
		return errors.New("-I: -T, -V, -q and -z do not apply to the browser")
	}
	return browser.New(ctx, idx, browser.Options{Write: o.Write}).Run()
}
