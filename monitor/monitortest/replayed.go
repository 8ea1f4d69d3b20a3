package monitortest

import (
	"context"
	"testing"

	"github.com/smcscope/smcscope/monitor"
)

// Replayed is a Monitor of capture path replayed whole, as smctop -r is
// once the replay has ended; it is closed when the test ends.
func Replayed(tb testing.TB, path string) *monitor.Monitor {
	tb.Helper()
	w, err := monitor.OpenWire(path, "", "", 0)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Run(context.Background()); err != nil {
		tb.Fatal(err)
	}
	m := monitor.New(monitor.Options{Wire: w})
	tb.Cleanup(func() { m.Close() })
	return m
}
