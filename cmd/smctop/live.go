package main

import (
	"context"

	"time"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/tui/top"
)

// runLive runs the dashboard (and the exporter with --listen) until ctx
// ends or the user quits.
func runLive(ctx context.Context, m *monitor.Monitor, interval time.Duration, listen string, noTUI bool) error {
	return top.Run(ctx, m, top.Options{Interval: interval})
}
