package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/monitor/monitortest"
	"github.com/smcscope/smcscope/smcnl"
)

// gatedKernel counts its socket dumps and holds each until released.
type gatedKernel struct {
	monitor.Kernel
	dumps atomic.Int32
	gate  chan struct{}
}

func (k *gatedKernel) Sockets() ([]smcnl.Socket, error) {
	k.dumps.Add(1)
	<-k.gate
	return k.Kernel.Sockets()
}

// gatedMonitor is a monitor of a recorded host whose kernel dumps its
// sockets only when the test opens the gate.
func gatedMonitor(t *testing.T) (*gatedKernel, *monitor.Monitor) {
	t.Helper()
	base, err := monitor.ReplayKernel("../smcnl/testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	k := &gatedKernel{Kernel: base, gate: make(chan struct{})}
	m := monitor.New(monitor.Options{Kernel: k})
	t.Cleanup(func() { m.Close() })
	return k, m
}

// TestRefreshingShares: scrapes that come while a refresh runs get its
// snapshot; the kernel is dumped once for all of them.
func TestRefreshingShares(t *testing.T) {
	k, m := gatedMonitor(t)
	r := &Refreshing{M: m}
	const n = 10
	var wg sync.WaitGroup
	conns := make([]int, n+1)
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _ := r.Snapshot()
			conns[i] = len(s.Conns)
		}()
	}
	waitJoined(t, "the running refresh", n, func() int { return r.flights.waiting(struct{}{}) })
	close(k.gate)
	wg.Wait()
	if d := k.dumps.Load(); d != 1 {
		t.Errorf("%d socket dumps for %d concurrent scrapes, want 1", d, n+1)
	}
	if slices.Min(conns) == 0 || slices.Min(conns) != slices.Max(conns) {
		t.Errorf("connections per scrape %v: want one snapshot for all", conns)
	}
	if s, _ := r.Snapshot(); len(s.Conns) == 0 || k.dumps.Load() != 2 {
		t.Errorf("a scrape after it: %d dumps", k.dumps.Load())
	}
}

// BenchmarkScrape50Concurrent: 50 scrapers at once against the exporter
// of a host with 10,000 SMC sockets and 100 link groups, each scrape a
// whole refresh (smctop --listen --no-tui); reports the slowest scrape of
// each round of 50 as p99-ms (issue 34's bound: 100 ms).
func BenchmarkScrape50Concurrent(b *testing.B) {
	m := monitor.New(monitor.Options{Kernel: monitortest.BigKernel(b, 10000, 100), SysfsRoot: "../rdmastats/testdata/sys"})
	defer m.Close()
	srv := httptest.NewServer(Handler(&Refreshing{M: m}, nil))
	defer srv.Close()
	get := func() time.Duration {
		start := time.Now()
		resp, err := http.Get(srv.URL)
		if err != nil {
			b.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	get()
	var lat []time.Duration
	for b.Loop() {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := get()
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}

// TestScrapesShareRender: scrapes that ask alike while a response is
// being made get that response, byte for byte; one that asks otherwise
// (another encoding) gets its own.
func TestScrapesShareRender(t *testing.T) {
	k, m := gatedMonitor(t)
	h := Handler(&Refreshing{M: m}, nil).(*sharedResponse)
	srv := httptest.NewServer(h)
	defer srv.Close()
	const n = 8
	bodies := make([]string, n+1)
	var wg sync.WaitGroup
	for i := range n + 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.Header.Set("Accept-Encoding", "identity")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			bodies[i] = string(b)
		}()
	}
	waitJoined(t, "the running render", n, func() int { return h.flights.waiting("GET\x00\x00identity") })
	close(k.gate)
	wg.Wait()
	for i, b := range bodies {
		if !strings.Contains(b, "smc_link_up") || b != bodies[0] {
			t.Errorf("scrape %d: %d bytes, want the same %d bytes as the first", i, len(b), len(bodies[0]))
		}
	}
	if d := k.dumps.Load(); d != 1 {
		t.Errorf("%d socket dumps for %d scrapes", d, n+1)
	}
	resp, err := srv.Client().Get(srv.URL) // gzip: another response
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if d := k.dumps.Load(); d != 2 || resp.StatusCode != http.StatusOK {
		t.Errorf("a gzip scrape after them: status %d, %d dumps", resp.StatusCode, d)
	}
}

// waitJoined waits until n callers joined the run waiting reports on,
// failing after 10 s.
func waitJoined(t *testing.T, what string, n int, waiting func() int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for waiting() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the scrapes did not all join %s in 10 s (%d of %d)", what, waiting(), n)
		}
		time.Sleep(time.Millisecond) // polling for the event: every scrape waiting
	}
}
