package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/render"
)

// runCount prints n snapshots an interval apart. A replay is read to its
// end first; on a live host the first snapshot comes one interval after
// a first refresh, so it has rates.
func runCount(ctx context.Context, m *monitor.Monitor, format string, interval time.Duration, n int) int {
	if w := m.Wire(); w != nil {
		if err := w.Run(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			return 1
		}
	} else {
		m.Refresh()
	}
	enc := json.NewEncoder(os.Stdout)
	if format == "json" {
		enc.SetIndent("", "  ")
	}
	// Each broken counter is reported once, on stderr, so the output
	// stays a clean document for scripts.
	warned := map[string]bool{}
	for i := 0; i < n; i++ {
		if m.Wire() == nil || i > 0 {
			select {
			case <-ctx.Done():
				return 0
			case <-time.After(interval):
			}
		}
		s := m.Refresh()
		for _, e := range m.CounterErrors() {
			if !warned[e] {
				warned[e] = true
				fmt.Fprintln(os.Stderr, "smctop: RDMA counter left out: "+e)
			}
		}
		var err error
		if format == "text" {
			err = render.Monitor(os.Stdout, s)
		} else {
			err = enc.Encode(s)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "smctop: "+err.Error())
			return 1
		}
	}
	return 0
}
