// Package fleet is smctop's view of many hosts: it reads the exporters'
// series from a Prometheus server and joins what one host cannot see
// alone. A link group spans two hosts and each kernel knows its half; here
// the halves are matched by their links (one side's link user ID and GID
// are the other's peer ones), and a host's fallbacks are matched to the
// host that declined them by the peer address.
package fleet

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Snapshot is the fleet at one moment.
type Snapshot struct {
	Time   time.Time `json:"time"`
	Source string    `json:"prometheus"`
	// Error says why the server could not be read: the rest is empty,
	// or (Keep) the last snapshot that was read.
	Error string `json:"error,omitempty"`
	// StaleSince, when set, is the time of the data shown: the server
	// could not be read since (Error says why), and the last snapshot read
	// is kept rather than emptied.
	StaleSince time.Time `json:"stale_since,omitzero"`
	Hosts      []Host    `json:"hosts"`
	LinkGroups []Group   `json:"link_groups"`
	Declines   []Decline `json:"declines"`
	// Conflicts are addresses several hosts claim (smc_host_info): a peer
	// at one of them cannot be told apart, so what it did is named by the
	// address, never pinned on one of the hosts.
	Conflicts []Conflict `json:"address_conflicts,omitempty"`
}

// Conflict is one address that several hosts claim as theirs: overlapping
// private ranges, NAT, or hosts cloned with their addresses.
type Conflict struct {
	Address   string   `json:"address"`
	Instances []string `json:"instances"`
}

// Keep is s, or, when s could not be read, the last snapshot that was
// (last, itself possibly kept), marked stale since its time with s's
// error: a Prometheus restart or a network blip does not empty the view.
func Keep(last, s Snapshot) Snapshot {
	if s.Error == "" || len(last.Hosts) == 0 {
		return s
	}
	k := last
	if k.StaleSince.IsZero() {
		k.StaleSince = last.Time
	}
	k.Time, k.Error, k.Source = s.Time, s.Error, s.Source
	return k
}

// Host is one exporter (a Prometheus instance) and what it counts now.
type Host struct {
	Instance  string   `json:"instance"`
	Name      string   `json:"hostname,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
	// Up: Prometheus's last scrape of it worked. SourcesDown are the
	// exporter's sources that could not be read (sock_diag, ...).
	Up          bool     `json:"up"`
	SourcesDown []string `json:"sources_down,omitempty"`
	SMCR        int      `json:"smcr"`
	SMCD        int      `json:"smcd"`
	Fallback    int      `json:"fallback"`
	Pending     int      `json:"pending"`
	// Per second over the last 5 minutes; nil where Prometheus has no
	// rate (the exporter cannot read the kernel's statistics, or was
	// scraped once): unknown, not 0.
	FallbackRate       *float64 `json:"fallbacks_per_second,omitempty"`
	HandshakeErrorRate *float64 `json:"handshake_errors_per_second,omitempty"`
	LinkGroups         int      `json:"link_groups"`
	NoRedundancy       int      `json:"link_groups_without_redundancy"`
	LinksDown          int      `json:"links_down"`
	// EIDs are the host's UEIDs and its SEID when in use (smc_ueid_info,
	// smc_seid_info): what SMC v2 can agree on with a peer. EIDsKnown:
	// the host exports its SMC system information (smc_system_info), so
	// no EIDs means none, not unknown.
	EIDs      []string `json:"eids,omitempty"`
	EIDsKnown bool     `json:"eids_known,omitempty"`
}

// Group is one SMC-R link group with both hosts' halves where both export
// it (a half is nil when its host does not, or is down).
type Group struct {
	Key    string `json:"key"`
	Client *Half  `json:"client,omitempty"`
	Server *Half  `json:"server,omitempty"`
	// Asymmetric: the halves list a different number of active links
	// (one side has two, the other one).
	Asymmetric bool `json:"asymmetric,omitempty"`
	// Pairs are the group's links, each with the other host's end of it
	// (the client's links in order, then the server's left unpaired).
	Pairs []Pair `json:"link_pairs,omitempty"`
}

// Half is one host's view of a link group.
type Half struct {
	Instance  string `json:"instance"`
	Host      string `json:"hostname,omitempty"`
	LGR       string `json:"lgr"`
	Role      string `json:"role"`
	Conns     int    `json:"conns"`
	Redundant bool   `json:"redundant"`
	// RedundancyUnknown: the host exports no smc_lgr_redundant for the
	// group (its exporter saw it on the wire only, fewer than two links,
	// and not how they were set up).
	RedundancyUnknown bool   `json:"redundancy_unknown,omitempty"`
	Links             []Link `json:"links"`
}

// Active counts the half's active links.
func (h *Half) Active() int {
	n := 0
	for _, l := range h.Links {
		if l.Up {
			n++
		}
	}
	return n
}

// Link is one link as one host exports it.
type Link struct {
	ID string `json:"id"`
	Up bool   `json:"up"`
	// Unknown: whether the link is up is not known (its host's capture
	// shows nothing of it working): Up is false, State empty.
	Unknown bool   `json:"unknown,omitempty"`
	State   string `json:"state,omitempty"`
	Device  string `json:"device,omitempty"`
	Port    string `json:"port,omitempty"`
	GID     string `json:"gid,omitempty"`
	PeerGID string `json:"peer_gid,omitempty"`
	UID     string `json:"uid,omitempty"`
	PeerUID string `json:"peer_uid,omitempty"`
	// RNIC is the counters of the RDMA port the link runs on, as its host
	// exports them (nil: none for that port).
	RNIC *PortRates `json:"rnic,omitempty"`
}

// PortRates are an RDMA port's counters per second over the last 5
// minutes. Each is nil when the port has no such counter (Soft-RoCE has
// no data byte counters; a host without sysfs access exports none):
// absent, not zero.
type PortRates struct {
	TxBytes   *float64 `json:"tx_bytes_per_second,omitempty"`
	RxBytes   *float64 `json:"rx_bytes_per_second,omitempty"`
	TxPackets *float64 `json:"tx_packets_per_second,omitempty"`
	RxPackets *float64 `json:"rx_packets_per_second,omitempty"`
	// Errors sums the error counters (every health class but
	// congestion); Congestion the CNP and ECN counters, which move on a
	// healthy RoCE fabric too.
	Errors     *float64 `json:"errors_per_second,omitempty"`
	Congestion *float64 `json:"congestion_per_second,omitempty"`
}

// Pair is one link seen from both ends: the ID of the client's half's
// link and of the server's link it is connected to ("" where that host
// does not export it, or the link has no peer there).
type Pair struct {
	Client string `json:"client,omitempty"`
	Server string `json:"server,omitempty"`
}

// Decline is one host declining SMC to another, as both see it: the
// decliner's own reason and the declined host's (PEERDECL, with the
// decliner's code as its peer diagnosis), with the sockets now in fallback
// on each side.
type Decline struct {
	// Decliner and Declined are instances; a side Prometheus does not
	// scrape is named by its address.
	Decliner       string `json:"decliner"`
	Declined       string `json:"declined"`
	Reason         string `json:"reason"`          // the decliner's (kernel name)
	DeclinedReason string `json:"declined_reason"` // the declined host's local reason
	DeclinerConns  int    `json:"decliner_sockets"`
	DeclinedConns  int    `json:"declined_sockets"`
	// DeclinerTotal is how many fallbacks with Reason the decliner's
	// kernel counted since SMC loaded (its SMC_NETLINK_GET_FBACK_STATS),
	// all peers together.
	DeclinerTotal int `json:"decliner_total,omitempty"`
	// EIDMismatch: both hosts' EIDs are known and they share none, so SMC
	// v2 cannot be agreed between them (expert.EIDMismatch, package
	// expert's smc.fleet.eid_mismatch).
	EIDMismatch bool `json:"eid_mismatch,omitempty"`
	// Conflict, when set, is the address that names one side because
	// several hosts claim it: which of them it was cannot be told.
	Conflict *Conflict `json:"address_conflict,omitempty"`
}

// The queries of one refresh: instant vectors, a few per metric family,
// never per socket.
const (
	// qExporters is no query but the name of its answer (build): every
	// target of a job that has scraped smctop (smc_build_info) within
	// exporterWindow, with its up (exportersQuery). One that has never
	// answered, or has been down for long, is a host shown DOWN, not
	// left out.
	qExporters = "exporters"
	qHost      = `smc_host_info`
	// The sockets the view counts by mode, where there are any: a
	// host's modes at 0 (most of them) add nothing, and over a large
	// fleet each is a series for the server to write out.
	qSockets   = `sum by (instance, mode) (smc_conn_sockets{source="kernel",mode=~"SMC-R|SMC-D|fallback|pending|failed"}) > 0` + orNone
	qFallRate  = `sum by (instance) (rate(smc_conn_fallbacks_total[5m]))`
	qHSRate    = `sum by (instance) (rate(smc_conn_handshake_errors_total[5m]))`
	qSourceOff = `count by (instance, source) (smc_exporter_source_up == 0)` + orNone
	// Each SMC-R link group once, its connections the value, with its
	// role and whether it is redundant as labels: one series a group
	// instead of three, each with only the labels the view reads
	// (count_values makes the redundancy, which rarely changes, a label).
	qLGR = `max by (instance, lgr, role) (smc_lgr_info{kind="SMC-R"})` +
		` * on (instance, lgr) group_left (redundant) count_values by (instance, lgr) ("redundant", max by (instance, lgr) (smc_lgr_redundant) or on (instance, lgr) -max by (instance, lgr) (smc_lgr_info{kind="SMC-R"}))` +
		` * on (instance, lgr) group_left max by (instance, lgr) (smc_lgr_connections)`
	// Each link once, whether it is up the value, its ends and its
	// state (the one smc_link_state series at 1) as labels: one series
	// a link instead of six. A host that exports no smc_link_state still
	// has its links, without a state (the link's info in place of the
	// state series); a link whose state is not known (a capture's, with
	// no smc_link_up) is -1, without a state.
	qLinks = `max by (instance, lgr, link, device, port, gid, peer_gid, uid, peer_uid) (smc_link_info)` +
		` * on (instance, lgr, link) group_left max by (instance, lgr, link) (smc_link_up or on (instance, lgr, link) -smc_link_info)` +
		` * on (instance, lgr, link) group_left (state) (topk by (instance, lgr, link) (1, smc_link_state == 1)` +
		` or on (instance, lgr, link) max by (instance, lgr, link) (smc_link_info))`
	qFallbacks = `smc_conn_fallback_sockets > 0`
	// A reason's total only matters where it is not 0 (declines' totals
	// default to 0).
	qReasons = `sum by (instance, reason) (smc_conn_fallback_reasons_total) > 0` + orNone
	// What SMC v2 can agree on with each host, in one answer: a series
	// with the instance alone where the host exports its system
	// information, one for each UEID, and the SEID when in use.
	qEIDs = `count by (instance) (smc_system_info) or max by (instance, ueid) (smc_ueid_info)` +
		` or max by (instance, seid) (smc_seid_info{enabled="true"})`
	// RDMA port counters per second (the exporter's smc_rnic_* families);
	// packets under the PMA's name or, on Soft-RoCE, rxe's. Only the
	// ports a link runs on: the view shows a port's rates with its links
	// alone, and over a large fleet half the ports carry none. Where no
	// link's port has a counter (Soft-RoCE has no data byte counters),
	// there is no rate: orNone.
	qPortTxB  = `sum by (instance, device, port) (rate(smc_rnic_port_xmit_data_bytes_total[5m])) and on (instance, device, port) smc_link_info` + orNone
	qPortRxB  = `sum by (instance, device, port) (rate(smc_rnic_port_rcv_data_bytes_total[5m])) and on (instance, device, port) smc_link_info` + orNone
	qPortTxP  = `(sum by (instance, device, port) (rate(smc_rnic_port_xmit_packets_total[5m])) or sum by (instance, device, port) (rate(smc_rnic_sent_pkts_total[5m]))) and on (instance, device, port) smc_link_info` + orNone
	qPortRxP  = `(sum by (instance, device, port) (rate(smc_rnic_port_rcv_packets_total[5m])) or sum by (instance, device, port) (rate(smc_rnic_rcvd_pkts_total[5m]))) and on (instance, device, port) smc_link_info` + orNone
	qPortErr  = `sum by (instance, device, port) (rate(smc_rnic_port_errors_total{health!="congestion"}[5m])) and on (instance, device, port) smc_link_info` + orNone
	qPortCong = `sum by (instance, device, port) (rate(smc_rnic_port_errors_total{health="congestion"}[5m])) and on (instance, device, port) smc_link_info` + orNone
)

// orNone ends a query whose answer can be empty: when it is, the answer
// is one sample without labels instead, so that its record (ruleRecords)
// is never empty where the rules are evaluated, and an empty answer from
// a record means a server without it. The view reads no sample without
// an instance.
const orNone = ` or on () vector(0)`

// ruleRecords names, for each query the view reads from a record,
// the series that deploy/prometheus/smc-fleet-rules.yml records from the
// same expression (TestRecordedRules holds the two to each other). A
// server that records them answers a refresh from their last evaluation
// (at most the rules' 30 s old) instead of evaluating the query again:
// over 10,000 hosts the RDMA port counters alone are ~460,000 series,
// and the links' info, state and up ~86,000, of which the record keeps
// one series a link. A server without the rules has none of them, and
// the query is evaluated.
var ruleRecords = map[string]string{
	qSockets:   "instance_mode:smc_conn_sockets:sum_nonzero",
	qFallRate:  "instance:smc_conn_fallbacks:rate5m",
	qHSRate:    "instance:smc_conn_handshake_errors:rate5m",
	qSourceOff: "instance_source:smc_exporter_source_down:count",
	qLGR:       "instance_lgr:smc_lgr_connections:with_role_redundant",
	qLinks:     "instance_lgr_link:smc_link_up:with_info_state",
	qReasons:   "instance_reason:smc_conn_fallback_reasons:sum_nonzero",
	qEIDs:      "instance:smc_system_eids:info",
	qPortTxB:   "instance_device_port:smc_rnic_port_xmit_data_bytes:rate5m",
	qPortRxB:   "instance_device_port:smc_rnic_port_rcv_data_bytes:rate5m",
	qPortTxP:   "instance_device_port:smc_rnic_xmit_packets:rate5m",
	qPortRxP:   "instance_device_port:smc_rnic_rcv_packets:rate5m",
	qPortErr:   "instance_device_port:smc_rnic_port_errors:rate5m",
	qPortCong:  "instance_device_port:smc_rnic_port_congestion:rate5m",
}

// query answers q, from its recorded series where the server has any
// (ruleRecords), else by evaluating q; without orNone's sample.
func query(ctx context.Context, c *Client, q string) ([]Sample, error) {
	if rec, ok := ruleRecords[q]; ok {
		// No answer, or none that is usable, and the query is
		// evaluated: the rules may not be loaded, or not on this server.
		if s, err := c.Query(ctx, rec); err == nil && len(s) > 0 {
			return hostsOnly(s), nil
		}
	}
	s, err := c.Query(ctx, q)
	return hostsOnly(s), err
}

// hostsOnly is s without its samples that have no instance.
func hostsOnly(s []Sample) []Sample {
	return slices.DeleteFunc(s, func(x Sample) bool { return x.Labels.Get("instance") == "" })
}

// exporterWindow is how long a job that scraped smctop is remembered. Its
// jobs are asked of the server's index (Client.LabelValues): a query over
// the window's samples (last_over_time(smc_build_info[30d])) would read
// every one of them, on a month of a fleet's scrapes billions.
const exporterWindow = 30 * 24 * time.Hour

// exportersQuery is the up of every target of jobs.
func exportersQuery(jobs []string) string {
	re := make([]string, len(jobs))
	for i, j := range jobs {
		re[i] = regexp.QuoteMeta(j)
	}
	// A PromQL string takes Go's escapes.
	return `max by (instance) (up{job=~` + strconv.Quote(strings.Join(re, "|")) + `})`
}

// exporters is the answer named qExporters.
func exporters(ctx context.Context, c *Client) ([]Sample, error) {
	jobs, err := c.LabelValues(ctx, "job", "smc_build_info", exporterWindow)
	if err != nil || len(jobs) == 0 {
		return nil, err
	}
	return c.Query(ctx, exportersQuery(jobs))
}

// queries are the queries of one refresh, in the order they are asked
// (qExporters by exporters).
var queries = []string{qExporters, qHost, qSockets, qFallRate, qHSRate, qSourceOff, qLGR, qLinks,
	qFallbacks, qReasons, qEIDs, qPortTxB, qPortRxB, qPortTxP, qPortRxP, qPortErr, qPortCong}

// Read asks the server for the fleet, one batch of instant queries; the
// first that fails (in the batch's order) is the snapshot's error.
func Read(ctx context.Context, c *Client) Snapshot {
	s := Snapshot{Time: time.Now(), Source: c.URL, Hosts: []Host{}, LinkGroups: []Group{}, Declines: []Decline{}}
	// The queries go at once: the server evaluates them side by side, and
	// decoding the answers (most of a refresh's own time over many hosts)
	// takes every core.
	answers := make([][]Sample, len(queries))
	errs := make([]error, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if q == qExporters {
				answers[i], errs[i] = exporters(ctx, c)
				return
			}
			answers[i], errs[i] = query(ctx, c, q)
		}()
	}
	wg.Wait()
	res := make(map[string][]Sample, len(queries))
	for i, q := range queries {
		if errs[i] != nil {
			s.Error = fmt.Sprintf("Prometheus %s: %v", c.URL, errs[i])
			return s
		}
		res[q] = answers[i]
	}
	return build(s, res)
}

// build joins one batch of query results.
func build(s Snapshot, res map[string][]Sample) Snapshot {
	hosts := map[string]*Host{}
	host := func(inst string) *Host {
		h := hosts[inst]
		if h == nil {
			h = &Host{Instance: inst}
			hosts[inst] = h
		}
		return h
	}
	for _, r := range res[qExporters] {
		host(r.Labels.Get("instance")).Up = r.Value == 1
	}
	claims := map[string][]string{} // address -> instances
	for _, r := range res[qHost] {
		h := host(r.Labels.Get("instance"))
		h.Name = r.Labels.Get("hostname")
		if a := r.Labels.Get("addresses"); a != "" {
			h.Addresses = strings.Split(a, ",")
		}
		for _, a := range h.Addresses {
			if !slices.Contains(claims[a], h.Instance) {
				claims[a] = append(claims[a], h.Instance)
			}
		}
	}
	byAddr := map[string]string{}
	for a, insts := range claims {
		if len(insts) == 1 {
			byAddr[a] = insts[0]
			continue
		}
		// Claimed by several hosts: named by the address, not guessed.
		sort.Strings(insts)
		s.Conflicts = append(s.Conflicts, Conflict{Address: a, Instances: insts})
	}
	sort.Slice(s.Conflicts, func(i, j int) bool { return s.Conflicts[i].Address < s.Conflicts[j].Address })
	for _, r := range res[qSockets] {
		h, n := host(r.Labels.Get("instance")), int(r.Value)
		switch r.Labels.Get("mode") {
		case "SMC-R":
			h.SMCR += n
		case "SMC-D":
			h.SMCD += n
		case "fallback":
			h.Fallback += n
		case "pending", "failed":
			h.Pending += n
		}
	}
	for _, r := range res[qFallRate] {
		v := r.Value
		host(r.Labels.Get("instance")).FallbackRate = &v
	}
	for _, r := range res[qHSRate] {
		v := r.Value
		host(r.Labels.Get("instance")).HandshakeErrorRate = &v
	}
	for _, r := range res[qSourceOff] {
		h := host(r.Labels.Get("instance"))
		h.SourcesDown = append(h.SourcesDown, r.Labels.Get("source"))
	}
	for _, r := range res[qEIDs] {
		h := host(r.Labels.Get("instance"))
		switch u, s := r.Labels.Get("ueid"), r.Labels.Get("seid"); {
		case u != "":
			h.EIDs = append(h.EIDs, u)
		case s != "":
			h.EIDs = append(h.EIDs, s)
		default:
			h.EIDsKnown = true
		}
	}
	for _, h := range hosts {
		sort.Strings(h.EIDs)
	}

	halves := map[[2]string]*Half{} // (instance, lgr)
	for _, r := range res[qLGR] {
		inst, lgr := r.Labels.Get("instance"), r.Labels.Get("lgr")
		h := &Half{Instance: inst, Host: hosts[inst].nameOr(), LGR: lgr, Role: r.Labels.Get("role"),
			Conns: int(r.Value), Redundant: r.Labels.Get("redundant") == "1", RedundancyUnknown: r.Labels.Get("redundant") == "-1"}
		halves[[2]string{inst, lgr}] = h
		host(inst).LinkGroups++
		if !h.Redundant && !h.RedundancyUnknown {
			host(inst).NoRedundancy++
		}
	}
	for _, r := range res[qLinks] {
		inst := r.Labels.Get("instance")
		if h := halves[[2]string{inst, r.Labels.Get("lgr")}]; h != nil {
			l := Link{ID: r.Labels.Get("link"), Up: r.Value == 1, Unknown: r.Value < 0, State: r.Labels.Get("state"), Device: r.Labels.Get("device"), Port: r.Labels.Get("port"),
				GID: r.Labels.Get("gid"), PeerGID: r.Labels.Get("peer_gid"), UID: r.Labels.Get("uid"), PeerUID: r.Labels.Get("peer_uid")}
			h.Links = append(h.Links, l)
			if !l.Up && !l.Unknown {
				host(inst).LinksDown++
			}
		}
	}
	for _, h := range halves {
		sort.Slice(h.Links, func(i, j int) bool { return h.Links[i].ID < h.Links[j].ID })
	}
	ports := portRates(res)
	for _, h := range halves {
		for i := range h.Links {
			l := &h.Links[i]
			if p, ok := ports[[3]string{h.Instance, l.Device, l.Port}]; ok {
				l.RNIC = p
			}
		}
	}
	s.LinkGroups = joinGroups(halves)
	s.Declines = declines(res[qFallbacks], byAddr, s.Conflicts)
	totals := map[[2]string]int{}
	for _, r := range res[qReasons] {
		totals[[2]string{r.Labels.Get("instance"), r.Labels.Get("reason")}] += int(r.Value)
	}
	for i := range s.Declines {
		d := &s.Declines[i]
		d.DeclinerTotal = totals[[2]string{d.Decliner, d.Reason}]
		d.EIDMismatch = eidMismatch(hosts[d.Decliner], hosts[d.Declined])
	}
	for _, h := range hosts {
		sort.Strings(h.SourcesDown)
		s.Hosts = append(s.Hosts, *h)
	}
	// The worst first: down, then falling back fastest, then by name.
	sort.Slice(s.Hosts, func(i, j int) bool {
		a, b := s.Hosts[i], s.Hosts[j]
		if a.Up != b.Up {
			return !a.Up
		}
		if ra, rb := a.fallbackRate(), b.fallbackRate(); ra != rb {
			return ra > rb
		}
		if a.NoRedundancy+a.LinksDown != b.NoRedundancy+b.LinksDown {
			return a.NoRedundancy+a.LinksDown > b.NoRedundancy+b.LinksDown
		}
		return a.Instance < b.Instance
	})
	return s
}

// portRates gathers the RDMA port counters by (instance, device, port).
func portRates(res map[string][]Sample) map[[3]string]*PortRates {
	ports := map[[3]string]*PortRates{}
	for _, q := range []struct {
		query string
		field func(*PortRates) **float64
	}{
		{qPortTxB, func(p *PortRates) **float64 { return &p.TxBytes }},
		{qPortRxB, func(p *PortRates) **float64 { return &p.RxBytes }},
		{qPortTxP, func(p *PortRates) **float64 { return &p.TxPackets }},
		{qPortRxP, func(p *PortRates) **float64 { return &p.RxPackets }},
		{qPortErr, func(p *PortRates) **float64 { return &p.Errors }},
		{qPortCong, func(p *PortRates) **float64 { return &p.Congestion }},
	} {
		for _, r := range res[q.query] {
			k := [3]string{r.Labels.Get("instance"), r.Labels.Get("device"), r.Labels.Get("port")}
			p := ports[k]
			if p == nil {
				p = &PortRates{}
				ports[k] = p
			}
			v := r.Value
			*q.field(p) = &v
		}
	}
	return ports
}

// fallbackRate is FallbackRate for ordering hosts, 0 where unknown.
func (h Host) fallbackRate() float64 {
	if h.FallbackRate == nil {
		return 0
	}
	return *h.FallbackRate
}

func (h *Host) nameOr() string {
	if h == nil {
		return ""
	}
	return h.Name
}

// joinGroups pairs the halves of each link group: half A and half B on two
// instances are one group when a link of A has B's link as its peer (A's
// peer_uid and peer_gid are B's uid and gid, and the other way round).
func joinGroups(halves map[[2]string]*Half) []Group {
	type end struct{ uid, gid string }
	owner := map[end][]*Half{}
	for _, h := range halves {
		for _, l := range h.Links {
			if l.UID != "" && l.GID != "" {
				owner[end{l.UID, l.GID}] = append(owner[end{l.UID, l.GID}], h)
			}
		}
	}
	paired := map[*Half]bool{}
	var out []Group
	keys := make([][2]string, 0, len(halves))
	for k := range halves {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		h := halves[k]
		if paired[h] {
			continue
		}
		var peer *Half
		for _, l := range h.Links {
			for _, o := range owner[end{l.PeerUID, l.PeerGID}] {
				if o != h && o.Instance != h.Instance && !paired[o] && peerOf(o, l) {
					peer = o
				}
			}
		}
		paired[h] = true
		g := Group{}
		place := func(x *Half) {
			if x.Role == "server" {
				g.Server = x
			} else {
				g.Client = x
			}
		}
		place(h)
		if peer != nil {
			paired[peer] = true
			place(peer)
			if g.Client == nil || g.Server == nil { // both claim one role
				g.Client, g.Server = h, peer
			}
			g.Asymmetric = g.Client.Active() != g.Server.Active()
		}
		g.Pairs = pairs(g)
		g.Key = groupKey(g)
		out = append(out, g)
	}
	return out
}

// pairs lines up a group's links with their other ends: the client's
// links in order, each with the server's link whose user ID and GID are
// its peer's, then the server's links no client link names.
func pairs(g Group) []Pair {
	var out []Pair
	used := map[*Link]bool{}
	if g.Client != nil {
		for _, c := range g.Client.Links {
			p := Pair{Client: c.ID}
			if g.Server != nil {
				for j := range g.Server.Links {
					x := &g.Server.Links[j]
					if !used[x] && x.UID == c.PeerUID && x.GID == c.PeerGID && x.PeerGID == c.GID {
						p.Server, used[x] = x.ID, true
						break
					}
				}
			}
			out = append(out, p)
		}
	}
	if g.Server != nil {
		for j := range g.Server.Links {
			if x := &g.Server.Links[j]; !used[x] {
				out = append(out, Pair{Server: x.ID})
			}
		}
	}
	return out
}

// Link returns the half's link with the ID (nil for none, or a nil half).
func (h *Half) Link(id string) *Link {
	if h == nil || id == "" {
		return nil
	}
	for i := range h.Links {
		if h.Links[i].ID == id {
			return &h.Links[i]
		}
	}
	return nil
}

// peerOf says whether half o has the link at the other end of l.
func peerOf(o *Half, l Link) bool {
	for _, x := range o.Links {
		if x.UID == l.PeerUID && x.GID == l.PeerGID && x.PeerGID == l.GID {
			return true
		}
	}
	return false
}

func groupKey(g Group) string {
	var parts []string
	for _, h := range []*Half{g.Client, g.Server} {
		if h != nil {
			parts = append(parts, h.Instance+"/"+h.LGR)
		}
	}
	return strings.Join(parts, "+")
}

// eidMismatch reports whether two hosts whose EIDs are both known share
// none: SMC v2 needs one EID both ends have (smc_clc_match_eid,
// net/smc/smc_clc.c), so their declines are likely that.
func eidMismatch(a, b *Host) bool {
	if a == nil || b == nil || !a.EIDsKnown || !b.EIDsKnown {
		return false
	}
	for _, x := range a.EIDs {
		if slices.Contains(b.EIDs, x) {
			return false
		}
	}
	return true
}

// peerDecl is SMC_CLC_DECL_PEERDECL's kernel name: the local reason of a
// host whose peer declined.
const peerDecl = "PEERDECL"

// declines turns each host's fallback sockets (by reason, peer diagnosis
// and peer address) into who declined whom: a PEERDECL socket was declined
// by its peer with the peer diagnosis as the reason; any other reason is
// the host's own decline of its peer.
func declines(fb []Sample, byAddr map[string]string, conflicts []Conflict) []Decline {
	type key struct{ decliner, declined, reason string }
	rows := map[key]*Decline{}
	get := func(k key) *Decline {
		d := rows[k]
		if d == nil {
			d = &Decline{Decliner: k.decliner, Declined: k.declined, Reason: k.reason}
			rows[k] = d
		}
		return d
	}
	// name is the peer at addr: its instance, else the address (and the
	// conflict, when several hosts claim it).
	name := func(addr string) (string, *Conflict) {
		if inst, ok := byAddr[addr]; ok {
			return inst, nil
		}
		for i, c := range conflicts {
			if c.Address == addr {
				return addr + " (claimed by " + strings.Join(c.Instances, ", ") + ")", &conflicts[i]
			}
		}
		return addr, nil
	}
	for _, r := range fb {
		inst := r.Labels.Get("instance")
		peer, conflict := name(r.Labels.Get("peer"))
		reason, diag := r.Labels.Get("reason"), r.Labels.Get("peer_diagnosis")
		n := int(r.Value)
		if reason == peerDecl {
			d := get(key{peer, inst, diag})
			d.DeclinedReason = reason
			d.DeclinedConns += n
			d.Conflict = conflict
			continue
		}
		d := get(key{inst, peer, reason})
		d.Conflict = conflict
		d.DeclinerConns += n
		if d.DeclinedReason == "" {
			d.DeclinedReason = peerDecl
		}
	}
	out := make([]Decline, 0, len(rows))
	for _, d := range rows {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.DeclinerConns+a.DeclinedConns != b.DeclinerConns+b.DeclinedConns {
			return a.DeclinerConns+a.DeclinedConns > b.DeclinerConns+b.DeclinedConns
		}
		return a.Decliner+a.Declined+a.Reason < b.Decliner+b.Declined+b.Reason
	})
	return out
}

// ParseURL checks a --prometheus value: an http or https URL of the
// server, without a query.
func ParseURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return "", fmt.Errorf("--prometheus %q: want the server's URL (http://HOST:PORT or https://HOST)", s)
	}
	return strings.TrimRight(s, "/"), nil
}
