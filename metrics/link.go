package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/smcscope/smcscope/monitor"
)

// linkCollector exports each SMC-R link (a link group has at most a few):
// an info series that joins it to device, port and netdev, its state as
// one series per state (node_exporter's systemd style, so a state change
// moves a value instead of ending a series), and what the wire saw of it.
// A link the group lost stays exported, down, until the group is
// redundant again (monitor.LinkDeleted): SMCLinkDown fires on it.
type linkCollector struct {
	info, state, up, conns, retrans, psnGaps *prometheus.Desc
	// ANCK links with receive-queue credits, per sending direction.
	credits, starved, starvedSecs *prometheus.Desc
}

// linkStates are the states smc_link_state always has a series for.
var linkStates = []monitor.LinkState{monitor.LinkActive, monitor.LinkActivating, monitor.LinkInactive, monitor.LinkDeleted}

func newLinkCollector() *linkCollector {
	l := []string{"lgr", "link"}
	return &linkCollector{
		// gid, peer_gid, uid and peer_uid join the two hosts' halves of
		// a link (smctop --prometheus): one side's uid is the other's
		// peer_uid (CONFIRM_LINK link user IDs, as the wire carries them).
		info: prometheus.NewDesc(namespace+"_link_info", "SMC-R link (value 1) joined to its RDMA device, port and netdev, with its GIDs and link user IDs (both ends).",
			[]string{"lgr", "link", "device", "port", "netdev", "gid", "peer_gid", "uid", "peer_uid"}, nil),
		state:   prometheus.NewDesc(namespace+"_link_state", "1 for the link's state (enum smc_link_state; DELETED: lost from its group), 0 for the others.", []string{"lgr", "link", "state"}, nil),
		up:      prometheus.NewDesc(namespace+"_link_up", "1 when the link is ACTIVE; 0 while it is activating, inactive or lost from its group.", l, nil),
		conns:   prometheus.NewDesc(namespace+"_link_connections", "Connections on the link.", l, nil),
		retrans: prometheus.NewDesc(namespace+"_link_retransmissions_total", "RC packets sent again on the link, seen on the wire (smctop -i/-r).", l, nil),
		psnGaps: prometheus.NewDesc(namespace+"_link_psn_gaps_total", "PSN gaps on the link, seen on the wire (smctop -i/-r).", l, nil),
		credits: prometheus.NewDesc(namespace+"_link_credits", "ANCK (Alibaba Cloud Linux) receive-queue credits the direction's sender holds, seen on the wire; only on links with credits.",
			[]string{"lgr", "link", "dir"}, nil),
		starved: prometheus.NewDesc(namespace+"_link_credits_starved_total", "ANCK: times the direction's sender held no receive-queue credit until the peer returned some, seen on the wire.",
			[]string{"lgr", "link", "dir"}, nil),
		starvedSecs: prometheus.NewDesc(namespace+"_link_credits_starved_seconds_total", "ANCK: seconds the direction's sender held no receive-queue credit, seen on the wire.",
			[]string{"lgr", "link", "dir"}, nil),
	}
}

func (c *linkCollector) collect(s *monitor.Snapshot, m *emitter) {
	for _, g := range s.LinkGroups {
		if g.Deleted {
			continue
		}
		id := lgrLabel(g)
		for _, l := range g.Links {
			link := l.Name()
			m.gauge(c.info, 1, id, link, l.IBDev, fmt.Sprint(l.IBPort), l.NetDev, l.GID, l.PeerGID, uidLabel(l.UID), uidLabel(l.PeerUID))
			// A link whose state is not known has no state or up series
			// (absent, not 0: nothing says whether it is up).
			if l.State != monitor.LinkNotKnown {
				known := false
				for _, st := range linkStates {
					known = known || st == l.State
					m.gauge(c.state, b2f(st == l.State), id, link, string(st))
				}
				if !known {
					m.gauge(c.state, 1, id, link, string(l.State))
				}
				m.gauge(c.up, b2f(l.Active), id, link)
			}
			m.gauge(c.conns, float64(l.Conns), id, link)
			if g.Source == monitor.SourceWire {
				m.counter(c.retrans, float64(l.Retransmit), id, link)
				m.counter(c.psnGaps, float64(l.PSNGaps), id, link)
			}
			for _, cr := range l.Credits {
				m.gauge(c.credits, float64(cr.Now), id, link, cr.Dir)
				m.counter(c.starved, float64(cr.Starved), id, link, cr.Dir)
				m.counter(c.starvedSecs, cr.StarvedSeconds, id, link, cr.Dir)
			}
		}
	}
}

// uidLabel writes a link user ID as the wire and smcdump do ("00000101"),
// empty when unknown.
func uidLabel(u monitor.LinkUID) string {
	if u == 0 {
		return ""
	}
	return u.String()
}
