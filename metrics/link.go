package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// linkCollector exports each SMC-R link (a link group has at most a few):
// its state as an info series that joins it to device, port and netdev,
// its connections, and what the wire saw of it.
type linkCollector struct {
	info, up, conns, retrans, psnGaps *prometheus.Desc
}

func newLinkCollector() *linkCollector {
	l := []string{"lgr", "link"}
	return &linkCollector{
		info: prometheus.NewDesc(namespace+"_link_info", "SMC-R link (value 1) joined to its RDMA device, port and netdev.",
			[]string{"lgr", "link", "state", "device", "port", "netdev"}, nil),
		up:      prometheus.NewDesc(namespace+"_link_up", "1 when the link is ACTIVE.", l, nil),
		conns:   prometheus.NewDesc(namespace+"_link_connections", "Connections on the link.", l, nil),
		retrans: prometheus.NewDesc(namespace+"_link_retransmissions_total", "RC packets sent again on the link, seen on the wire (smctop -i/-r).", l, nil),
		psnGaps: prometheus.NewDesc(namespace+"_link_psn_gaps_total", "PSN gaps on the link, seen on the wire (smctop -i/-r).", l, nil),
	}
}

func (c *linkCollector) collect(s *monitor.Snapshot, ch chan<- prometheus.Metric) {
	for _, g := range s.LinkGroups {
		id := lgrLabel(g)
		for _, l := range g.Links {
			link := fmt.Sprint(l.ID)
			ch <- prometheus.MustNewConstMetric(c.info, prometheus.GaugeValue, 1, id, link, l.State, l.IBDev, fmt.Sprint(l.IBPort), l.NetDev)
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, b2f(l.Active), id, link)
			ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(l.Conns), id, link)
			if g.Source == "wire" {
				ch <- prometheus.MustNewConstMetric(c.retrans, prometheus.CounterValue, float64(l.Retransmit), id, link)
				ch <- prometheus.MustNewConstMetric(c.psnGaps, prometheus.CounterValue, float64(l.PSNGaps), id, link)
			}
		}
	}
}
