package metrics

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// hostCollector exports smc_host_info: the host's name and the addresses
// its SMC traffic uses, so a fleet view (smctop --prometheus) can tell
// which instance another host's peer address is.
type hostCollector struct {
	info *prometheus.Desc
}

func newHostCollector() *hostCollector {
	return &hostCollector{info: prometheus.NewDesc(namespace+"_host_info",
		"The host (value 1): its name (the one SMC v2 sends in CLC) and the addresses of its SMC sockets and links, comma-separated.",
		[]string{"hostname", "addresses"}, nil)}
}

func (c *hostCollector) collect(s *monitor.Snapshot, m *emitter) {
	if s.Host.Name == "" && len(s.Host.Addresses) == 0 {
		return
	}
	m.gauge(c.info, 1, s.Host.Name, strings.Join(s.Host.Addresses, ","))
}
