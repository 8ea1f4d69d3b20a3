package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// systemCollector exports what smcr info, smcr ueid/seid show and smc_pnet
// lists: the kernel's SMC version and features, its EIDs and its PNET
// table, as _info series (value 1) that joins and fleet views read (a
// UEID the two ends of a decline do not share is a common cause).
type systemCollector struct {
	info, ueid, seid, pnet *prometheus.Desc
}

func newSystemCollector() *systemCollector {
	return &systemCollector{
		info: prometheus.NewDesc(namespace+"_system_info", "The kernel's SMC (value 1): highest version, v2 release, and whether SMC-R v2 and SMC-D v2 are possible (SMC_NETLINK_GET_SYS_INFO).",
			[]string{"version", "release", "smcr_v2", "smcd_v2"}, nil),
		ueid: prometheus.NewDesc(namespace+"_ueid_info", "A user EID of the host (value 1); SMC v2 needs the two ends to share one (or the SEID).", []string{"ueid"}, nil),
		seid: prometheus.NewDesc(namespace+"_seid_info", "The system EID (value 1) and whether it is in use; only a kernel capable of SMC-D v2 reports one.", []string{"seid", "enabled"}, nil),
		pnet: prometheus.NewDesc(namespace+"_pnet_info", "A PNET table entry (value 1): a netdev or device port under a PNET ID, set by a user (smc_pnet).",
			[]string{"pnetid", "netdev", "device", "port"}, nil),
	}
}

func (c *systemCollector) collect(s *monitor.Snapshot, m *emitter) {
	si := s.System
	if si == nil {
		return
	}
	u := func(v uint8) string { return strconv.Itoa(int(v)) }
	m.gauge(c.info, 1, u(si.Version), u(si.Release), strconv.FormatBool(si.SMCRv2), strconv.FormatBool(si.SMCDv2))
	for _, e := range si.UEIDs {
		m.gauge(c.ueid, 1, e)
	}
	if e := si.SEID; e != nil {
		m.gauge(c.seid, 1, e.EID, strconv.FormatBool(e.Enabled))
	}
	for _, e := range si.PNET {
		port := ""
		if e.DevPort != 0 {
			port = u(e.DevPort)
		}
		m.gauge(c.pnet, 1, e.PNETID, e.NetDev, e.Device, port)
	}
}
