package main

import (
	"context"
	"errors"
	"net"

	"github.com/smcscope/smcscope/metrics"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/top"
)

// runLive runs the dashboard and, with --listen, the exporter beside it
// (fed by the dashboard's own refreshes); --no-tui runs the exporter
// alone, refreshing on every scrape.
func runLive(ctx context.Context, m *monitor.Monitor, c config) error {
	var ln net.Listener
	if c.listen != "" {
		var err error
		// Bound before the dashboard starts, so a taken address is an
		// error on the terminal rather than under the dashboard.
		if c.webConfig != "" {
			if err := metrics.CheckWebConfig(c.webConfig); err != nil {
				return err
			}
		}
		if ln, err = listen(c.listen); err != nil {
			return err
		}
	}
	so := metrics.ServeOptions{WebConfigFile: c.webConfig, NoSnapshot: c.noSnapshot}
	if c.noTUI {
		if w := m.Wire(); w != nil {
			go func() { _ = w.Run(ctx) }()
		}
		return metrics.Serve(ctx, ln, &metrics.Refreshing{M: m}, so)
	}
	o := top.Options{Interval: c.interval}
	if ln == nil {
		return top.Run(ctx, m, o)
	}
	latest := &metrics.Latest{}
	o.OnSnapshot = latest.Set
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- metrics.Serve(ctx, ln, latest, so) }()
	err := top.Run(ctx, m, o)
	cancel()
	return errors.Join(err, <-errc)
}
