package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// dibsCollector exports SMC-D's DIBS devices (ISM, and the loopback "lo"
// of Linux 6.19+): one info series each and the SMC-D connections on it.
type dibsCollector struct {
	info, conns, used, pnet *prometheus.Desc
}

func newDIBSCollector() *dibsCollector {
	return &dibsCollector{
		info:  prometheus.NewDesc(namespace+"_dibs_device_info", "DIBS device used by SMC-D (value 1): its driver, GID and fabric ID.", []string{"device", "driver", "gid", "fabric_id"}, nil),
		conns: prometheus.NewDesc(namespace+"_dibs_device_connections", "SMC-D connections on the DIBS device.", []string{"device"}, nil),
		used: prometheus.NewDesc(namespace+"_dibs_device_used_by_smc", "Whether SMC uses the DIBS device (1): the kernel's SMC-D device list (SMC_NETLINK_GET_DEV_SMCD) names it, or, for the loopback it never names, SMC-D link groups are on it.",
			[]string{"device"}, nil),
		pnet: prometheus.NewDesc(namespace+"_dibs_device_pnet_info", "The DIBS device's PNET ID (value 1), and whether a user set it (smc_pnet) rather than the hardware.",
			[]string{"device", "pnetid", "by_user"}, nil),
	}
}

func (c *dibsCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, d := range s.Devices {
		if d.Kind != monitor.DeviceDIBS {
			continue
		}
		m.gauge(c.info, 1, d.Name, d.Driver, d.GID, d.FabricID)
		m.gauge(c.conns, float64(d.Conns), d.Name)
		if d.SMCKnown { // not known: no series (absent, not 0)
			m.gauge(c.used, b2f(d.SMC), d.Name)
		}
		if d.PNETID != "" {
			m.gauge(c.pnet, 1, d.Name, d.PNETID, strconv.FormatBool(d.PNETIDByUser))
		}
	}
}
