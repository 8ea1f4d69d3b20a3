package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// connCollector counts sockets by mode and state, and open fallbacks by
// reason: never one series per socket.
type connCollector struct {
	conns, fallbacks *prometheus.Desc
}

func newConnCollector() *connCollector {
	return &connCollector{
		conns: prometheus.NewDesc(namespace+"_conn_sockets", "SMC sockets now, by mode (SMC-R, SMC-D, fallback, pending, failed, listen) and source (kernel or wire).",
			[]string{"mode", "source"}, nil),
		fallbacks: prometheus.NewDesc(namespace+"_conn_fallback_sockets", "Sockets now in TCP fallback, by local reason and peer diagnosis (kernel names, SMC_CLC_DECL_*).",
			[]string{"reason", "peer_diagnosis"}, nil),
	}
}

func (c *connCollector) collect(s *monitor.Snapshot, ch chan<- prometheus.Metric) {
	type ms struct{ mode, source string }
	modes := map[ms]int{}
	fb := map[[2]string]int{}
	for _, r := range s.Conns {
		modes[ms{r.Mode, r.Source}]++
		if r.Mode == "fallback" {
			fb[[2]string{name(r.Fallback), name(r.PeerDiagnosis)}]++
		}
	}
	if s.Kernel != nil {
		for _, m := range []string{"SMC-R", "SMC-D", "fallback", "pending"} {
			if _, ok := modes[ms{m, "kernel"}]; !ok {
				modes[ms{m, "kernel"}] = 0 // a zero is a fact worth a series
			}
		}
	}
	for k, n := range modes {
		ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(n), k.mode, k.source)
	}
	for k, n := range fb {
		ch <- prometheus.MustNewConstMetric(c.fallbacks, prometheus.GaugeValue, float64(n), k[0], k[1])
	}
}

func name(r monitor.Reason) string {
	if r.Code == 0 {
		return "none"
	}
	return r.Name
}
