package monitor

import (
	"net/netip"
	"time"
)

// Snapshot is everything smctop shows at one moment.
type Snapshot struct {
	Time     time.Time     `json:"time"`
	Interval time.Duration `json:"interval_ns"` // since the previous snapshot (0 for the first)
	// WireTime is the capture time of the newest frame of the wire source:
	// rates of wire rows count capture time, so a replay at --speed N
	// shows the capture's rates, not N times them.
	WireTime time.Time `json:"wire_time,omitzero"`
	// Origin says where the facts come from: "kernel", "capture FILE",
	// "live IFACE", or "kernel+live IFACE".
	Origin     string         `json:"origin"`
	Sources    []Source       `json:"sources"`
	Overview   Overview       `json:"overview"`
	Conns      []ConnRow      `json:"connections"`
	LinkGroups []LinkGroupRow `json:"link_groups"`
	Devices    []DeviceRow    `json:"devices"`
	Fallbacks  []ReasonCount  `json:"fallback_reasons"`
	Events     []Event        `json:"events"`
	Settings   []Setting      `json:"settings"`
	Kernel     *KernelStats   `json:"kernel_stats,omitempty"`
}

// Source is one place facts come from, and why it is missing when it is.
type Source struct {
	Name      string `json:"name"` // "sock_diag", "smc_netlink", "rdma_sysfs", "procfs", "sysctl", "events", "wire"
	Available bool   `json:"available"`
	Detail    string `json:"detail,omitempty"` // what it is (e.g. "tracefs smc:*"), or why it is not available
}

// Overview is the first screen: counts now and rates since the last refresh.
type Overview struct {
	Conns       int `json:"connections"`
	SMCR        int `json:"smcr"`
	SMCD        int `json:"smcd"`
	Fallback    int `json:"fallback"`
	Pending     int `json:"pending"`
	Listening   int `json:"listening"`
	LinkGroups  int `json:"link_groups"`
	Links       int `json:"links"`
	LinksActive int `json:"links_active"`
	// NoRedundancy counts SMC-R link groups with fewer than two active
	// links: one RNIC or port failure away from losing every connection
	// (the kernel's SMC_LGR_SINGLE / ASYMMETRIC types).
	NoRedundancy int `json:"link_groups_without_redundancy"`
	RNICs        int `json:"rnics"`
	PortsActive  int `json:"rnic_ports_active"`
	PortsDown    int `json:"rnic_ports_down"`
	// ErrorCounters is how many RDMA error counters moved since the last refresh.
	ErrorCounters int `json:"rnic_error_counters_moving"`

	// Totals from SMC netlink statistics (per network namespace).
	HandshakeErrors uint64 `json:"handshake_errors"`
	FallbacksTotal  uint64 `json:"fallbacks_total"`
	SuccessTotal    uint64 `json:"smc_success_total"`
	// Rates per second over the last interval.
	HandshakeErrorRate float64 `json:"handshake_errors_per_second"`
	FallbackRate       float64 `json:"fallbacks_per_second"`
	SuccessRate        float64 `json:"smc_success_per_second"`
	RxBytesRate        float64 `json:"rx_bytes_per_second"`
	TxBytesRate        float64 `json:"tx_bytes_per_second"`
	// HSLimitation is the handshake-limitation switch (net.smc.limit_smc_hs
	// via SMC_NETLINK_DUMP_HS_LIMITATION); nil when unknown.
	HSLimitation *bool `json:"handshake_limitation,omitempty"`
}

// ConnRow is one SMC socket (kernel) or connection (wire), joined to its
// link group, link and device.
type ConnRow struct {
	// Key identifies the row across refreshes: "inode:N", "cookie:N" or
	// "wire:N" (the tracker's connection ID).
	Key    string `json:"key"`
	Source string `json:"source"` // "kernel" or "wire"
	Inode  uint64 `json:"inode,omitempty"`
	Cookie uint64 `json:"cookie,omitempty"`
	// Family is the sock_diag family: 43 for AF_SMC, 2/10 for IPPROTO_SMC.
	Family uint8          `json:"family,omitempty"`
	Proto  string         `json:"proto,omitempty"` // "AF_SMC" or "IPPROTO_SMC"
	Mode   string         `json:"mode"`            // "SMC-R", "SMC-D", "fallback", "pending", "failed"
	State  string         `json:"state"`
	Src    netip.AddrPort `json:"src"`
	Dst    netip.AddrPort `json:"dst"`
	// AddrHidden is set for IPPROTO_SMC sockets, whose addresses sock_diag
	// reports as zero (smc_diag_msg_common_fill copies them only for
	// AF_SMC): the ports are real, the addresses are not.
	AddrHidden bool   `json:"addresses_hidden,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Comm       string `json:"comm,omitempty"`
	Role       string `json:"role,omitempty"` // link-group role: "client" or "server"

	LGRID   uint32 `json:"lgr_id,omitempty"` // kernel link-group ID (0 unknown)
	LinkID  uint8  `json:"link_id,omitempty"`
	IBDev   string `json:"ibdev,omitempty"`
	IBPort  uint8  `json:"ibport,omitempty"`
	GID     string `json:"gid,omitempty"`
	PeerGID string `json:"peer_gid,omitempty"`

	Token    uint32  `json:"token,omitempty"`
	SndBuf   uint32  `json:"sndbuf_bytes,omitempty"`
	RMBE     uint32  `json:"rmbe_bytes,omitempty"`
	PeerRMBE uint32  `json:"peer_rmbe_bytes,omitempty"`
	RxBytes  uint64  `json:"rx_bytes"` // from the CDC cursors
	TxBytes  uint64  `json:"tx_bytes"`
	RxRate   float64 `json:"rx_bytes_per_second"`
	TxRate   float64 `json:"tx_bytes_per_second"`

	// Fallback is the local reason (SMC_CLC_DECL_*), PeerDiagnosis the code
	// of the Decline the peer sent; both by kernel name and meaning.
	Fallback      Reason `json:"fallback,omitempty"`
	PeerDiagnosis Reason `json:"peer_diagnosis,omitempty"`
	// Detail is a one-line human summary (wire rows: the tracker's detail).
	Detail string `json:"detail,omitempty"`
}

// Reason is a decline or fallback code with its kernel name and meaning.
type Reason struct {
	Code    uint32 `json:"code,omitempty"`
	Name    string `json:"name,omitempty"`
	Meaning string `json:"meaning,omitempty"`
}

// IsZero reports whether there is no reason (for JSON omitempty).
func (r Reason) IsZero() bool { return r.Code == 0 }

// LinkGroupRow is one SMC-R or SMC-D link group with all its links.
type LinkGroupRow struct {
	Key    string `json:"key"`
	Source string `json:"source"`
	ID     uint32 `json:"id"`
	Kind   string `json:"kind"` // "SMC-R" or "SMC-D"
	Role   string `json:"role,omitempty"`
	Type   string `json:"type,omitempty"`  // SMC-R: none, single, symmetric, asymmetric-local, asymmetric-peer
	State  string `json:"state,omitempty"` // wire: confirming, active, deleted
	PNETID string `json:"pnetid,omitempty"`
	VLANID uint8  `json:"vlan_id,omitempty"`
	Conns  uint32 `json:"conns"`
	// SMC v2: what was negotiated with the peer.
	Version  uint8  `json:"version,omitempty"`
	Release  uint8  `json:"release,omitempty"`
	PeerOS   string `json:"peer_os,omitempty"`
	PeerHost string `json:"peer_host,omitempty"`
	EID      string `json:"eid,omitempty"`
	// v2.1 negotiated limits (SMC_NLA_LGR_R_V2_MAX_CONNS / MAX_LINKS).
	MaxConns uint8 `json:"max_conns,omitempty"`
	MaxLinks uint8 `json:"max_links,omitempty"`
	Direct   bool  `json:"direct,omitempty"`
	// Buffer usage (Linux 6.12+: SMC_NLA_LGR_R_SNDBUF_ALLOC / RMB_ALLOC).
	SndBufAlloc uint64 `json:"sndbuf_alloc_bytes,omitempty"`
	RMBAlloc    uint64 `json:"rmb_alloc_bytes,omitempty"`
	Redundant   bool   `json:"redundant"`
	// DeleteReason is the DELETE_LINK reason seen on the wire.
	DeleteReason string    `json:"delete_reason,omitempty"`
	Links        []LinkRow `json:"links"`
	History      []string  `json:"history,omitempty"`
}

// LinkRow is one link of a link group.
type LinkRow struct {
	ID    uint8  `json:"id"`
	State string `json:"state"`
	// Active is whether the link carries traffic: SMC_LNK_ACTIVE in the
	// kernel, CONFIRM_LINK completed (and not deleted) on the wire.
	Active  bool   `json:"active"`
	UID     uint32 `json:"uid,omitempty"`
	PeerUID uint32 `json:"peer_uid,omitempty"`
	IBDev   string `json:"ibdev,omitempty"`
	IBPort  uint8  `json:"ibport,omitempty"`
	NetDev  string `json:"netdev,omitempty"`
	GID     string `json:"gid,omitempty"`
	PeerGID string `json:"peer_gid,omitempty"`
	Conns   uint32 `json:"conns"`
	// Wire-only facts, which the kernel does not expose.
	QPN          uint32 `json:"qpn,omitempty"`
	PeerQPN      uint32 `json:"peer_qpn,omitempty"`
	Packets      int    `json:"packets,omitempty"`
	CDCs         int    `json:"cdcs,omitempty"`
	Retransmit   int    `json:"retransmissions,omitempty"`
	PSNGaps      int    `json:"psn_gaps,omitempty"`
	NAKs         int    `json:"naks,omitempty"`
	RNRs         int    `json:"rnr_naks,omitempty"`
	DeleteReason string `json:"delete_reason,omitempty"`
}

// DeviceRow is one RDMA device with its ports and counters.
type DeviceRow struct {
	Name     string    `json:"name"`
	Driver   string    `json:"driver,omitempty"`
	Parent   string    `json:"parent,omitempty"` // netdev of a software device (rxe)
	SMC      bool      `json:"used_by_smc"`      // listed by SMC_NETLINK_GET_DEV_SMCR
	Critical bool      `json:"critical,omitempty"`
	Ports    []PortRow `json:"ports"`
}

// PortRow is one port of an RDMA device.
type PortRow struct {
	Port      int       `json:"port"`
	State     string    `json:"state"`
	PhysState string    `json:"phys_state,omitempty"`
	Rate      string    `json:"rate,omitempty"`
	NetDevs   []string  `json:"netdevs,omitempty"`
	PNETID    string    `json:"pnetid,omitempty"`
	GIDs      []string  `json:"gids,omitempty"`
	Links     uint32    `json:"smc_links"`
	Counters  []Counter `json:"counters"`
}

// Counter is one RDMA counter with its rate and short history.
type Counter struct {
	Name   string  `json:"name"`
	Source string  `json:"source"` // "pma" or "hw"
	Value  uint64  `json:"value"`
	Delta  uint64  `json:"delta"`
	Rate   float64 `json:"per_second"`
	Unit   string  `json:"unit,omitempty"`
	// Health is the counter's class (rdmastats.Classify): "" for plain
	// traffic counters, else what its increase means for RC links.
	Health string `json:"health,omitempty"`
	// Moving is set for an error counter that increased in the last interval.
	Moving  bool      `json:"moving,omitempty"`
	History []float64 `json:"history,omitempty"` // recent rates, oldest first
}

// ReasonCount is how often one reason made connections fall back, per side.
type ReasonCount struct {
	Side   string  `json:"side"` // "server" or "client"
	Reason Reason  `json:"reason"`
	Count  uint64  `json:"count"`
	Rate   float64 `json:"per_second"`
}

// Event is something that happened: a fallback, a link down, a link group
// created or deleted, a failover, an error counter starting to move.
type Event struct {
	Time   time.Time `json:"time"`
	Kind   string    `json:"kind"`   // see the Event* constants
	Source string    `json:"source"` // "tracepoint", "diff" or "wire"
	Text   string    `json:"text"`
}

// Event kinds.
const (
	EventFallback     = "fallback"
	EventLinkDown     = "link-down"
	EventLinkUp       = "link-up"
	EventLGRCreated   = "lgr-created"
	EventLGRDeleted   = "lgr-deleted"
	EventFailover     = "failover"
	EventCounter      = "counter"
	EventSMC          = "smc"
	EventHandshakeErr = "handshake-error"
)

// Setting is one net.smc.* sysctl.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// KernelStats are the SMC netlink statistics (SMC_NETLINK_GET_STATS) as
// totals, per technology.
type KernelStats struct {
	SMCR TechTotals `json:"smcr"`
	SMCD TechTotals `json:"smcd"`
	// Handshake errors per side (SMC_NLA_STATS_CLNT_HS_ERR_CNT / SRV_).
	ClientHSErrors  uint64 `json:"client_handshake_errors"`
	ServerHSErrors  uint64 `json:"server_handshake_errors"`
	ClientFallbacks uint64 `json:"client_fallbacks"`
	ServerFallbacks uint64 `json:"server_fallbacks"`
}

// TechTotals are one technology's counters.
type TechTotals struct {
	ClientSuccess uint64 `json:"client_success"` // v1+v2 connections made as client
	ServerSuccess uint64 `json:"server_success"`
	RxBytes       uint64 `json:"rx_bytes"`
	TxBytes       uint64 `json:"tx_bytes"`
	RxCount       uint64 `json:"rx_calls"`
	TxCount       uint64 `json:"tx_calls"`
	RxRMBUsage    uint64 `json:"rx_rmb_usage_bytes"`
	TxRMBUsage    uint64 `json:"tx_rmb_usage_bytes"`
}
