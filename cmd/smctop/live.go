package main

import (
	"context"
	"errors"
	"time"

	"github.com/smcscope/smcscope/metrics"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/top"
)

// runLive runs the dashboard and, with --listen, the exporter beside it
// (fed by the dashboard's own refreshes); --no-tui runs the exporter
// alone, refreshing on every scrape.
func runLive(ctx context.Context, m *monitor.Monitor, interval time.Duration, listen string, noTUI bool) error {
	if noTUI {
		if listen == "" {
			return errors.New("--no-tui needs --listen")
		}
		if w := m.Wire(); w != nil {
			go func() { _ = w.Run(ctx) }()
		}
		return metrics.Serve(ctx, listen, metrics.Refreshing{M: m})
	}
	o := top.Options{Interval: interval}
	if listen != "" {
		latest := &metrics.Latest{}
		o.OnSnapshot = latest.Set
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- metrics.Serve(ctx, listen, latest) }()
		select {
		case err := <-errc: // the address is taken, or similar
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
	return top.Run(ctx, m, o)
}
