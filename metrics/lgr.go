package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// lgrCollector exports link groups: one info series each (a host has a
// handful), their connections, links, limits and buffers, and whether
// they have a second active link.
type lgrCollector struct {
	info, conns, links, redundant, maxConns, maxLinks, buf *prometheus.Desc
}

func newLGRCollector() *lgrCollector {
	l := []string{"lgr"}
	return &lgrCollector{
		info: prometheus.NewDesc(namespace+"_lgr_info", "Link group facts (value 1): kind, role, type, PNET ID, SMC version, peer host and OS.",
			[]string{"lgr", "kind", "role", "type", "pnetid", "version", "peer_host", "peer_os", "source"}, nil),
		conns:     prometheus.NewDesc(namespace+"_lgr_connections", "Connections in the link group.", l, nil),
		links:     prometheus.NewDesc(namespace+"_lgr_links", "Links of the link group, by state.", []string{"lgr", "state"}, nil),
		redundant: prometheus.NewDesc(namespace+"_lgr_redundant", "1 when the SMC-R link group has two or more active links (survives one RNIC or port failure).", l, nil),
		maxConns:  prometheus.NewDesc(namespace+"_lgr_max_connections", "SMC-Rv2.1 negotiated connection limit of the link group.", l, nil),
		maxLinks:  prometheus.NewDesc(namespace+"_lgr_max_links", "SMC-Rv2.1 negotiated link limit of the link group.", l, nil),
		buf:       prometheus.NewDesc(namespace+"_lgr_buffer_bytes", "Bytes allocated for send buffers and RMBs/DMBs (Linux 6.12+).", []string{"lgr", "buffer"}, nil),
	}
}

func (c *lgrCollector) collect(s *monitor.Snapshot, ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, r := range s.LinkGroups {
		id := lgrLabel(r)
		g(c.info, 1, id, r.Kind, r.Role, r.Type+r.State, r.PNETID, fmt.Sprintf("%d.%d", r.Version, r.Release), r.PeerHost, r.PeerOS, r.Source)
		g(c.conns, float64(r.Conns), id)
		states := map[string]int{}
		for _, l := range r.Links {
			states[l.State]++
		}
		for st, n := range states {
			g(c.links, float64(n), id, st)
		}
		if r.Kind == "SMC-R" {
			g(c.redundant, b2f(r.Redundant), id)
		}
		if r.MaxConns != 0 {
			g(c.maxConns, float64(r.MaxConns), id)
			g(c.maxLinks, float64(r.MaxLinks), id)
		}
		if r.SndBufAlloc != 0 || r.RMBAlloc != 0 {
			g(c.buf, float64(r.SndBufAlloc), id, "send")
			g(c.buf, float64(r.RMBAlloc), id, "rmb")
		}
	}
}

func lgrLabel(r monitor.LinkGroupRow) string {
	if r.Source == "wire" {
		return fmt.Sprintf("wire-%d", r.ID)
	}
	return fmt.Sprintf("%08x", r.ID)
}

func hexCode(c uint32) string { return fmt.Sprintf("0x%08x", c) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
