package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/smcscope/smcscope/monitor"
)

const namespace = "smc"

// Source hands collectors the snapshot to export.
type Source interface {
	Snapshot() (monitor.Snapshot, time.Duration)
}

// Latest is a Source holding the newest snapshot made elsewhere (by the
// dashboard's refresh loop), so scrapes do not refresh the kernel twice.
type Latest struct {
	mu   sync.Mutex
	s    monitor.Snapshot
	took time.Duration
}

// Set stores a snapshot and how long it took to make.
func (l *Latest) Set(s monitor.Snapshot, took time.Duration) {
	l.mu.Lock()
	l.s, l.took = s, took
	l.mu.Unlock()
}

// Snapshot returns the newest snapshot.
func (l *Latest) Snapshot() (monitor.Snapshot, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s, l.took
}

// Refreshing is a Source that refreshes the Monitor on every scrape (the
// headless exporter).
type Refreshing struct{ M *monitor.Monitor }

// Snapshot refreshes the monitor.
func (r Refreshing) Snapshot() (monitor.Snapshot, time.Duration) {
	start := time.Now()
	s := r.M.Refresh()
	return s, time.Since(start)
}

// collector is one file's metrics over a snapshot.
type collector interface {
	collect(s *monitor.Snapshot, ch chan<- prometheus.Metric)
}

// exporter calls every collector on one snapshot per scrape.
type exporter struct {
	src        Source
	collectors []collector
	duration   *prometheus.Desc
	available  *prometheus.Desc
}

func newExporter(src Source) *exporter {
	return &exporter{
		src:        src,
		collectors: []collector{newConnCollector(), newLGRCollector(), newLinkCollector(), newRNICCollector(), newKernelCollector()},
		duration:   prometheus.NewDesc(namespace+"_exporter_snapshot_duration_seconds", "Time taken to read every source for this scrape.", nil, nil),
		available:  prometheus.NewDesc(namespace+"_exporter_source_up", "Whether a source of SMC facts could be read (1) or not (0).", []string{"source"}, nil),
	}
}

// Describe sends nothing: the exporter is an unchecked collector, since
// RDMA counter names depend on the driver and are only known when read.
// Registry still rejects duplicate or inconsistent series at scrape time.
func (e *exporter) Describe(chan<- *prometheus.Desc) {}

func (e *exporter) Collect(ch chan<- prometheus.Metric) {
	s, took := e.src.Snapshot()
	ch <- prometheus.MustNewConstMetric(e.duration, prometheus.GaugeValue, took.Seconds())
	for _, src := range s.Sources {
		v := 0.0
		if src.Available {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(e.available, prometheus.GaugeValue, v, src.Name)
	}
	for _, c := range e.collectors {
		c.collect(&s, ch)
	}
}

// Registry returns a registry with the SMC collectors over src.
func Registry(src Source) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(newExporter(src))
	return r
}

// Handler serves the SMC metrics of src.
func Handler(src Source) http.Handler {
	return promhttp.HandlerFor(Registry(src), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Serve serves /metrics on addr until ctx ends.
func Serve(ctx context.Context, addr string, src Source) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(src))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("smcscope SMC exporter: /metrics\n"))
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
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
