package monitor

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/rdmastats"
	"github.com/smcscope/smcscope/smcnl"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
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
	Host       HostInfo       `json:"host"`
	Sources    []Source       `json:"sources"`
	Overview   Overview       `json:"overview"`
	Conns      []ConnRow      `json:"connections"`
	LinkGroups []LinkGroupRow `json:"link_groups"`
	Devices    []DeviceRow    `json:"devices"`
	Fallbacks  []ReasonCount  `json:"fallback_reasons"`
	// Processes: SMC traffic per process from the send and receive
	// tracepoints (empty without them; Sources says why).
	Processes []ProcessRow `json:"processes"`
	Events    []Event      `json:"events"`
	// Expert counts each finding of package expert's catalogue since the
	// start: the wire's frames that show it (smctop -i/-r), the kernel's
	// refreshes that found it.
	Expert   []ExpertCount `json:"expert"`
	Settings []Setting     `json:"settings"`
	Kernel   *KernelStats  `json:"kernel_stats,omitempty"`
	// System is the kernel's SMC system information, EIDs and PNET table
	// (smcr info, smcr ueid/seid show, smc_pnet); nil when not read.
	System *SystemInfo `json:"system,omitempty"`
	// WireTotals are the capture's stand-in for the kernel's statistics
	// when the kernel is not read (smctop -r): see WireTotals.
	WireTotals *WireTotals `json:"wire_totals,omitempty"`
}

// CounterErrors lists every device's counters that could not be read, as
// "rxe0/1 hw_counters/foo: unparsable \"N/A\"".
func (s *Snapshot) CounterErrors() []string {
	var out []string
	for _, d := range s.Devices {
		out = append(out, d.CounterErrors...)
	}
	return out
}

// HostInfo is the host the snapshot is of: its name (the host name SMC v2
// sends in CLC, SMC_NLA_SYS_LOCAL_HOST, else the system's) and the
// addresses its SMC traffic uses (its sockets' local addresses and its
// links' IPv4-mapped GIDs), which is how another host's peer address
// finds it in a fleet.
type HostInfo struct {
	Name      string   `json:"name,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
}

// Source is one place facts come from, and why it is missing when it is.
type Source struct {
	Name      SourceName `json:"name"`
	Available bool       `json:"available"`
	Detail    string     `json:"detail,omitempty"` // what it is (e.g. "tracefs smc:*"), or why it is not available
	// The wire source's progress: frames read, and whether the capture
	// ended (a file read to its end, or a live capture stopped).
	Frames int    `json:"frames,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
	Error  string `json:"error,omitempty"` // the read error that ended it
	// A file replay's pace (0: as fast as it reads) and whether it is
	// paused (smctop -r, the replay keys).
	Speed  float64 `json:"speed,omitempty"`
	Paused bool    `json:"paused,omitempty"`
	// Clock is where a file replay stands in capture time: its newest
	// frame, or later after a step between frames.
	Clock time.Time `json:"clock,omitzero"`
}

// SourceName names a source of facts, one spelling for screens, JSON and
// the exporter.
type SourceName string

// Sources of facts.
const (
	SourceSockDiag   SourceName = "sock_diag"   // SMC sockets (sock_diag)
	SourceNetlink    SourceName = "smc_netlink" // link groups, devices, statistics (SMC_GEN_NETLINK)
	SourceRDMASysfs  SourceName = "rdma_sysfs"  // RNICs, ports and counters
	SourceProcfs     SourceName = "procfs"      // processes of the sockets
	SourceEvents     SourceName = "events"      // tracepoints and snapshot differences
	SourceThroughput SourceName = "throughput"  // bytes per process (tracepoints)
	SourceRemote     SourceName = "remote"      // another host's exporter
	SourceWireName   SourceName = "wire"        // decoded frames (capture or live interface)
)

// Overview is the first screen: counts now and rates since the last
// refresh. Connections, link groups and links that ended (seen closed or
// deleted on the wire, or kept as lost links) are not counted as now.
type Overview struct {
	Conns     int `json:"connections"`
	SMCR      int `json:"smcr"`
	SMCD      int `json:"smcd"`
	Fallback  int `json:"fallback"`
	Pending   int `json:"pending"`
	Failed    int `json:"failed"`
	Listening int `json:"listening"`
	// Ended counts wire connections that closed: listed, not counted above.
	Ended       int `json:"ended"`
	LinkGroups  int `json:"link_groups"`
	Links       int `json:"links"`
	LinksActive int `json:"links_active"`
	// LinksLost counts links listed as LinkDeleted.
	LinksLost int `json:"links_lost"`
	// LinksUnknown counts links listed as LinkNotKnown: in Links, neither
	// active nor lost.
	LinksUnknown int `json:"links_unknown,omitempty"`
	// NoRedundancy counts SMC-R link groups with fewer than two active
	// links: one RNIC or port failure away from losing every connection
	// (the kernel's SMC_LGR_SINGLE / ASYMMETRIC types).
	NoRedundancy int `json:"link_groups_without_redundancy"`
	// RedundancyUnknown counts SMC-R link groups with fewer than two
	// active links seen whose every link the source may not show
	// (LinkGroupRow.RedundancyUnknown): in neither count above.
	RedundancyUnknown int `json:"link_groups_redundancy_unknown,omitempty"`
	RNICs             int `json:"rnics"`
	// DIBSDevices counts SMC-D's devices: ISM, and the loopback "lo".
	DIBSDevices int `json:"dibs_devices"`
	PortsActive int `json:"rnic_ports_active"`
	PortsDown   int `json:"rnic_ports_down"`
	// ErrorCounters is how many RDMA error counters moved since the last refresh.
	ErrorCounters int `json:"rnic_error_counters_moving"`

	// Totals from SMC netlink statistics (per network namespace); for a
	// capture without the kernel, FallbacksTotal and SuccessTotal count
	// what the wire showed (each side of a connection once), and
	// HandshakeErrors, the kernel's count alone, is nil.
	HandshakeErrors *uint64 `json:"handshake_errors,omitempty"`
	FallbacksTotal  uint64  `json:"fallbacks_total"`
	SuccessTotal    uint64  `json:"smc_success_total"`
	// JoinedSMC counts, for a capture, the SMC connections it joined
	// after their handshake: not in SuccessTotal (it did not see them
	// become SMC).
	JoinedSMC uint64 `json:"smc_joined_total,omitempty"`
	// Rates per second of the kernel's counts over the last interval:
	// nil without kernel statistics at both ends of it (a capture, a
	// first refresh).
	HandshakeErrorRate *float64 `json:"handshake_errors_per_second,omitempty"`
	FallbackRate       *float64 `json:"fallbacks_per_second,omitempty"`
	SuccessRate        *float64 `json:"smc_success_per_second,omitempty"`
	RxBytesRate        *float64 `json:"rx_bytes_per_second,omitempty"`
	TxBytesRate        *float64 `json:"tx_bytes_per_second,omitempty"`
	// UnlistedConns counts the connections the kernel's link groups hold
	// (SMC_NLA_LGR_*_CONNS_NUM) beyond the sockets sock_diag lists on
	// them: a socket the application closed is unhashed at once
	// (__smc_release, net/smc/af_smc.c) and leaves the dump, while its
	// connection stays in the group until the close with the peer
	// completes (smc_conn_free). nil unless both sock_diag and SMC netlink
	// were read.
	UnlistedConns *int `json:"link_group_conns_without_socket,omitempty"`
	// HSLimitation is the handshake-limitation switch (net.smc.limit_smc_hs
	// via SMC_NETLINK_DUMP_HS_LIMITATION); nil when unknown.
	HSLimitation *bool `json:"handshake_limitation,omitempty"`
}

// Mode says how a connection carries its data. One spelling for every
// screen, JSON and Prometheus label.
type Mode string

// Connection modes.
const (
	ModeSMCR     Mode = "SMC-R"
	ModeSMCD     Mode = "SMC-D"
	ModeFallback Mode = "fallback" // TCP after an SMC attempt
	ModePending  Mode = "pending"  // handshake or first link not finished
	ModeFailed   Mode = "failed"   // the attempt ended without SMC and without a fallback
	ModeListen   Mode = "listen"
)

// SMC reports whether the mode moves data over SMC (SMC-R or SMC-D).
func (m Mode) SMC() bool { return m == ModeSMCR || m == ModeSMCD }

// RowSource says where a row's facts come from.
type RowSource string

// Row sources.
const (
	SourceKernel RowSource = "kernel" // sock_diag and SMC netlink of this host
	SourceWire   RowSource = "wire"   // decoded frames (smctop -i/-r)
)

// Role is a side of a link group: the client made the first contact.
type Role string

// Link-group roles.
const (
	RoleClient Role = "client"
	RoleServer Role = "server"
)

// ConnState is a socket's state by its kernel name (SMC_ACTIVE is
// "ACTIVE", SMC_APPCLOSEWAIT1 "APPCLOSEWAIT1", ...). A connection seen on
// the wire is "INIT" until its handshake ends, "ACTIVE", then "CLOSED".
type ConnState string

// The states the wire reports; the kernel's are smcnl.State's names.
const (
	StateInit   ConnState = "INIT"
	StateActive ConnState = "ACTIVE"
	StateClosed ConnState = "CLOSED"
	StateListen ConnState = "LISTEN"
)

// LGRID is a link group's ID as its host's kernel numbers it (struct
// smc_link_group id; the link user IDs of CONFIRM_LINK are it plus the
// link number). It reads "0x100" in every output, JSON included.
type LGRID uint32

func (id LGRID) String() string {
	if id == 0 {
		return "-"
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// MarshalText writes the ID as String does.
func (id LGRID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (id *LGRID) UnmarshalText(b []byte) error {
	if string(b) == "-" {
		*id = 0
		return nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(string(b), "0x"), 16, 32)
	if err != nil {
		return fmt.Errorf("link group ID %q: %w", b, err)
	}
	*id = LGRID(v)
	return nil
}

// ConnRow is one SMC socket (kernel) or connection (wire), joined to its
// link group, link and device. A wire row is seen from the client: Src is
// the client, Fallback the client's own reason, PeerDiagnosis the code of
// a Decline the server sent.
type ConnRow struct {
	// Key identifies the row across refreshes: "inode:N", "cookie:N" or
	// "wire:N" (the tracker's connection ID).
	Key    string    `json:"key"`
	Source RowSource `json:"source"`
	Inode  uint64    `json:"inode,omitempty"`
	Cookie uint64    `json:"cookie,omitempty"`
	// Family is the sock_diag family: 43 for AF_SMC, 2/10 for IPPROTO_SMC.
	Family uint8          `json:"family,omitempty"`
	Proto  string         `json:"proto,omitempty"` // "AF_SMC" or "IPPROTO_SMC"
	Mode   Mode           `json:"mode"`
	State  ConnState      `json:"state"`
	Src    netip.AddrPort `json:"src"`
	Dst    netip.AddrPort `json:"dst"`
	// AddrHidden is set for IPPROTO_SMC sockets, whose addresses sock_diag
	// reports as zero (smc_diag_msg_common_fill copies them only for
	// AF_SMC): the ports are real, the addresses are not.
	AddrHidden bool   `json:"addresses_hidden,omitempty"`
	PID        int    `json:"pid,omitempty"`
	Comm       string `json:"comm,omitempty"`
	// ConnLink is the connection's link group and link (SMC-R), or its
	// link group and DIBS device (SMC-D); nil for none. Its fields read
	// as the row's own where it is set (Link reads them for any row),
	// and JSON writes them so.
	*ConnLink

	// UID is a kernel socket's owner (smc_diag_msg.diag_uid, as smcss's
	// UID column); nil for a wire row. IfIndex is the interface its TCP
	// socket is bound to (idiag_if, smcss's Intf), 0 for none.
	UID     *uint32 `json:"uid,omitempty"`
	IfIndex uint32  `json:"ifindex,omitempty"`
	// Shutdown is a kernel socket's shutdown state (SMC_DIAG_SHUTDOWN,
	// smcss's notation: "<->" open, "R->" receiving shut, "<-W" sending
	// shut, "R-W" both); "" for a wire row, which does not show it.
	Shutdown string `json:"shutdown,omitempty"`
	// StateSince is when the kernel row was first seen in its State (the
	// refresh that saw it; the first refresh for sockets already there).
	StateSince time.Time `json:"state_since,omitzero"`
	// FamilyUnknown: an AF_SMC listener whose address sock_diag reports
	// as all zeros, and whose family the TCP listener tables
	// (/proc/net/tcp, tcp6) could not tell: 0.0.0.0 or [::]. Src is
	// then 0.0.0.0:PORT.
	FamilyUnknown bool `json:"address_family_unknown,omitempty"`
	// Cursors are the connection's CDC cursors and flags (kernel rows
	// with a connection: struct smc_diag_conninfo); nil otherwise.
	Cursors *Cursors `json:"cursors,omitempty"`
	// DMB is an SMC-D socket's buffer tokens (struct smcd_diag_dmbinfo).
	DMB *DMBTokens `json:"dmb,omitempty"`

	Token    uint32 `json:"token,omitempty"`
	SndBuf   uint32 `json:"sndbuf_bytes,omitempty"`
	RMBE     uint32 `json:"rmbe_bytes,omitempty"`
	PeerRMBE uint32 `json:"peer_rmbe_bytes,omitempty"`
	RxBytes  uint64 `json:"rx_bytes"` // from the CDC cursors
	TxBytes  uint64 `json:"tx_bytes"`
	// RxUnknown, TxUnknown: the byte count is not known, not zero (a wire
	// connection on a link the capture does not show, whose direction it
	// does not hold, or whose cursor wrapped an RMBE of a size it never
	// showed).
	RxUnknown bool `json:"rx_bytes_unknown,omitempty"`
	TxUnknown bool `json:"tx_bytes_unknown,omitempty"`
	// RxRate and TxRate are the cursors' movement over the interval.
	RxRate float64 `json:"rx_bytes_per_second"`
	TxRate float64 `json:"tx_bytes_per_second"`
	// RateUnknown: RxRate and TxRate were not measured (0): the first
	// refresh, a connection the refresh before did not list, a refresh
	// before the capture's first frame (a replay paused or ended keeps
	// the rates of the refresh before, known or not).
	RateUnknown bool `json:"rate_unknown,omitempty"`
	// Traced is what the send/receive tracepoints saw of the connection in
	// the interval, when they can tell it apart (see TracedIO).
	Traced *TracedIO `json:"traced,omitempty"`

	// ConnDetail holds what only some rows have (a fallback's reasons,
	// the wire's account); nil for none. Its fields read as the row's own
	// where it is set, and JSON writes them so.
	*ConnDetail
}

// ConnLink is a connection's link group and link: what the sockets of
// one link share. A ConnRow holds it by pointer, and the kernel's rows
// of a link share one (read it, do not change it through one row): at
// 100,000 sockets on a few thousand links, each row's copy of the same
// strings was a fifth of the row, which the runtime zeroes, the
// refresh fills and the collector scans. JSON writes its fields as the
// row's own.
type ConnLink struct {
	Role  Role  `json:"role,omitempty"`  // link-group role
	LGRID LGRID `json:"lgr_id,omitzero"` // the link group's kernel ID (0 unknown)
	// LGRKey is the Key of the link-group row the connection is on.
	LGRKey string `json:"lgr_key,omitempty"`
	LinkID uint8  `json:"link_id,omitempty"`
	// IBDev and IBPort are an SMC-R socket's RDMA device; DIBSDev is an
	// SMC-D socket's DIBS device ("lo" for the loopback).
	DIBSDev string `json:"dibs_dev,omitempty"`
	IBDev   string `json:"ibdev,omitempty"`
	IBPort  uint8  `json:"ibport,omitempty"`
	GID     string `json:"gid,omitempty"`
	PeerGID string `json:"peer_gid,omitempty"`
}

// ConnDetail is what only some connection rows have: why a connection
// fell back, and the wire's account of it. A ConnRow holds it by
// pointer, nil for none (most of a host's sockets): each of 100,000
// rows a refresh makes would otherwise carry its 168 bytes, which the
// runtime zeroes and the collector scans. JSON writes its fields as the
// row's own.
type ConnDetail struct {
	// Fallback is the local reason (SMC_CLC_DECL_*: the kernel's
	// fallback_rsn), PeerDiagnosis the code of the Decline the peer sent;
	// both by kernel name and meaning.
	Fallback      Reason `json:"fallback,omitzero"`
	PeerDiagnosis Reason `json:"peer_diagnosis,omitzero"`
	// Detail is a one-line human summary (wire rows: how the handshake
	// ended, and how the connection closed).
	Detail string `json:"detail,omitempty"`
	// Notes is what of the wire's connection deserves a look (rows.Conn.Notes:
	// flow-control events, WRITEs the capture missed or could not tie),
	// as smcdump -z smc,conns gives it; empty for kernel rows.
	Notes string `json:"notes,omitempty"`
	// Start is when the wire saw the connection begin (zero for kernel rows).
	Start time.Time `json:"start,omitzero"`
	// Handshake is the wire's timeline of the connection: TCP SYN, each
	// CLC message, the first CDC, the close, at their frames' times (kernel
	// rows: none; their events are in Snapshot.Events by Conn key).
	Handshake []Step `json:"handshake,omitempty"`
	// Findings are the wire's expert findings on the connection.
	Findings []Finding `json:"findings,omitempty"`
}

// FallbackReason is the row's Fallback, zero for none.
func (c *ConnRow) FallbackReason() Reason {
	if c.ConnDetail == nil {
		return Reason{}
	}
	return c.ConnDetail.Fallback
}

// PeerDiagnosisReason is the row's PeerDiagnosis, zero for none.
func (c *ConnRow) PeerDiagnosisReason() Reason {
	if c.ConnDetail == nil {
		return Reason{}
	}
	return c.ConnDetail.PeerDiagnosis
}

// Link is the row's ConnLink, zero for none.
func (c *ConnRow) Link() ConnLink {
	if c.ConnLink == nil {
		return ConnLink{}
	}
	return *c.ConnLink
}

// Details is the row's ConnDetail, zero for none.
func (c *ConnRow) Details() ConnDetail {
	if c.ConnDetail == nil {
		return ConnDetail{}
	}
	return *c.ConnDetail
}

// LGRName names the connection's link group as the group's row does
// (LinkGroupRow.Name): its kernel ID, else its row key; "-" for none.
func (c ConnRow) LGRName() string {
	switch l := c.ConnLink; {
	case l == nil:
	case l.LGRID != 0:
		return l.LGRID.String()
	case l.LGRKey != "":
		return l.LGRKey
	}
	return "-"
}

// FindingID is a finding of package expert's catalogue. Screens, JSON
// and labels write its stable name ("smc.cdc.seq_gap"); code compares
// the typed value. 0 is none.
type FindingID expert.ID

// Def is the finding's definition in the catalogue.
func (f FindingID) Def() expert.Def { return expert.ID(f).Def() }

func (f FindingID) String() string {
	if f == 0 {
		return ""
	}
	return expert.ID(f).String()
}

// MarshalText writes the finding's stable name.
func (f FindingID) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads a stable name; a name this version's catalogue
// does not have (a newer host's, read with --remote) is no finding.
func (f *FindingID) UnmarshalText(b []byte) error {
	id, _ := expert.ByName(string(b))
	*f = FindingID(id)
	return nil
}

// Severity is a finding's severity (package expert's scale), written by
// its name ("warn"); 0 is none.
type Severity expert.Severity

func (s Severity) String() string { return expert.Severity(s).String() }

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, _ := expert.ParseSeverity(string(b))
	*s = Severity(v)
	return nil
}

// FindingSource says where a finding's count comes from (package
// expert's sources), written "wire" or "kernel".
type FindingSource expert.Source

func (s FindingSource) String() string { return expert.Source(s).String() }

// MarshalText writes the source's name.
func (s FindingSource) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a source's name.
func (s *FindingSource) UnmarshalText(b []byte) error {
	*s = FindingSource(expert.FromWire)
	if string(b) == expert.FromKernel.String() {
		*s = FindingSource(expert.FromKernel)
	}
	return nil
}

// Finding is one finding of package expert's catalogue on one object.
type Finding struct {
	ID       FindingID `json:"id"`
	Severity Severity  `json:"severity"`
	Count    int       `json:"count"`
	First    int       `json:"first_frame,omitempty"`
	Last     int       `json:"last_frame,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// ExpertCount is how often one finding was found.
type ExpertCount struct {
	ID       FindingID     `json:"id"`
	Severity Severity      `json:"severity"`
	Source   FindingSource `json:"source"`
	Count    uint64        `json:"count"`
}

// Step is one moment of a connection's life on the wire.
type Step struct {
	Time time.Time `json:"time"`
	What string    `json:"what"`
}

// Reason is a decline or fallback code with its kernel name and meaning.
type Reason struct {
	Code    uint32 `json:"code,omitempty"`
	Name    string `json:"name,omitempty"`
	Meaning string `json:"meaning,omitempty"`
}

// IsZero reports whether there is no reason (for JSON omitzero).
func (r Reason) IsZero() bool { return r.Code == 0 }

// LinkGroupRow is one SMC-R or SMC-D link group with all its links.
type LinkGroupRow struct {
	Key    string    `json:"key"`
	Source RowSource `json:"source"`
	// ID is the kernel's, omitted when unknown (a capture that began
	// after the group was made): Name is then the Key.
	ID LGRID `json:"id,omitzero"`
	// PeerID is the peer's ID of the same group, where the wire shows it
	// (the server's, for a capture seen from the client).
	PeerID LGRID `json:"peer_id,omitzero"`
	Kind   Mode  `json:"kind"` // ModeSMCR or ModeSMCD
	Role   Role  `json:"role,omitempty"`
	// Type is the kernel's SMC-R link-group type (none, single,
	// symmetric, asymmetric-local, asymmetric-peer).
	Type string `json:"type,omitempty"`
	// Deleted is set when the wire saw the group end (DELETE_LINK of
	// every link); the kernel lists only groups that exist.
	Deleted bool   `json:"deleted,omitempty"`
	PNETID  string `json:"pnetid,omitempty"`
	VLANID  uint8  `json:"vlan_id,omitempty"`
	Conns   uint32 `json:"conns"`
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
	// ANCK says what an ANCK (Alibaba Cloud Linux) handshake agreed for
	// the group: "credits", "credits RWWI", "vendor options" (wire only).
	ANCK string `json:"anck,omitempty"`
	// Buffer usage (Linux 6.12+: SMC_NLA_LGR_R_SNDBUF_ALLOC / RMB_ALLOC).
	SndBufAlloc uint64 `json:"sndbuf_alloc_bytes,omitempty"`
	RMBAlloc    uint64 `json:"rmb_alloc_bytes,omitempty"`
	// SMC-D: the local and peer GIDs and the DIBS device of the group.
	GID     string `json:"gid,omitempty"`
	PeerGID string `json:"peer_gid,omitempty"`
	DIBSDev string `json:"dibs_dev,omitempty"`
	// Redundant: two or more active links (SMC-R). An SMC-D group has no
	// links; redundancy means nothing for it (false, never counted).
	Redundant bool `json:"redundant"`
	// RedundancyUnknown: fewer than two active links seen in a group
	// whose every link the source may not show (the wire, a capture that
	// joined the group after its links were set up or that has none of
	// its RoCE traffic): not counted as a group without redundancy, shown
	// and exported as not known.
	RedundancyUnknown bool `json:"redundancy_unknown,omitempty"`
	// DeleteReason is the DELETE_LINK reason seen on the wire.
	DeleteReason Reason `json:"delete_reason,omitzero"`
	// DeleteReasonNotCaptured: deleted on the wire by a DELETE_LINK
	// whose reason the capture does not hold (track.ReasonNotCaptured);
	// a kernel source never says why.
	DeleteReasonNotCaptured bool      `json:"delete_reason_not_captured,omitempty"`
	Links                   []LinkRow `json:"links"`
	// Findings are the wire's expert findings on the group itself.
	Findings []Finding `json:"findings,omitempty"`
	// History is the group's life as the wire showed it (links confirmed,
	// added, rejected, deleted, connections moved), oldest first.
	History []Event `json:"history"`

	linkIndex []int // the tracker's IDs of Links, while a wire row is built
}

// Name is how every output names the group: its kernel ID, or its row
// key when the capture does not show the ID (a capture that began after
// the group was made). Events, labels and screens all use it.
func (g LinkGroupRow) Name() string {
	if g.ID != 0 {
		return g.ID.String()
	}
	return g.Key
}

// LinkState is a link's state by its kernel name (enum smc_link_state),
// and LinkDeleted for a link the group lost.
type LinkState string

// Link states.
const (
	LinkUnused     LinkState = "UNUSED"
	LinkInactive   LinkState = "INACTIVE"
	LinkActivating LinkState = "ACTIVATING"
	LinkActive     LinkState = "ACTIVE"
	// LinkNotKnown: a link the capture joined of which nothing on the
	// wire says that it works (rows.LinkFacts.Silent); the kernels may
	// still list it ACTIVE until its TEST_LINK times out.
	LinkNotKnown LinkState = "-"
	// LinkDeleted: the link is gone from a group that still exists (the
	// kernel no longer lists it, or the wire saw its DELETE_LINK). smctop
	// keeps listing it until the group has as many active links again,
	// so a failover reads as a link down, not as a link that never was.
	LinkDeleted LinkState = "DELETED"
)

// LinkUID is a link's user ID (the link group's ID plus the link number,
// SMC_NLA_LINK_UID). It reads "00000101" in every output, JSON included;
// 0 is no UID (not known).
type LinkUID uint32

func (u LinkUID) String() string {
	if u == 0 {
		return "-"
	}
	return fmt.Sprintf("%08x", uint32(u))
}

// MarshalText writes the UID as String does.
func (u LinkUID) MarshalText() ([]byte, error) { return []byte(u.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (u *LinkUID) UnmarshalText(b []byte) error {
	if string(b) == "-" {
		*u = 0
		return nil
	}
	v, err := strconv.ParseUint(string(b), 16, 32)
	if err != nil {
		return fmt.Errorf("link UID %q: %w", b, err)
	}
	*u = LinkUID(v)
	return nil
}

// LinkRow is one link of a link group.
type LinkRow struct {
	ID    uint8     `json:"id,omitempty"` // the kernel's link number; omitted when the capture did not show it
	State LinkState `json:"state"`
	// Active is whether the link carries traffic: SMC_LNK_ACTIVE in the
	// kernel, CONFIRM_LINK completed (and not deleted) on the wire.
	Active  bool    `json:"active"`
	UID     LinkUID `json:"uid,omitempty"`
	PeerUID LinkUID `json:"peer_uid,omitempty"`
	IBDev   string  `json:"ibdev,omitempty"`
	IBPort  uint8   `json:"ibport,omitempty"`
	NetDev  string  `json:"netdev,omitempty"`
	GID     string  `json:"gid,omitempty"`
	PeerGID string  `json:"peer_gid,omitempty"`
	Conns   uint32  `json:"conns"`
	// Since is when a deleted link was lost (the refresh that no longer
	// found it, or the DELETE_LINK frame's time).
	Since time.Time `json:"since,omitzero"`
	// Wire-only facts, which the kernel does not expose.
	QPN          uint32 `json:"qpn,omitempty"`
	PeerQPN      uint32 `json:"peer_qpn,omitempty"`
	Packets      int    `json:"packets,omitempty"`
	CDCs         int    `json:"cdcs,omitempty"`
	Retransmit   int    `json:"retransmissions,omitempty"`
	PSNGaps      int    `json:"psn_gaps,omitempty"`
	NAKs         int    `json:"naks,omitempty"`
	RNRs         int    `json:"rnr_naks,omitempty"`
	DeleteReason Reason `json:"delete_reason,omitzero"`
	// DeleteReasonNotCaptured: as LinkGroupRow's.
	DeleteReasonNotCaptured bool `json:"delete_reason_not_captured,omitempty"`
	// Credits are ANCK's receive-queue credits per direction, on a link
	// of an ANCK link group with credits (wire only).
	Credits []rows.Credits `json:"credits,omitempty"`
	// Findings are the wire's expert findings on the link.
	Findings []Finding `json:"findings,omitempty"`
}

// Name is how every output names the link: its number in the group (the
// kernel's link ID), or, for a link whose setup the capture did not show,
// its QPs on the wire ("qp0x11/0x13"), so two such links of a group read
// apart.
func (l LinkRow) Name() string { return track.LinkName(l.ID, l.QPN, l.PeerQPN) }

// MarshalJSON writes the row with used_by_smc only when it is known.
func (d DeviceRow) MarshalJSON() ([]byte, error) {
	type plain DeviceRow
	x := struct {
		plain
		SMC *bool `json:"used_by_smc,omitempty"` // shadows plain's
	}{plain: plain(d)}
	if d.SMCKnown {
		x.SMC = &d.SMC
	}
	return json.Marshal(x)
}

// UnmarshalJSON reads a row MarshalJSON wrote (smctop --remote).
func (d *DeviceRow) UnmarshalJSON(b []byte) error {
	type plain DeviceRow
	var x struct {
		plain
		SMC *bool `json:"used_by_smc"`
	}
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*d = DeviceRow(x.plain)
	if x.SMC != nil {
		d.SMC, d.SMCKnown = *x.SMC, true
	}
	return nil
}

// DeviceKind says what a device row is.
type DeviceKind string

// Device kinds.
const (
	DeviceRDMA DeviceKind = "RDMA" // an RNIC (SMC-R): ports, counters
	DeviceDIBS DeviceKind = "DIBS" // an ISM or the loopback device (SMC-D)
)

// DeviceRow is one RDMA device with its ports and counters, or one DIBS
// device (SMC-D) with its GID.
type DeviceRow struct {
	Kind   DeviceKind `json:"kind"`
	Name   string     `json:"name"`
	Driver string     `json:"driver,omitempty"`
	Parent string     `json:"parent,omitempty"` // netdev of a software device (rxe)
	// SMC: the kernel's SMC lists the device (SMC_NETLINK_GET_DEV_SMCR for
	// an RNIC, GET_DEV_SMCD for a DIBS device); the DIBS loopback, which
	// GET_DEV_SMCD never lists (smc_nl_prep_smcd_dev), counts when SMC-D
	// link groups or sockets of the kernel are on it.
	SMC bool `json:"used_by_smc"`
	// SMCKnown: the kernel's device list was read, or a kernel socket or
	// link group shows the device in use; else used_by_smc is left out of
	// the JSON and shown as "-" (absent, not false).
	SMCKnown bool `json:"-"`
	Critical bool `json:"critical,omitempty"`
	// DIBS: the device's GID (as /sys/class/dibs/NAME/gid) and fabric ID;
	// Conns counts the SMC-D connections on it.
	GID      string `json:"gid,omitempty"`
	FabricID string `json:"fabric_id,omitempty"`
	Conns    uint32 `json:"conns,omitempty"`
	// DIBS: the device's PNET ID, from GET_DEV_SMCD or, for a device it
	// does not list, the PNET table entry naming it; PNETIDByUser when
	// set by a user (smc_pnet) rather than by the hardware.
	PNETID       string    `json:"pnetid,omitempty"`
	PNETIDByUser bool      `json:"pnetid_by_user,omitempty"`
	Ports        []PortRow `json:"ports"`
	// CounterErrors are the counters found but not read or parsed
	// ("rxe0/1 hw_counters/foo: unparsable \"N/A\""): left out of Ports,
	// which hold every other counter.
	CounterErrors []string `json:"counter_errors,omitempty"`
}

// PortRow is one port of an RDMA device.
type PortRow struct {
	Port  int    `json:"port"`
	State string `json:"state"`
	// Active is the port's state IB_PORT_ACTIVE (4): it can carry links.
	Active    bool     `json:"active"`
	PhysState string   `json:"phys_state,omitempty"`
	Rate      string   `json:"rate,omitempty"`
	NetDevs   []string `json:"netdevs,omitempty"`
	PNETID    string   `json:"pnetid,omitempty"`
	// PNETIDByUser: the PNET ID was set by a user (smc_pnet), not by the
	// hardware (SMC_NLA_DEV_PORT_PNET_USR).
	PNETIDByUser bool      `json:"pnetid_by_user,omitempty"`
	GIDs         []string  `json:"gids,omitempty"`
	Links        uint32    `json:"smc_links"`
	Counters     []Counter `json:"counters"`
}

// Counter is one RDMA counter with its rate and short history.
type Counter struct {
	Name   string         `json:"name"`
	Source string         `json:"source"` // "pma" or "hw"
	Value  uint64         `json:"value"`
	Delta  uint64         `json:"delta"`
	Rate   float64        `json:"per_second"`
	Unit   rdmastats.Unit `json:"unit,omitempty"`
	// Health is the counter's class (rdmastats.Classify): "" for plain
	// traffic counters, else what its increase means for RC links.
	Health string `json:"health,omitempty"`
	// Moving is set for an error counter that increased in the last interval.
	Moving  bool      `json:"moving,omitempty"`
	History []float64 `json:"history,omitempty"` // recent rates, oldest first
}

// ReasonCount is how often one reason made connections fall back, per side.
type ReasonCount struct {
	Side   Role    `json:"side"`
	Reason Reason  `json:"reason"`
	Count  uint64  `json:"count"`
	Rate   float64 `json:"per_second"`
}

// Event is something that happened: a fallback, a link down, a link group
// created or deleted, a failover, an error counter starting to move.
// Time is when it happened: the frame's time for the wire, the trace
// time for tracepoints, the refresh that noticed it for differences.
type Event struct {
	Time   time.Time   `json:"time"`
	Kind   EventKind   `json:"kind"`
	Source EventSource `json:"source"`
	Text   string      `json:"text"`
	Frame  int         `json:"frame,omitempty"` // wire: the frame that shows it
	// Conn and LGR are the keys of the connection and link group the
	// event is about, where there is one.
	Conn string `json:"conn,omitempty"`
	LGR  string `json:"lgr,omitempty"`
	Link uint8  `json:"link,omitempty"`
	// Finding names the event's finding in package expert's catalogue
	// (its stable name) with its severity, when it is one.
	Finding  FindingID `json:"finding,omitempty"`
	Severity Severity  `json:"severity,omitempty"`
}

// EventKind says what an Event is.
type EventKind string

// Event kinds.
const (
	EventFallback     EventKind = "fallback"
	EventLinkDown     EventKind = "link-down"
	EventLinkUp       EventKind = "link-up"
	EventLinkRejected EventKind = "link-rejected" // ADD_LINK rejected: the group stays as it was
	EventLGRCreated   EventKind = "lgr-created"
	EventLGRSeen      EventKind = "lgr-seen" // a group set up before the capture began, first seen
	EventLGRDeleted   EventKind = "lgr-deleted"
	EventFailover     EventKind = "failover"
	EventCounter      EventKind = "counter"
	EventSMC          EventKind = "smc"
	EventHandshakeErr EventKind = "handshake-error"
	EventExpert       EventKind = "expert" // a finding of the wire or the kernel (Event.Finding)
)

// EventSource says how an Event was learned.
type EventSource string

// Event sources.
const (
	EventFromTracepoint EventSource = "tracepoint" // the kernel's SMC tracepoints
	EventFromDiff       EventSource = "diff"       // two refreshes of the kernel's state differ
	EventFromWire       EventSource = "wire"       // decoded frames
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
	// BuffersFull counts the times an SMC buffer was found full, SMC-R
	// and SMC-D: own RMB on receive, own send buffer and the peer's RMB on
	// send (SMC_NLA_STATS_RMB_*_FULL_CNT and _FULL_PEER_CNT).
	BuffersFull uint64 `json:"buffers_full"`
}

// WireTotals are what a capture shows of the kernel's SMC statistics
// (SMC_NETLINK_GET_STATS, GET_FBACK_STATS), over every connection of the
// capture, folded ones included: each side's fallbacks, as each side's
// kernel counts them; connections whose handshake the capture shows
// succeed, which both sides count; bytes over SMC-R from the client's
// side (rx: server to client). Handshake errors, buffer usage and SMC-D
// bytes are not on the wire: they are absent, not 0.
type WireTotals struct {
	SMCRSuccess     uint64 `json:"smcr_success"`
	SMCDSuccess     uint64 `json:"smcd_success"`
	SMCRRxBytes     uint64 `json:"smcr_rx_bytes"`
	SMCRTxBytes     uint64 `json:"smcr_tx_bytes"`
	ClientFallbacks uint64 `json:"client_fallbacks"`
	ServerFallbacks uint64 `json:"server_fallbacks"`
}

// TechTotals are one technology's counters (SMC_NLA_STATS_T_*).
type TechTotals struct {
	ClientSuccess uint64 `json:"client_success"` // v1+v2 connections made as client
	ServerSuccess uint64 `json:"server_success"`
	// The same by SMC version (SMC_NLA_STATS_T_CLNT_V1_SUCC ...).
	ClientV1Success uint64 `json:"client_v1_success"`
	ClientV2Success uint64 `json:"client_v2_success"`
	ServerV1Success uint64 `json:"server_v1_success"`
	ServerV2Success uint64 `json:"server_v2_success"`
	RxBytes         uint64 `json:"rx_bytes"`
	TxBytes         uint64 `json:"tx_bytes"`
	RxCount         uint64 `json:"rx_calls"`
	TxCount         uint64 `json:"tx_calls"`
	// RxRMBUsage and TxRMBUsage are the bytes now in the buffers; nil
	// before Linux 6.10, whose statistics do not carry them.
	RxRMBUsage *uint64 `json:"rx_rmb_usage_bytes,omitempty"`
	TxRMBUsage *uint64 `json:"tx_rmb_usage_bytes,omitempty"`
	// Calls counts the socket calls SMC treats specially.
	Calls SpecialCalls `json:"special_calls"`
	// RxBuffer counts events of the receive buffers (RMBs, SMC-D DMBs),
	// TxBuffer of the send buffers (SMC_NLA_STATS_T_RX/TX_RMB_STATS).
	RxBuffer BufferEvents `json:"rx_buffer"`
	TxBuffer BufferEvents `json:"tx_buffer"`
	// Buffer sizes of the connections made (SMC_NLA_STATS_T_RX/TX_RMB_SIZE)
	// and payload sizes of the calls (SMC_NLA_STATS_T_RX/TXPLOAD_SIZE).
	RxBufferSizes  SizeHistogram `json:"rx_buffer_sizes"`
	TxBufferSizes  SizeHistogram `json:"tx_buffer_sizes"`
	RxPayloadSizes SizeHistogram `json:"rx_payload_sizes"`
	TxPayloadSizes SizeHistogram `json:"tx_payload_sizes"`
}

// SpecialCalls count socket calls and options SMC handles apart
// (SMC_NLA_STATS_T_*_CNT).
type SpecialCalls struct {
	Sendpage   uint64 `json:"sendpage"` // 0 on kernels since sendpage's removal (6.5)
	Splice     uint64 `json:"splice"`
	Cork       uint64 `json:"cork"`
	Nodelay    uint64 `json:"nodelay"`
	UrgentData uint64 `json:"urgent_data"`
}

// BufferEvents count what happened to one direction's buffers
// (SMC_NLA_STATS_RMB_*).
type BufferEvents struct {
	// SizeSmall: a buffer could not be made as large as wanted and a
	// smaller one was used; SizeSmallPeer: the peer's buffer was too small
	// for what was to be sent.
	SizeSmall     uint64 `json:"size_small"`
	SizeSmallPeer uint64 `json:"size_small_peer"`
	// Full: the own buffer was found full; FullPeer: the peer's.
	Full      uint64 `json:"full"`
	FullPeer  uint64 `json:"full_peer"`
	Reuse     uint64 `json:"reuse"`     // a free buffer of the link group reused
	Alloc     uint64 `json:"alloc"`     // a buffer allocated
	Downgrade uint64 `json:"downgrade"` // allocation failed at a size, a smaller one tried
}

// SizeHistogram counts buffers or payloads by size, in the kernel's
// buckets (SMC_NLA_STATS_PLOAD_8K .. _G_1024K): up to 8 KiB, 16 KiB, ...
// 1024 KiB, and above. JSON writes it as an object by bucket name
// (SizeBuckets), in order.
type SizeHistogram [9]uint64

// SizeBuckets name a SizeHistogram's buckets in order, one spelling for
// the screens, JSON and the exporter's size label.
var SizeBuckets = smcnl.HistogramLabels

// MarshalJSON writes {"8K":n,...,"G1024K":n}.
func (h SizeHistogram) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, n := range h {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, SizeBuckets[i])
		b = append(b, ':')
		b = strconv.AppendUint(b, n, 10)
	}
	return append(b, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON writes; unknown buckets are
// ignored.
func (h *SizeHistogram) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*h = SizeHistogram{}
	for i, name := range SizeBuckets {
		h[i] = m[name]
	}
	return nil
}

// Total is the histogram's count over every bucket.
func (h SizeHistogram) Total() uint64 {
	var n uint64
	for _, v := range h {
		n += v
	}
	return n
}

// Cursor is a CDC cursor: wraps of the ring and the offset in it (struct
// smc_diag_cursor).
type Cursor struct {
	Wrap  uint16 `json:"wrap"`
	Count uint32 `json:"count"`
}

// String writes "wrap/count", as smcdump writes a CDC's cursors.
func (c Cursor) String() string {
	return strconv.Itoa(int(c.Wrap)) + "/" + strconv.FormatUint(uint64(c.Count), 10)
}

// Cursors are a kernel socket's connection cursors and the flags of the
// last CDC each way (struct smc_diag_conninfo), with the lags that they
// imply, in bytes.
type Cursors struct {
	// RxProd is the peer's producer cursor: what it wrote into our
	// receive buffer; RxCons the peer's consumer cursor: what of ours it
	// has read (both from the last CDC received).
	RxProd Cursor `json:"rx_prod"`
	RxCons Cursor `json:"rx_cons"`
	// TxProd is our producer cursor into the peer's buffer, TxCons our
	// consumer cursor (what our application has read).
	TxProd Cursor `json:"tx_prod"`
	TxCons Cursor `json:"tx_cons"`
	// The send buffer: prepared by the application, sent to the peer,
	// and finished (the write completed).
	TxPrep Cursor `json:"tx_prep"`
	TxSent Cursor `json:"tx_sent"`
	TxFin  Cursor `json:"tx_fin"`
	// RxFlags are the flags of the last CDC received, TxFlags of the
	// last one sent.
	RxFlags CDCFlags `json:"rx_flags"`
	TxFlags CDCFlags `json:"tx_flags"`
	// RxUnread: in our receive buffer, written by the peer and not yet
	// read by our application (RxProd - TxCons).
	RxUnread uint64 `json:"rx_unread_bytes"`
	// TxUnconfirmed: written into the peer's buffer and not yet
	// confirmed read by the peer (TxProd - RxCons): smcss's "written, not
	// yet confirmed by the peer".
	TxUnconfirmed uint64 `json:"tx_unconfirmed_bytes"`
	// TxUnsent: in our send buffer, not yet written to the peer (TxPrep -
	// TxSent): the peer's buffer has no room for it.
	TxUnsent uint64 `json:"tx_unsent_bytes"`
	// UnconfirmedSince is when TxUnconfirmed last began to stand still:
	// the first refresh that saw unconfirmed bytes with the peer's
	// consumer cursor where it still is.
	UnconfirmedSince time.Time `json:"tx_unconfirmed_since,omitzero"`
}

// CDCFlags are a CDC's producer and connection-state flag bytes (struct
// smc_cdc_producer_flags, smc_cdc_conn_state_flags; decode's CDC
// constants), written as smcss writes them, "00:40".
type CDCFlags struct {
	Prod decode.CDCProdFlags
	Conn decode.CDCConnFlags
}

func (f CDCFlags) String() string { return fmt.Sprintf("%02x:%02x", uint8(f.Prod), uint8(f.Conn)) }

// Names says what the set flags mean ("peer-conn-closed"), "" for none.
func (f CDCFlags) Names() string {
	var n []string
	for _, x := range []struct {
		set  bool
		name string
	}{
		{f.Prod&decode.CDCWriteBlocked != 0, "write-blocked"},
		{f.Prod&decode.CDCUrgentPending != 0, "urgent-pending"},
		{f.Prod&decode.CDCUrgentPresent != 0, "urgent-present"},
		{f.Prod&decode.CDCConsUpdateReq != 0, "cons-update-requested"},
		{f.Prod&decode.CDCFailoverValidation != 0, "failover-validation"},
		{f.Conn&decode.CDCPeerDoneWriting != 0, "peer-done-writing"},
		{f.Conn&decode.CDCPeerConnClosed != 0, "peer-conn-closed"},
		{f.Conn&decode.CDCPeerConnAbort != 0, "peer-conn-abort"},
	} {
		if x.set {
			n = append(n, x.name)
		}
	}
	return strings.Join(n, " ")
}

// MarshalText writes the flags as String does.
func (f CDCFlags) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (f *CDCFlags) UnmarshalText(b []byte) error {
	var p, c uint8
	if _, err := fmt.Sscanf(string(b), "%02x:%02x", &p, &c); err != nil {
		return fmt.Errorf("CDC flags %q: %w", b, err)
	}
	f.Prod, f.Conn = decode.CDCProdFlags(p), decode.CDCConnFlags(c)
	return nil
}

// DMBTokens are an SMC-D socket's buffer tokens: the token of its own
// DMB, which the peer writes into, and the peer's (smcss -D's Token and
// Peer-Token).
type DMBTokens struct {
	Token     DMBToken `json:"token"`
	PeerToken DMBToken `json:"peer_token"`
}

// DMBToken is an SMC-D DMB token. It reads "0x" and 16 hex digits in every
// output, JSON included: the kernel's tokens use all 64 bits, more than a
// JSON number keeps exactly.
type DMBToken uint64

func (t DMBToken) String() string { return fmt.Sprintf("0x%016x", uint64(t)) }

// MarshalText writes the token as String does.
func (t DMBToken) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (t *DMBToken) UnmarshalText(b []byte) error {
	v, err := strconv.ParseUint(strings.TrimPrefix(string(b), "0x"), 16, 64)
	if err != nil {
		return fmt.Errorf("DMB token %q: %w", b, err)
	}
	*t = DMBToken(v)
	return nil
}

// SystemInfo is the kernel's SMC system information (SMC_NETLINK_GET_SYS_INFO),
// its EIDs (DUMP_UEID, DUMP_SEID) and PNET table (SMC_PNETID_GET).
type SystemInfo struct {
	Version uint8 `json:"version"` // highest SMC version, 2 on v2 kernels
	Release uint8 `json:"release"` // SMC v2 release: 1 is v2.1
	SMCRv2  bool  `json:"smcr_v2"` // SMC_NLA_SYS_IS_SMCR_V2
	SMCDv2  bool  `json:"smcd_v2"` // SMC_NLA_SYS_IS_ISM_V2: an SMC-D v2 device (an ISM, or the DIBS loopback)
	// LocalHost is the host name SMC v2 sends in CLC.
	LocalHost string `json:"local_host,omitempty"`
	// SEID is the system EID and whether it is used; nil when the kernel
	// reports none (it does only when SMC-D v2 capable).
	SEID *SEID `json:"seid,omitempty"`
	// UEIDs are the user EIDs: SMC v2 needs one both peers have (or the
	// SEID). nil (JSON null) when not read; empty when there are none.
	UEIDs []string `json:"ueids"`
	// PNET is the PNET table; nil when not read (Errors says why).
	PNET []PNETRow `json:"pnet"`
	// Errors say what could not be read ("ueid: ...").
	Errors []string `json:"errors,omitempty"`
}

// SEID is the system EID and whether it is in use.
type SEID struct {
	EID     string `json:"eid"`
	Enabled bool   `json:"enabled"`
}

// PNETRow is one entry of the PNET table: a netdev or a device port
// (RDMA, or DIBS such as "lo") under a PNET ID. Every entry was set by a
// user (smc_pnet); a device's PNET ID from its hardware shows on the
// device (DeviceRow, PortRow) with PNETIDByUser false.
type PNETRow struct {
	PNETID  string `json:"pnetid"`
	NetDev  string `json:"netdev,omitempty"`
	Device  string `json:"device,omitempty"`
	DevPort uint8  `json:"device_port,omitempty"`
}
