package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// kernelCollector exports the SMC netlink statistics of the namespace
// (SMC_NETLINK_GET_STATS, GET_FBACK_STATS) as counters.
type kernelCollector struct {
	success, hsErrors, fallbacks, reasons, bytes, rmbUsage, hsLimit *prometheus.Desc
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
			m.gauge(c.rmbUsage, float64(t.v.RxRMBUsage), t.name, "rx")
			m.gauge(c.rmbUsage, float64(t.v.TxRMBUsage), t.name, "tx")
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
		v := 0.0
		if *on {
			v = 1
		}
		m.gauge(c.hsLimit, v)
	}
}

// expertCollector exports smc_expert_findings_total: how often each
// finding of package expert's catalogue was found, the wire's frames
// (smctop -i/-r) and the kernel's refreshes, one series per finding and
// severity (a bounded set: the catalogue).
type expertCollector struct{ findings *prometheus.Desc }

func newExpertCollector() *expertCollector {
	return &expertCollector{findings: prometheus.NewDesc(namespace+"_expert_findings_total",
		"Expert findings (smcdump -z smc,expert's catalogue): frames that show them on the wire (smctop -i/-r), refreshes that found them in the kernel's counters.",
		[]string{"finding", "severity", "source"}, nil)}
}

func (c *expertCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, e := range s.Expert {
		m.counter(c.findings, float64(e.Count), e.ID.String(), e.Severity.String(), e.Source.String())
	}
}
