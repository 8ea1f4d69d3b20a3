package metrics

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// rnicCollector exports RDMA ports: state, whether SMC uses them, and
// their counters as _total with device/port labels. Counters are named
// after the kernel's files (counters/ and hw_counters/), bytes as
// _bytes_total, error counters with a health label so one rule watches
// them all.
type rnicCollector struct {
	up, smc *prometheus.Desc
}

func newRNICCollector() *rnicCollector {
	l := []string{"device", "port"}
	return &rnicCollector{
		up:  prometheus.NewDesc(namespace+"_rnic_port_up", "1 when the RDMA port is ACTIVE.", l, nil),
		smc: prometheus.NewDesc(namespace+"_rnic_port_smc_links", "SMC-R links on the port (SMC_NETLINK_GET_DEV_SMCR).", []string{"device", "port", "pnetid"}, nil),
	}
}

// counterDesc names a sysfs counter's metric. It is made per scrape:
// promhttp may collect for several scrapes at once, so the collector
// keeps no cache it would have to lock.
func counterDesc(name, unit string) *prometheus.Desc {
	metric := namespace + "_rnic_" + sanitize(name)
	switch {
	case unit == "bytes" && !strings.HasSuffix(metric, "_bytes"):
		metric += "_bytes_total"
	default:
		metric += "_total"
	}
	return prometheus.NewDesc(metric, fmt.Sprintf("RDMA port counter %s (sysfs counters/ or hw_counters/).", name), []string{"device", "port", "health"}, nil)
}

func (c *rnicCollector) collect(s *monitor.Snapshot, ch chan<- prometheus.Metric) {
	for _, d := range s.Devices {
		for _, p := range d.Ports {
			port := fmt.Sprint(p.Port)
			if p.Port != 0 {
				ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, b2f(p.State == "ACTIVE"), d.Name, port)
				if d.SMC {
					ch <- prometheus.MustNewConstMetric(c.smc, prometheus.GaugeValue, float64(p.Links), d.Name, port, p.PNETID)
				}
			}
			seen := map[string]bool{}
			for _, k := range p.Counters {
				desc := counterDesc(k.Name, k.Unit)
				if seen[desc.String()] {
					continue // the same name from counters/ and hw_counters/: PMA wins
				}
				seen[desc.String()] = true
				health := k.Health
				if health == "" {
					health = "none"
				}
				ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(k.Value), d.Name, port, health)
			}
		}
	}
}

// sanitize makes a sysfs counter name a metric name.
func sanitize(s string) string {
	b := []byte(strings.ToLower(s))
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}
