package metrics

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/rdmastats"

	"github.com/smcscope/smcscope/monitor"
)

// rnicCollector exports RDMA ports: state, whether SMC uses them, and
// their counters. Traffic counters are one family each, named after the
// kernel's files (counters/ and hw_counters/), bytes as _bytes_total.
// Error counters (rdmastats.Classify) are one family,
// smc_rnic_port_errors_total, with the file in the counter label and the
// class in health: one rate() watches them all, which a selector over
// several families cannot (rate drops the metric name, and two counters
// of one port would then be the same series).
type rnicCollector struct {
	up, smc, errors *prometheus.Desc
}

func newRNICCollector() *rnicCollector {
	l := []string{"device", "port"}
	return &rnicCollector{
		up:  prometheus.NewDesc(namespace+"_rnic_port_up", "1 when the RDMA port is ACTIVE.", l, nil),
		smc: prometheus.NewDesc(namespace+"_rnic_port_smc_links", "SMC-R links on the port (SMC_NETLINK_GET_DEV_SMCR).", []string{"device", "port", "pnetid"}, nil),
		errors: prometheus.NewDesc(namespace+"_rnic_port_errors_total", "RDMA port error counters (sysfs counters/ or hw_counters/ file in counter; health: what an increase means for RC links).",
			[]string{"device", "port", "counter", "health"}, nil),
	}
}

// counterDesc names a traffic counter's metric. It is made per scrape:
// promhttp may collect for several scrapes at once, so the collector
// keeps no cache it would have to lock.
func counterDesc(name string, unit rdmastats.Unit) *prometheus.Desc {
	metric := namespace + "_rnic_" + sanitize(name)
	switch {
	case unit == rdmastats.UnitBytes && !strings.HasSuffix(metric, "_bytes"):
		metric += "_bytes_total"
	default:
		metric += "_total"
	}
	return prometheus.NewDesc(metric, fmt.Sprintf("RDMA port counter %s (sysfs counters/ or hw_counters/).", name), []string{"device", "port"}, nil)
}

func (c *rnicCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, d := range s.Devices {
		if d.Kind != monitor.DeviceRDMA {
			continue
		}
		for _, p := range d.Ports {
			port := fmt.Sprint(p.Port)
			if p.Port != 0 {
				m.gauge(c.up, b2f(p.Active), d.Name, port)
				if d.SMC {
					m.gauge(c.smc, float64(p.Links), d.Name, port, p.PNETID)
				}
			}
			seen := map[string]bool{}
			for _, k := range p.Counters {
				key := sanitize(k.Name)
				if seen[key] {
					continue // the same name from counters/ and hw_counters/: PMA wins
				}
				seen[key] = true
				if k.Health != "" {
					m.counter(c.errors, float64(k.Value), d.Name, port, k.Name, k.Health)
					continue
				}
				m.counter(counterDesc(k.Name, k.Unit), float64(k.Value), d.Name, port)
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
