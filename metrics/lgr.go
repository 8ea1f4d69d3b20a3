package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// lgrCollector exports link groups: one info series each (a host has a
// handful), their connections, links, limits and buffers, and whether
// they have a second active link. A group the wire saw end is not
// exported: its series end with it, as a kernel group's do.
type lgrCollector struct {
	info, conns, links, redundant, maxConns, maxLinks, buf *prometheus.Desc
}

func newLGRCollector() *lgrCollector {
	l := []string{"lgr"}
	return &lgrCollector{
		info: prometheus.NewDesc(namespace+"_lgr_info", "Link group facts (value 1): kind, role, type, PNET ID, SMC version, peer host and OS.",
			[]string{"lgr", "kind", "role", "type", "pnetid", "version", "peer_host", "peer_os", "source"}, nil),
		conns:     prometheus.NewDesc(namespace+"_lgr_connections", "Connections in the link group.", l, nil),
		links:     prometheus.NewDesc(namespace+"_lgr_links", "Links of the link group, by state (DELETED: lost, the group not redundant since; UNKNOWN: a link a capture joined that nothing on the wire shows working).", []string{"lgr", "state"}, nil),
		redundant: prometheus.NewDesc(namespace+"_lgr_redundant", "1 when the SMC-R link group has two or more active links (survives one RNIC or port failure).", l, nil),
		maxConns:  prometheus.NewDesc(namespace+"_lgr_max_connections", "SMC-Rv2.1 negotiated connection limit of the link group.", l, nil),
		maxLinks:  prometheus.NewDesc(namespace+"_lgr_max_links", "SMC-Rv2.1 negotiated link limit of the link group.", l, nil),
		buf:       prometheus.NewDesc(namespace+"_lgr_buffer_bytes", "Bytes allocated for send buffers and RMBs/DMBs (Linux 6.12+).", []string{"lgr", "buffer"}, nil),
	}
}

// linkStateUnknown is smc_lgr_links' state label of the links whose
// state is not known (monitor.LinkNotKnown, "-" on the screens).
const linkStateUnknown monitor.LinkState = "UNKNOWN"

func (c *lgrCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, r := range s.LinkGroups {
		if r.Deleted {
			continue
		}
		id := lgrLabel(r)
		m.gauge(c.info, 1, id, string(r.Kind), string(r.Role), r.Type, r.PNETID, fmt.Sprintf("%d.%d", r.Version, r.Release), r.PeerHost, r.PeerOS, string(r.Source))
		m.gauge(c.conns, float64(r.Conns), id)
		if r.Kind == monitor.ModeSMCR {
			states := map[monitor.LinkState]int{monitor.LinkActive: 0, monitor.LinkDeleted: 0}
			for _, l := range r.Links {
				st := l.State
				if st == monitor.LinkNotKnown {
					st = linkStateUnknown
				}
				states[st]++
			}
			for st, n := range states {
				m.gauge(c.links, float64(n), id, string(st))
			}
			if !r.RedundancyUnknown { // absent, not 0: no alert on a link the capture may not show
				m.gauge(c.redundant, b2f(r.Redundant), id)
			}
		}
		if r.MaxConns != 0 {
			m.gauge(c.maxConns, float64(r.MaxConns), id)
			m.gauge(c.maxLinks, float64(r.MaxLinks), id)
		}
		if r.SndBufAlloc != 0 || r.RMBAlloc != 0 {
			m.gauge(c.buf, float64(r.SndBufAlloc), id, "send")
			m.gauge(c.buf, float64(r.RMBAlloc), id, "rmb")
		}
	}
}

// lgrLabel is a group's lgr label: its name in every output (its kernel
// ID, "0x100", or its row key when the capture does not show the ID).
func lgrLabel(r monitor.LinkGroupRow) string { return r.Name() }

func hexCode(c uint32) string { return fmt.Sprintf("0x%08x", c) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
