package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// connCollector counts sockets by mode and source, and open fallbacks by
// reason: never one series per socket. Connections the wire saw end are
// not counted: the gauges say what exists now.
type connCollector struct {
	conns, fallbacks *prometheus.Desc
}

func newConnCollector() *connCollector {
	return &connCollector{
		conns: prometheus.NewDesc(namespace+"_conn_sockets", "SMC sockets now, by mode (SMC-R, SMC-D, fallback, pending, failed, listen) and source (kernel or wire).",
			[]string{"mode", "source"}, nil),
		// peer is the remote address (no port): bounded by the hosts this
		// one talks to, and what tells across a fleet who declined whom.
		fallbacks: prometheus.NewDesc(namespace+"_conn_fallback_sockets", "Sockets now in TCP fallback, by local reason, peer diagnosis (kernel names, SMC_CLC_DECL_*) and peer address.",
			[]string{"reason", "peer_diagnosis", "peer"}, nil),
	}
}

func (c *connCollector) collect(s *monitor.Snapshot, m *emitter) {
	type ms struct {
		mode   monitor.Mode
		source monitor.RowSource
	}
	modes := map[ms]int{}
	fb := map[[3]string]int{}
	for _, r := range s.Conns {
		if r.Source == monitor.SourceWire && r.State == monitor.StateClosed {
			continue
		}
		modes[ms{r.Mode, r.Source}]++
		if r.Mode == monitor.ModeFallback {
			peer := ""
			if r.Dst.IsValid() && !r.AddrHidden {
				peer = r.Dst.Addr().Unmap().String()
			}
			fb[[3]string{name(r.Fallback), name(r.PeerDiagnosis), peer}]++
		}
	}
	// A zero is a fact worth a series: every mode of every source read.
	for _, src := range []monitor.RowSource{monitor.SourceKernel, monitor.SourceWire} {
		if !hasRows(s, src) {
			continue
		}
		for _, mode := range []monitor.Mode{monitor.ModeSMCR, monitor.ModeSMCD, monitor.ModeFallback, monitor.ModePending, monitor.ModeFailed} {
			if _, ok := modes[ms{mode, src}]; !ok {
				modes[ms{mode, src}] = 0
			}
		}
	}
	for k, n := range modes {
		m.gauge(c.conns, float64(n), string(k.mode), string(k.source))
	}
	for k, n := range fb {
		m.gauge(c.fallbacks, float64(n), k[0], k[1], k[2])
	}
}

// hasRows says whether a snapshot read a source of rows: the kernel's
// sock_diag, or a capture.
func hasRows(s *monitor.Snapshot, src monitor.RowSource) bool {
	for _, x := range s.Sources {
		if (src == monitor.SourceKernel && x.Name == monitor.SourceSockDiag || src == monitor.SourceWire && x.Name == monitor.SourceWireName) && x.Available {
			return true
		}
	}
	return false
}

func name(r monitor.Reason) string {
	if r.Code == 0 {
		return "none"
	}
	return r.Name
}
