package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// dibsCollector exports SMC-D's DIBS devices (ISM, and the loopback "lo"
// of Linux 6.19+): one info series each and the SMC-D connections on it.
type dibsCollector struct {
	info, conns *prometheus.Desc
}

func newDIBSCollector() *dibsCollector {
	return &dibsCollector{
		info:  prometheus.NewDesc(namespace+"_dibs_device_info", "DIBS device used by SMC-D (value 1): its driver, GID and fabric ID.", []string{"device", "driver", "gid", "fabric_id"}, nil),
		conns: prometheus.NewDesc(namespace+"_dibs_device_connections", "SMC-D connections on the DIBS device.", []string{"device"}, nil),
	}
}

func (c *dibsCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, d := range s.Devices {
		if d.Kind != monitor.DeviceDIBS {
			continue
		}
		m.gauge(c.info, 1, d.Name, d.Driver, d.GID, d.FabricID)
		m.gauge(c.conns, float64(d.Conns), d.Name)
	}
}
