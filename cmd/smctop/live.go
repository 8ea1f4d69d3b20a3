package main

import (
	"context"
	"errors"
	"time"

	"github.com/smcscope/smcscope/monitor"
)

// runLive runs the dashboard (and the exporter with --listen) until ctx
// ends or the user quits.
func runLive(ctx context.Context, m *monitor.Monitor, interval time.Duration, listen string, noTUI bool) error {
	return errors.New("the dashboard is not built yet; use --once")
}
