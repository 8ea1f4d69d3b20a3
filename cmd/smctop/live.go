package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

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
		if ln, err = listen(c.listen); err != nil {
			return err
		}
	}
	if c.noTUI {
		if w := m.Wire(); w != nil {
			go func() { _ = w.Run(ctx) }()
		}
		return serve(ctx, ln, metrics.Refreshing{M: m})
	}
	o := top.Options{Interval: c.interval}
	if ln == nil {
		return top.Run(ctx, m, o)
	}
	latest := &metrics.Latest{}
	o.OnSnapshot = latest.Set
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, ln, latest) }()
	err := top.Run(ctx, m, o)
	cancel()
	return errors.Join(err, <-errc)
}

// serve serves /metrics on ln until ctx ends. It is metrics.Serve over a
// listener bound by the caller, which knows the real address.
func serve(ctx context.Context, ln net.Listener, src metrics.Source) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(src))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("smcscope SMC exporter: /metrics\n"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
