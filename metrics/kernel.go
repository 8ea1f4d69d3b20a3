package metrics

import (
	"maps"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/monitor"
)

// kernelCollector exports the SMC netlink statistics of the namespace
// (SMC_NETLINK_GET_STATS, GET_FBACK_STATS) as counters.
type kernelCollector struct {
	success, hsErrors, fallbacks, reasons, bytes, rmbUsage, hsLimit *prometheus.Desc
	// What smcr/smcd stats show besides (SMC_NLA_STATS_T_*).
	byVersion, calls, special, bufEvents, bufSizes, payloadSizes *prometheus.Desc
}

func newKernelCollector() *kernelCollector {
	return &kernelCollector{
		success:   prometheus.NewDesc(namespace+"_conn_handshakes_total", "SMC connections established, by technology and side.", []string{"tech", "side"}, nil),
		hsErrors:  prometheus.NewDesc(namespace+"_conn_handshake_errors_total", "SMC handshake errors, by side (SMC_NLA_STATS_*_HS_ERR_CNT).", []string{"side"}, nil),
		fallbacks: prometheus.NewDesc(namespace+"_conn_fallbacks_total", "Connections that fell back to TCP, by side.", []string{"side"}, nil),
		reasons:   prometheus.NewDesc(namespace+"_conn_fallback_reasons_total", "Fallbacks by side and reason, by kernel name (the kernel keeps 30 reasons per side).", []string{"side", "reason", "code"}, nil),
		bytes:     prometheus.NewDesc(namespace+"_conn_bytes_total", "Bytes moved over SMC, by technology and direction.", []string{"tech", "direction"}, nil),
		rmbUsage:  prometheus.NewDesc(namespace+"_conn_buffer_usage_bytes", "Bytes in use in SMC buffers, by technology and direction (Linux 6.10+).", []string{"tech", "direction"}, nil),
		hsLimit:   prometheus.NewDesc(namespace+"_handshake_limitation_enabled", "Whether SMC handshake limitation (limit_smc_hs) is on.", nil, nil),
		byVersion: prometheus.NewDesc(namespace+"_conn_handshakes_by_version_total", "SMC connections established, by technology, side and SMC version (v1, v2).", []string{"tech", "side", "version"}, nil),
		calls:     prometheus.NewDesc(namespace+"_conn_calls_total", "Send and receive calls on SMC sockets, by technology and direction.", []string{"tech", "direction"}, nil),
		special: prometheus.NewDesc(namespace+"_conn_special_calls_total", "Socket calls and options SMC handles apart (sendpage, splice, cork, nodelay, urgent_data), by technology.",
			[]string{"tech", "call"}, nil),
		bufEvents: prometheus.NewDesc(namespace+"_conn_buffer_events_total", "Events of SMC buffers (SMC_NLA_STATS_RMB_*), by technology, direction (rx: receive buffers, tx: send buffers) and event: "+
			"size_small (a smaller buffer than wanted), size_small_peer (the peer's too small), full, full_peer (the peer's full), reuse, alloc, downgrade (a smaller size tried after an allocation failed).",
			[]string{"tech", "direction", "event"}, nil),
		bufSizes: prometheus.NewDesc(namespace+"_conn_buffer_sizes_total", "SMC buffers made, by technology, direction and size bucket (the kernel's: up to 8K, 16K, ... 1024K, G1024K above).",
			[]string{"tech", "direction", "size"}, nil),
		payloadSizes: prometheus.NewDesc(namespace+"_conn_payload_sizes_total", "Send and receive calls by payload size bucket (the kernel's: up to 8K, 16K, ... 1024K, G1024K above), technology and direction.",
			[]string{"tech", "direction", "size"}, nil),
	}
}

func (c *kernelCollector) collect(s *monitor.Snapshot, m *emitter) {
	counter := func(d *prometheus.Desc, v uint64, labels ...string) { m.counter(d, float64(v), labels...) }
	if k := s.Kernel; k != nil {
		for _, t := range []struct {
			name string
			v    monitor.TechTotals
		}{{"smcr", k.SMCR}, {"smcd", k.SMCD}} {
			counter(c.success, t.v.ClientSuccess, t.name, "client")
			counter(c.success, t.v.ServerSuccess, t.name, "server")
			counter(c.bytes, t.v.RxBytes, t.name, "rx")
			counter(c.bytes, t.v.TxBytes, t.name, "tx")
			if t.v.RxRMBUsage != nil { // absent before Linux 6.10: no series, not 0
				m.gauge(c.rmbUsage, float64(*t.v.RxRMBUsage), t.name, "rx")
				m.gauge(c.rmbUsage, float64(*t.v.TxRMBUsage), t.name, "tx")
			}
			c.details(t.name, t.v, counter)
		}
		counter(c.hsErrors, k.ClientHSErrors, "client")
		counter(c.hsErrors, k.ServerHSErrors, "server")
		counter(c.fallbacks, k.ClientFallbacks, "client")
		counter(c.fallbacks, k.ServerFallbacks, "server")
	}
	if w := s.WireTotals; s.Kernel == nil && w != nil {
		// A capture stands in for the kernel: what it shows, and no
		// series for what it cannot (handshake errors, buffer usage,
		// SMC-D bytes).
		for _, side := range []string{"client", "server"} {
			counter(c.success, w.SMCRSuccess, "smcr", side)
			counter(c.success, w.SMCDSuccess, "smcd", side)
		}
		counter(c.bytes, w.SMCRRxBytes, "smcr", "rx")
		counter(c.bytes, w.SMCRTxBytes, "smcr", "tx")
		counter(c.fallbacks, w.ClientFallbacks, "client")
		counter(c.fallbacks, w.ServerFallbacks, "server")
	}
	for _, r := range s.Fallbacks {
		counter(c.reasons, r.Count, string(r.Side), r.Reason.Name, hexCode(r.Reason.Code))
	}
	if on := s.Overview.HSLimitation; on != nil {
		m.gauge(c.hsLimit, b2f(*on))
	}
}

// details exports one technology's version split, calls, buffer events
// and size histograms: every series always, so a zero stays a series.
func (c *kernelCollector) details(tech string, t monitor.TechTotals, counter func(*prometheus.Desc, uint64, ...string)) {
	counter(c.byVersion, t.ClientV1Success, tech, "client", "v1")
	counter(c.byVersion, t.ClientV2Success, tech, "client", "v2")
	counter(c.byVersion, t.ServerV1Success, tech, "server", "v1")
	counter(c.byVersion, t.ServerV2Success, tech, "server", "v2")
	counter(c.calls, t.RxCount, tech, "rx")
	counter(c.calls, t.TxCount, tech, "tx")
	for _, x := range []struct {
		name string
		v    uint64
	}{{"sendpage", t.Calls.Sendpage}, {"splice", t.Calls.Splice}, {"cork", t.Calls.Cork}, {"nodelay", t.Calls.Nodelay}, {"urgent_data", t.Calls.UrgentData}} {
		counter(c.special, x.v, tech, x.name)
	}
	for _, d := range []struct {
		dir            string
		ev             monitor.BufferEvents
		sizes, payload monitor.SizeHistogram
	}{{"rx", t.RxBuffer, t.RxBufferSizes, t.RxPayloadSizes}, {"tx", t.TxBuffer, t.TxBufferSizes, t.TxPayloadSizes}} {
		for _, x := range []struct {
			name string
			v    uint64
		}{{"size_small", d.ev.SizeSmall}, {"size_small_peer", d.ev.SizeSmallPeer}, {"full", d.ev.Full}, {"full_peer", d.ev.FullPeer},
			{"reuse", d.ev.Reuse}, {"alloc", d.ev.Alloc}, {"downgrade", d.ev.Downgrade}} {
			counter(c.bufEvents, x.v, tech, d.dir, x.name)
		}
		for i, b := range monitor.SizeBuckets {
			counter(c.bufSizes, d.sizes[i], tech, d.dir, b)
			counter(c.payloadSizes, d.payload[i], tech, d.dir, b)
		}
	}
}

// expertCollector exports smc_expert_findings_total: how often each
// finding of package expert's catalogue was found, the wire's frames
// (smctop -i/-r) and the kernel's refreshes, one series per finding and
// severity (a bounded set: the catalogue).
//
// A counter never falls but at a reset, and a wire finding can be taken
// back (a damaged request the responder's ACK showed to be the capture's
// damage leaves the tracker's roce.icrc.bad one lower): each series is
// exported at the highest count it reached, until the tracker's passes
// it; a replay begun again (fewer frames read than at the last scrape)
// begins its counts again, a reset.
type expertCollector struct {
	findings *prometheus.Desc
	mu       sync.Mutex // scrapes run at once
	peak     map[monitor.ExpertCount]uint64
	frames   int // the wire source's, at the last scrape
}

func newExpertCollector() *expertCollector {
	return &expertCollector{findings: prometheus.NewDesc(namespace+"_expert_findings_total",
		"Expert findings (smcdump -z smc,expert's catalogue): frames that show them on the wire (smctop -i/-r), refreshes that found them in the kernel's counters.",
		[]string{"finding", "severity", "source"}, nil), peak: map[monitor.ExpertCount]uint64{}}
}

func (c *expertCollector) collect(s *monitor.Snapshot, m *emitter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, src := range s.Sources {
		if src.Name == monitor.SourceWireName {
			if src.Frames < c.frames {
				maps.DeleteFunc(c.peak, func(k monitor.ExpertCount, _ uint64) bool { return k.Source == monitor.FindingSource(expert.FromWire) })
			}
			c.frames = src.Frames
		}
	}
	for _, e := range s.Expert {
		k := monitor.ExpertCount{ID: e.ID, Severity: e.Severity, Source: e.Source}
		n := max(c.peak[k], e.Count)
		c.peak[k] = n
		m.counter(c.findings, float64(n), e.ID.String(), e.Severity.String(), e.Source.String())
	}
}
