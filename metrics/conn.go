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
	// The kernel sockets' cursor lags summed by mode, the oldest
	// unconfirmed send data, and the groups' connections without a socket.
	lag, unconfirmedAge, unlisted *prometheus.Desc
}

func newConnCollector() *connCollector {
	return &connCollector{
		conns: prometheus.NewDesc(namespace+"_conn_sockets", "SMC sockets now, by mode (SMC-R, SMC-D, fallback, pending, failed, listen) and source (kernel or wire).",
			[]string{"mode", "source"}, nil),
		// peer is the remote address (no port): bounded by the hosts this
		// one talks to, and what tells across a fleet who declined whom.
		fallbacks: prometheus.NewDesc(namespace+"_conn_fallback_sockets", "Sockets now in TCP fallback, by local reason, peer diagnosis (kernel names, SMC_CLC_DECL_*) and peer address.",
			[]string{"reason", "peer_diagnosis", "peer"}, nil),
		lag: prometheus.NewDesc(namespace+"_conn_cursor_lag_bytes", "Bytes between the kernel sockets' CDC cursors, summed by mode: "+
			"rx_unread (received, not yet read by the application), tx_unconfirmed (written into the peer's buffer, not yet read there), "+
			"tx_unsent (in the send buffer, not yet written to the peer).", []string{"mode", "lag"}, nil),
		unconfirmedAge: prometheus.NewDesc(namespace+"_conn_tx_unconfirmed_max_age_seconds", "How long the oldest standing unconfirmed send data has stood (the peer's consumer cursor unmoved), by mode; 0 when none stands.",
			[]string{"mode"}, nil),
		unlisted: prometheus.NewDesc(namespace+"_lgr_conns_without_socket", "Connections the kernel's link groups hold beyond the sockets sock_diag lists on them: sockets the application closed while the close with the peer goes on.",
			nil, nil),
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
			fb[[3]string{name(r.FallbackReason()), name(r.PeerDiagnosisReason()), peer}]++
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
	if hasRows(s, monitor.SourceKernel) {
		c.lags(s, m)
	}
}

// lags exports the cursor lags of the kernel's SMC-R and SMC-D sockets:
// every mode's series, 0 without sockets.
func (c *connCollector) lags(s *monitor.Snapshot, m *emitter) {
	type sums struct {
		unread, unconfirmed, unsent uint64
		age                         float64
	}
	by := map[monitor.Mode]*sums{monitor.ModeSMCR: {}, monitor.ModeSMCD: {}}
	for _, r := range s.Conns {
		x, ok := by[r.Mode]
		if r.Source != monitor.SourceKernel || r.Cursors == nil || !ok {
			continue
		}
		cur := r.Cursors
		x.unread += cur.RxUnread
		x.unconfirmed += cur.TxUnconfirmed
		x.unsent += cur.TxUnsent
		if !cur.UnconfirmedSince.IsZero() {
			x.age = max(x.age, s.Time.Sub(cur.UnconfirmedSince).Seconds())
		}
	}
	for mode, x := range by {
		m.gauge(c.lag, float64(x.unread), string(mode), "rx_unread")
		m.gauge(c.lag, float64(x.unconfirmed), string(mode), "tx_unconfirmed")
		m.gauge(c.lag, float64(x.unsent), string(mode), "tx_unsent")
		m.gauge(c.unconfirmedAge, x.age, string(mode))
	}
	if n := s.Overview.UnlistedConns; n != nil {
		m.gauge(c.unlisted, float64(*n))
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
