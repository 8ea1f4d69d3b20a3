package fleet

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/smcscope/smcscope/internal/testutil"
)

// BenchmarkRefreshPrometheusLive10000 is BenchmarkRefreshPrometheus10000
// with the series where a live server has its last minutes: in its head,
// scraped from 10,000 exporters (one HTTP server answering for each host
// as genFleet's host would), rather than in a backfilled block. The
// server keeps scraping while the refreshes run, as a live one does.
//
// go test ./fleet/ -run '^$' -bench RefreshPrometheusLive10000 -benchtime 5x
//
// Measured 2026-11-29 on the project's 2-core VM, shared (load average
// ~5): 20 s a refresh, every 20 s scrape of 2.6 M series taking the
// server most of a core of its own: a VM this size cannot both ingest
// such a fleet and answer for it in a second. The setup takes about 3
// minutes.
func BenchmarkRefreshPrometheusLive10000(b *testing.B) {
	if testing.Short() {
		b.Skip("-short: a Prometheus scraping 10,000 hosts takes minutes to fill")
	}
	const n = 10000
	url := scrapingPrometheus(b, n, 20*time.Second)
	c := &Client{URL: url, Timeout: time.Minute}
	// b.Loop runs the function once, so the minutes of setup are not
	// spent again for the measured run; its timer starts here.
	for b.Loop() {
		s := Read(context.Background(), c)
		if s.Error != "" || len(s.Hosts) != n {
			b.Fatalf("%s: %d hosts, want %d", s.Error, len(s.Hosts), n)
		}
	}
}

// scrapingPrometheus serves n hosts' /metrics (fleetHost) and starts
// prometheus scraping them every interval; it returns the server's URL
// once every host was scraped twice (rate() has data).
func scrapingPrometheus(tb testing.TB, n int, interval time.Duration) string {
	tb.Helper()
	testutil.NeedTool(tb, "prometheus")
	tmpl := fleetTemplates(tb)
	scrapes := make([]atomic.Int64, n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/h/"))
		if err != nil || h < 0 || h >= n {
			http.NotFound(w, r)
			return
		}
		if h%500 == 7 {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		bw := bufio.NewWriterSize(w, 64<<10)
		fleetHost(bw, tmpl, h, scrapes[h].Add(1))
		bw.Flush()
	})}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	var conf strings.Builder
	fmt.Fprintf(&conf, "global:\n  scrape_interval: %v\n  scrape_timeout: %v\nscrape_configs:\n  - job_name: smc\n    static_configs:\n", interval, interval)
	for h := range n {
		fmt.Fprintf(&conf, "      - targets: ['%s']\n        labels: {instance: 'host%05d:9714', __metrics_path__: '/h/%d'}\n", ln.Addr(), h, h)
	}
	addr, log := testutil.Prometheus(tb, tb.TempDir(), conf.String())
	url := "http://" + addr
	waitReady(tb, url, log.String)
	c := &Client{URL: url, Timeout: time.Minute}
	deadline := time.Now().Add(15 * time.Minute)
	for {
		r, err := c.Query(context.Background(), `count(count_over_time(up[5m]) >= 2)`)
		if err == nil && len(r) == 1 && int(r[0].Value) == n {
			return url
		}
		if time.Now().After(deadline) {
			tb.Fatalf("Prometheus did not scrape %d hosts twice in 15 min (%v %v); its log:\n%s", n, r, err, log.String())
		}
		time.Sleep(time.Second) // polling the server for an event
	}
}

// fleetHost writes host h's exposition (text format) at its scrape'th
// scrape: genFleet's host, its counters grown by scrape.
func fleetHost(w *bufio.Writer, tmpl [4]hostTemplate, h int, scrape int64) {
	pair := h / 2
	t := tmpl[h%2]
	if pair%25 == 0 {
		t = tmpl[2+h%2]
	}
	names := make([]string, 0, len(t))
	for name := range t {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f := t[name]
		typ := "gauge"
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			typ = "counter"
		case dto.MetricType_UNTYPED:
			typ = "untyped"
		}
		fmt.Fprintf(w, "# TYPE %s %s\n", name, typ)
		for i, m := range f.Metric {
			w.WriteString(name)
			w.WriteByte('{')
			for j, l := range m.Label {
				if j > 0 {
					w.WriteByte(',')
				}
				w.WriteString(l.GetName())
				w.WriteByte('=')
				w.WriteString(strconv.Quote(pairValue(l.GetName(), l.GetValue(), h, pair)))
			}
			w.WriteString("} ")
			var v float64
			switch {
			case m.Counter != nil:
				v = m.Counter.GetValue() + float64(scrape*int64((h+i)%7))
			case m.Gauge != nil:
				v = m.Gauge.GetValue()
			case m.Untyped != nil:
				v = m.Untyped.GetValue()
			}
			w.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
			w.WriteByte('\n')
		}
	}
}
