package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

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
// headless exporter). Scrapes that come while a refresh runs share it:
// a refresh reads every socket of the host, and scrapers that queued for
// one each (several Prometheus servers, a dashboard's ad-hoc queries)
// would wait for all the refreshes before theirs. What they get was
// begun at most one refresh before they asked.
type Refreshing struct {
	M *monitor.Monitor

	flights shared[struct{}, refreshed]
}

// refreshed is one refresh's snapshot and how long it took.
type refreshed struct {
	s    monitor.Snapshot
	took time.Duration
}

// Snapshot refreshes the monitor, or waits for the refresh running.
func (r *Refreshing) Snapshot() (monitor.Snapshot, time.Duration) {
	v, _ := r.flights.do(struct{}{}, nil, func() refreshed {
		start := time.Now()
		s := r.M.Refresh()
		return refreshed{s, time.Since(start)}
	})
	return v.s, v.took
}

// shared runs a piece of work once for the callers that ask for it (by
// key) while it runs: each gets the result of the run it joined.
type shared[K comparable, V any] struct {
	mu  sync.Mutex
	cur map[K]*flight[V]
}

// flight is one run and the callers waiting for it.
type flight[V any] struct {
	done    chan struct{}
	v       V
	waiters int // callers that joined it (under shared.mu)
}

// do returns the result of fn run for k, by this caller or by the one
// whose run it joined; a joined caller gives up when cancel closes (ok
// false).
func (s *shared[K, V]) do(k K, cancel <-chan struct{}, fn func() V) (v V, ok bool) {
	s.mu.Lock()
	if c := s.cur[k]; c != nil {
		c.waiters++
		s.mu.Unlock()
		select {
		case <-c.done:
			return c.v, true
		case <-cancel:
			return v, false
		}
	}
	if s.cur == nil {
		s.cur = map[K]*flight[V]{}
	}
	c := &flight[V]{done: make(chan struct{})}
	s.cur[k] = c
	s.mu.Unlock()
	c.v = fn()
	s.mu.Lock()
	delete(s.cur, k)
	s.mu.Unlock()
	close(c.done)
	return c.v, true
}

// waiting is how many callers joined the run for k now (0: none runs).
func (s *shared[K, V]) waiting(k K) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur[k]; c != nil {
		return c.waiters
	}
	return 0
}

// collector is one file's metrics over a snapshot.
type collector interface {
	collect(s *monitor.Snapshot, m *emitter)
}

// emitter sends a scrape's metrics. Label values come from the kernel and
// sysfs (device names, PNET IDs, host names) and may hold bytes that are
// not UTF-8, which the exposition format cannot carry: they are written
// as \xNN escapes, so the series stays and says what the bytes were. A
// metric that still cannot be made is reported to the registry, which
// logs it and serves the rest (promhttp.ContinueOnError).
type emitter struct {
	ch chan<- prometheus.Metric
}

func (m *emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	m.send(d, prometheus.GaugeValue, v, labels)
}

func (m *emitter) counter(d *prometheus.Desc, v float64, labels ...string) {
	m.send(d, prometheus.CounterValue, v, labels)
}

func (m *emitter) send(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) {
	for i, l := range labels {
		if !utf8.ValidString(l) {
			labels[i] = escapeInvalid(l)
		}
	}
	metric, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		metric = prometheus.NewInvalidMetric(d, err)
	}
	m.ch <- metric
}

// escapeInvalid writes the bytes of s that are not UTF-8 as \xNN.
func escapeInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&b, "\\x%02x", s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
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
		collectors: []collector{newConnCollector(), newLGRCollector(), newLinkCollector(), newRNICCollector(), newDIBSCollector(), newKernelCollector(), newSystemCollector(), newHostCollector(), newExpertCollector()},
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
	m := &emitter{ch: ch}
	m.gauge(e.duration, took.Seconds())
	for _, src := range s.Sources {
		m.gauge(e.available, b2f(src.Available), string(src.Name))
	}
	for _, c := range e.collectors {
		c.collect(&s, m)
	}
}

// Registry returns a registry with the SMC collectors over src, the
// build's smc_build_info and the standard process and Go collectors.
func Registry(src Source) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(newExporter(src), buildInfo(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	return r
}

// buildInfo is smc_build_info: the module version, VCS revision and Go
// version this exporter was built from (value 1), as node_exporter's
// node_exporter_build_info.
func buildInfo() prometheus.Collector {
	version, revision := "(devel)", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        namespace + "_build_info",
		Help:        "smcscope build (value 1): module version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()},
	})
	g.Set(1)
	return g
}

// Handler serves the SMC metrics of src. Errors of a scrape (a metric
// that could not be made) go to errLog, nil for the standard logger's
// stderr, and the rest of the scrape is served.
func Handler(src Source, errLog promhttp.Logger) http.Handler {
	if errLog == nil {
		errLog = log.New(os.Stderr, "smctop: /metrics: ", log.LstdFlags)
	}
	return &sharedResponse{h: promhttp.HandlerFor(Registry(src), promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: errLog})}
}

// sharedResponse renders one response for the scrapes that ask alike
// (the same method, Accept and Accept-Encoding) while it is being made:
// turning a host's snapshot into its series, encoded and compressed,
// costs as much as reading the host, and each of many scrapers at once
// (several Prometheus servers, federation, ad-hoc curls) would otherwise
// pay it in turn, the last one waiting for all the others'
// (BenchmarkScrape50Concurrent). What a scraper gets was begun at most
// one render before it asked.
type sharedResponse struct {
	h       http.Handler
	flights shared[string, *rendering] // by the request's negotiation headers
}

// rendering is one response, recorded (http.ResponseWriter).
type rendering struct {
	code   int
	header http.Header
	body   bytes.Buffer
}

func (c *rendering) Header() http.Header { return c.header }

func (c *rendering) Write(b []byte) (int, error) { return c.body.Write(b) }

func (c *rendering) WriteHeader(code int) { c.code = code }

func (c *rendering) writeTo(w http.ResponseWriter) {
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.code)
	w.Write(c.body.Bytes())
}

// negotiation is what a response depends on besides the snapshot.
func negotiation(r *http.Request) string {
	return r.Method + "\x00" + r.Header.Get("Accept") + "\x00" + r.Header.Get("Accept-Encoding")
}

func (s *sharedResponse) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := s.flights.do(negotiation(r), r.Context().Done(), func() *rendering {
		c := &rendering{code: http.StatusOK, header: http.Header{}}
		s.h.ServeHTTP(c, r)
		return c
	})
	if ok {
		c.writeTo(w)
	}
}

// SnapshotHandler serves the snapshot itself as JSON (smctop --once -o
// json's document): smctop --remote, and a fleet view's drill-down into a
// host, show it as that host's dashboard.
func SnapshotHandler(src Source) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s, _ := src.Snapshot()
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(s); err != nil {
			log.Printf("smctop: /snapshot.json: %v", err)
		}
	})
}

// ServeOptions are how the exporter serves.
type ServeOptions struct {
	// WebConfigFile is node_exporter's --web.config.file: TLS and basic
	// auth for every endpoint (the Prometheus exporter-toolkit's format,
	// https://prometheus.io/docs/prometheus/latest/configuration/https/);
	// empty: plain HTTP, no auth.
	WebConfigFile string
	// NoSnapshot turns /snapshot.json off (it names connections and
	// processes; /metrics stays).
	NoSnapshot bool
}

// CheckWebConfig reads a --web.config.file and its certificates, so that a
// mistake is an error at start, not at the first scrape.
func CheckWebConfig(path string) error {
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("--web.config.file %s: %w", path, err)
	}
	return nil
}

// Serve serves /metrics (and /snapshot.json) on ln until ctx ends. The
// caller binds ln, so it knows the real address (":0") and a taken one is
// its error, before anything else starts. TLS and basic auth are the
// exporter-toolkit's, as node_exporter's are.
func Serve(ctx context.Context, ln net.Listener, src Source, o ServeOptions) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(src, nil))
	index := "smcscope SMC exporter: /metrics, /snapshot.json (what smctop --remote shows)\n"
	if o.NoSnapshot {
		index = "smcscope SMC exporter: /metrics (/snapshot.json is off: --web.disable-snapshot)\n"
	} else {
		mux.Handle("/snapshot.json", SnapshotHandler(src))
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(index))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	systemd := false
	cfg := &web.FlagConfig{WebListenAddresses: &[]string{}, WebSystemdSocket: &systemd, WebConfigFile: &o.WebConfigFile}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := web.Serve(ln, srv, cfg, logger); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
