// Package expert is smcscope's one catalogue of findings: what a person
// troubleshooting SMC would otherwise dig out of the frames and counters
// by hand, each with a stable name, a severity as in Wireshark's Expert
// Information (chat, note, warn, error), a one-line meaning and what to
// check next.
//
// The tracker (package track) finds the wire's findings in its typed
// model; smctop (package monitor) finds the kernel's in its statistics
// and counters. Every surface reads the definitions here: smcdump's -z
// smc,expert and smc.expert.* fields, the capture browser's expert pane,
// smctop's events and smc_expert_findings_total.
//
// The names are a contract (filters, dashboards and alerts use them):
// a finding is never renamed, only added.
package expert

import "strings"

// Severity is how much a finding deserves attention, Wireshark's scale
// without its "comment" level (a finding is never just a remark).
type Severity uint8

// Severities, in increasing order, so that "severity >= warn" selects
// warnings and errors.
const (
	SeverityNone Severity = iota
	Chat                  // usual protocol workflow worth knowing (urgent data)
	Note                  // notable but not a problem in itself (fallback, slow handshake)
	Warn                  // possible problem (retransmissions, a link lost, a full buffer)
	Error                 // a serious problem (malformed message, bad ICRC, aborted connection)
)

var severityNames = [...]string{"", "chat", "note", "warn", "error"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "severity?"
}

// ParseSeverity reads a severity name ("warn"; "warning" as Wireshark
// spells it is accepted too).
func ParseSeverity(name string) (Severity, bool) {
	switch strings.ToLower(name) {
	case "chat":
		return Chat, true
	case "note":
		return Note, true
	case "warn", "warning":
		return Warn, true
	case "error":
		return Error, true
	}
	return SeverityNone, false
}

// Object is what a finding is about.
type Object uint8

// Objects a finding names.
const (
	ObjectConn    Object = iota + 1 // an SMC connection (its TCP connection)
	ObjectLink                      // an SMC-R link (an RC queue pair pair)
	ObjectLGR                       // a link group
	ObjectCapture                   // frames tied to no connection or link
	ObjectHost                      // a host's SMC statistics (kernel)
	ObjectPort                      // an RNIC port (kernel)
)

var objectNames = [...]string{"", "connection", "link", "link group", "capture", "host", "port"}

func (o Object) String() string {
	if int(o) < len(objectNames) {
		return objectNames[o]
	}
	return "object?"
}

// Source says where a finding is found.
type Source uint8

// Sources of findings.
const (
	FromWire   Source = iota + 1 // decoded frames (smcdump, the browser, smctop -i/-r)
	FromKernel                   // the kernel's statistics and the RNICs' counters (smctop)
	// FromFleet: facts of several hosts joined (smctop --prometheus); no
	// one host's exporter counts these.
	FromFleet
)

func (s Source) String() string {
	switch s {
	case FromKernel:
		return "kernel"
	case FromFleet:
		return "fleet"
	}
	return "wire"
}

// ID is a finding's number in the catalogue; Def(id).Name is its stable
// name. Numbers may change between versions, names do not.
type ID uint8

// The findings. Wire findings first, then the kernel's.
const (
	None ID = iota
	Fallback
	HandshakeSlow
	HandshakeFailed
	FirstLinkUnconfirmed
	NoRedundancy
	Asymmetric
	Failover
	LinkDeleted
	LGRDeleted
	LLCUnanswered
	TestLinkUnanswered
	LLCRetransmitted
	WriteBlocked
	ConsumerStall
	Urgent
	ConnAbort
	ClosedWithoutClose
	SeqGap
	SeqDup
	CursorBackwards
	CursorPastRMBE
	RCRetransmission
	PSNGap
	NAK
	RNRNAK
	BadICRC
	BadLength
	BadTCPSum
	CaptureDuplicate
	OptionEchoed
	Malformed
	NotCaptured
	CaptureReordered
	TimeBackwards
	SnapCut
	EndedPending
	AddedUnconfirmed
	CreditsStarved
	CreditsDecline
	BufferFull
	DumpDamaged
	CaptureDamaged
	HandshakeErrors
	FallbackBurst
	PortErrors
	CloseStuck
	TxUnconfirmed
	BufferSmall
	EIDMismatch
	BadIPSum
	BadTCPIPSum
	CaptureCopyDamaged
	MirrorLost
	CaptureReplayed
	CLCWrongSender
	CaptureUnreadable
	numIDs
)

// Def is one finding of the catalogue.
type Def struct {
	ID       ID
	Name     string // stable: "smc.cdc.seq_gap"
	Severity Severity
	// Group sorts the finding as Wireshark's expert groups do. sequence,
	// protocol, malformed, checksum and response are groups of Wireshark's
	// (PI_SEQUENCE, PI_PROTOCOL, PI_MALFORMED, PI_CHECKSUM,
	// PI_RESPONSE_CODE in epan/proto.h); performance and state are
	// smcscope's own, for findings Wireshark has no group for (a slow
	// handshake or reader, a link group without redundancy).
	Group   string
	Source  Source
	Object  Object
	Meaning string // one line: what it says
	Check   string // what to look at next
}

// defs is the catalogue, indexed by ID.
var defs = [numIDs]Def{
	Fallback: {Name: "smc.fallback", Severity: Note, Group: "protocol", Object: ObjectConn,
		Meaning: "the connection fell back to TCP: a CLC Decline, or a peer without the SMC option",
		Check:   "the reason and who declined (smcdump -z smc,decline); a decline code names the missing device, EID or setting"},
	HandshakeSlow: {Name: "smc.handshake.slow", Severity: Note, Group: "performance", Object: ObjectConn,
		Meaning: "the CLC handshake took longer than 500 ms from Proposal to Confirm or Decline",
		Check:   "a busy peer or link group (a failover in progress), RNIC setup; short connections pay this on every connect"},
	HandshakeFailed: {Name: "smc.handshake.failed", Severity: Error, Group: "protocol", Object: ObjectConn,
		Meaning: "the SMC attempt ended without SMC and without a fallback: a malformed CLC message or a first link never confirmed",
		Check:   "the connection's detail in smc,conns; the peer's kernel log (EPROTO, link setup timeout)"},
	CLCWrongSender: {Name: "smc.clc.wrong_sender", Severity: Warn, Group: "protocol", Object: ObjectConn,
		Meaning: "a CLC message of a type its sender never sends (an Accept from the client, a Proposal or Confirm from the server): a receiver refuses a type other than the one it awaits, so where the handshake goes on the capture's copy is not what was sent (its type byte damaged); an Accept and a Confirm share one layout, and one sent as the other is followed as its sender's, a Proposal from the server is no step",
		Check:   "the frame's CLC type against the handshake's order and what follows it (the receiver's Decline, or the link coming up); the capture (a damaged copy, a capture point that rewrites packets), else the peer's SMC stack"},
	FirstLinkUnconfirmed: {Name: "smc.link.first_unconfirmed", Severity: Error, Group: "sequence", Object: ObjectLink,
		Meaning: "a first contact's link never completed its CONFIRM_LINK exchange",
		Check:   "RoCE reachability between the GIDs (routing, MTU, PFC), the RNIC's state; the client declines with TIMEOUT_CL"},
	NoRedundancy: {Name: "smc.lgr.no_redundancy", Severity: Warn, Group: "state", Object: ObjectLGR,
		Meaning: "the link group runs on one link although both sides allow two: one port failure ends every connection on it",
		Check:   "a second RoCE device or port with the same PNET ID on each host; why ADD_LINK was rejected"},
	Asymmetric: {Name: "smc.link.asymmetric", Severity: Note, Group: "state", Object: ObjectLink,
		Meaning: "a link added that shares one side's GID with another link of its group: only the other side has redundancy",
		Check:   "the host with one usable RoCE port (smcr linkgroup link-show: ASYML/ASYMP)"},
	Failover: {Name: "smc.failover", Severity: Warn, Group: "sequence", Object: ObjectConn,
		Meaning: "the connection moved to another link of its group (failover-validation CDC)",
		Check:   "why the old link went (DELETE_LINK reason, RNIC port and cable, RoCE error counters)"},
	LinkDeleted: {Name: "smc.link.deleted", Severity: Warn, Group: "sequence", Object: ObjectLink,
		Meaning: "a DELETE_LINK removed one link of a group, with its reason",
		Check:   "the reason (lost path: the port or path failed); the group's other links carry its connections"},
	LGRDeleted: {Name: "smc.lgr.deleted", Severity: Note, Group: "sequence", Object: ObjectLGR,
		Meaning: "a DELETE_LINK of every link ended the link group, with its reason",
		Check:   "the reason: idle timeout and module unload are orderly; a lost path is not"},
	LLCUnanswered: {Name: "smc.llc.unanswered", Severity: Warn, Group: "response", Object: ObjectLink,
		Meaning: "an LLC request (CONFIRM_LINK, ADD_LINK, CONFIRM_RKEY, DELETE_RKEY) got no response within 2 s (SMC_LLC_WAIT_TIME)",
		Check:   "the peer's LLC processing and the link (RC retransmissions, NAKs); Linux then takes the link down"},
	TestLinkUnanswered: {Name: "smc.llc.test_link_unanswered", Severity: Warn, Group: "response", Object: ObjectLink,
		Meaning: "a TEST_LINK keepalive got no response within 2 s: the peer or the path stopped answering",
		Check:   "the peer host and its RNIC, the RoCE path; a DELETE_LINK with reason lost path follows"},
	LLCRetransmitted: {Name: "smc.llc.retransmitted", Severity: Warn, Group: "sequence", Object: ObjectLink,
		Meaning: "an LLC message sent again on the same PSN: the RC transport retransmitted it, it is not a new request",
		Check:   "the link's RC retransmissions and NAKs: the first copy or its ACK was lost"},
	WriteBlocked: {Name: "smc.cdc.write_blocked", Severity: Warn, Group: "performance", Object: ObjectConn,
		Meaning: "the sender has data but no room: the peer's RMBE is full (a slow reader), for the episode's duration",
		Check:   "the receiving application's reads; a larger RMB (net.smc.rmem) if the reader is fast but bursty"},
	ConsumerStall: {Name: "smc.cdc.consumer_stall", Severity: Warn, Group: "performance", Object: ObjectConn,
		Meaning: "the producer cursor got a whole RMBE ahead of the peer's consumer cursor: the receiver stopped consuming",
		Check:   "the receiving application (not reading, blocked); its socket's receive queue in smcss -d"},
	Urgent: {Name: "smc.cdc.urgent", Severity: Chat, Group: "protocol", Object: ObjectConn,
		Meaning: "urgent (out-of-band) data was sent",
		Check:   "the application's MSG_OOB use; it is rare and some peers mishandle it"},
	ConnAbort: {Name: "smc.conn.abort", Severity: Error, Group: "sequence", Object: ObjectConn,
		Meaning: "a side aborted the connection (peer_conn_abort): a reset, not an orderly close",
		Check:   "the aborting side's application (killed, RST) or its kernel (link group terminated)"},
	ClosedWithoutClose: {Name: "smc.conn.closed_without_close", Severity: Warn, Group: "sequence", Object: ObjectConn,
		Meaning: "the TCP connection of an SMC-R connection ended while a side had not closed its SMC side (no peer_conn_closed or abort CDC)",
		Check:   "the side that sent FIN or RST first: its link group may have been terminated under it"},
	SeqGap: {Name: "smc.cdc.seq_gap", Severity: Warn, Group: "sequence", Object: ObjectConn,
		Meaning: "CDC sequence numbers were skipped: CDCs missing from the capture or never sent",
		Check:   "capture drops (the RC PSNs of the link), a failover between links"},
	SeqDup: {Name: "smc.cdc.seq_dup", Severity: Warn, Group: "sequence", Object: ObjectConn,
		Meaning: "a CDC repeated a sequence number on a new PSN: the receiver ignores it",
		Check:   "the sender's kernel; a failover that resent CDCs"},
	CursorBackwards: {Name: "smc.cdc.cursor_backwards", Severity: Error, Group: "protocol", Object: ObjectConn,
		Meaning: "a producer or consumer cursor moved backwards, or moved in a way that cannot be followed",
		Check:   "the sender's kernel version; a capture joined mid-stream without the RMBE size"},
	CursorPastRMBE: {Name: "smc.cdc.cursor_past_rmbe", Severity: Error, Group: "protocol", Object: ObjectConn,
		Meaning: "a cursor's byte count is at or beyond the RMBE size the CLC handshake announced",
		Check:   "the sender's kernel: a cursor past the buffer corrupts the peer's data"},
	RCRetransmission: {Name: "roce.rc.retransmission", Severity: Warn, Group: "sequence", Object: ObjectLink,
		Meaning: "RC request packets were sent again on a PSN seen before (transport retransmissions)",
		Check:   "loss on the RoCE path: PFC/ECN configuration, the switch, local_ack_timeout_err on the sender's RNIC"},
	PSNGap: {Name: "roce.rc.psn_gap", Severity: Warn, Group: "sequence", Object: ObjectLink,
		Meaning: "the PSN jumped ahead and the wire shows the loss (the responder's PSN sequence error NAK, or the missing PSN sent again): packets lost on the path",
		Check:   "out_of_sequence and packet_seq_err on the receiver's RNIC; PFC/ECN and the switch on the path"},
	NAK: {Name: "roce.rc.nak", Severity: Warn, Group: "response", Object: ObjectLink,
		Meaning: "the responder sent a NAK (PSN sequence error, invalid request, access or operational error)",
		Check:   "the NAK code: a sequence error means loss on the path, an access error an rkey the peer does not know"},
	RNRNAK: {Name: "roce.rc.rnr_nak", Severity: Warn, Group: "response", Object: ObjectLink,
		Meaning: "the responder had no receive buffer posted (receiver not ready) and the sender must wait",
		Check:   "the receiver's CPU and net.smc.smcr_max_recv_wr; rnr_nak_retry_err on the sender's RNIC"},
	BadICRC: {Name: "roce.icrc.bad", Severity: Error, Group: "checksum", Object: ObjectLink,
		Meaning: "the RoCE invariant CRC does not match: the receiving RNIC drops the packet",
		Check:   "corruption on the path (cables, NIC offloads); a capture point that rewrites packets"},
	BadLength: {Name: "roce.length.bad", Severity: Error, Group: "malformed", Object: ObjectLink,
		Meaning: "a RoCE packet whose IP or UDP length claims more bytes than the frame holds: the receiver drops it, and its ICRC cannot be checked",
		Check:   "the frame's frame.error (field and lengths); corruption on the path, or a damaged capture"},
	BadTCPSum: {Name: "tcp.checksum.bad", Severity: Warn, Group: "checksum", Object: ObjectConn,
		Meaning: "a segment of a connection followed as SMC from its SYN (its handshake, or its TCP after it: a fallback's data, a FIN, an ACK) whose TCP checksum does not match where the direction's others do: the receiving host dropped it, or the capture's copy is damaged; its CLC message, if any (malformed or not), is not the sender's to answer for",
		Check:   "a copy sent again after it (corruption on the path: cables, NIC), else the capture (a damaged file, a capture point that rewrites packets)"},
	CaptureDuplicate: {Name: "roce.capture.duplicate", Severity: Note, Group: "sequence", Object: ObjectCapture,
		Meaning: "the capture holds the same RoCE packet (or ANCK dump-device frame, or TCP segment) twice within 1 ms with no NAK (CDC) between, or within 50 ms where the two came by different paths (one carried by a mirror session or an overlay), or the time two merged captures are apart (told by a handshake's segment held twice while its connection runs): a copy the capture made (a mirror of both directions, a mirror session that delivers to the capture point, two hosts' captures merged, tcpdump -i any of loopback), not a retransmission (followed once)",
		Check:   "the capture setup: a mirror session copying both directions of a port or delivering to a host whose own traffic is captured too, a capture on a bond and its member or on any interface, or captures of both hosts merged; editcap -D drops adjacent copies"},
	OptionEchoed: {Name: "smc.option.echoed_no_clc", Severity: Warn, Group: "protocol", Object: ObjectConn,
		Meaning: "both SYNs carried the SMC option but no CLC message followed: a middlebox echoed the option for a peer that does not speak SMC",
		Check:   "middleboxes on the path; disable SMC for that destination (eBPF handshake policy)"},
	Malformed: {Name: "smc.malformed", Severity: Error, Group: "malformed", Object: ObjectCapture,
		Meaning: "an SMC message (CLC, LLC or CDC) that does not decode",
		Check:   "the frame's frame.error (offset and field); the sender's kernel or a damaged capture"},
	NotCaptured: {Name: "roce.rc.not_captured", Severity: Note, Group: "sequence", Object: ObjectLink,
		Meaning: "request packets the capture never showed that the responder took (its ACK or NAK covers them) or the requester went on past without sending again (up to the capture's end), TCP bytes a peer's ACK covers, CDCs a dump device's sequence skips: the capture point missed them, the network did not lose them",
		Check:   "the capture point (a mirror port that drops, tcpdump -B, a full ring); nothing follows from the missing frames' content"},
	DumpDamaged: {Name: "smc.dump.damaged", Severity: Warn, Group: "malformed", Object: ObjectConn,
		Meaning: "a CDC frame of ANCK's dump device that says what no sender does (a sequence number behind the direction's last, or a skip the next CDC goes back from; a cursor count past the RMBE, more than an RMBE for one CDC, or one the next CDC goes back from; an abort the sender went on after, a close it wrote after): the capture's copy is damaged (dump frames carry no checksum to drop it by); not followed, or taken back",
		Check:   "the capture file (its storage, a tool that rewrote it): the dump device's frames are made on the host, not carried by a network"},
	CaptureDamaged: {Name: "smc.capture.damaged", Severity: Warn, Group: "malformed", Object: ObjectCapture,
		Meaning: "the capture file is damaged before this frame: a record header whose lengths no record has (or after which no record follows), and the bytes up to the next record that could be found, which were skipped; the frames in them are missing from everything after, as frames the capture point missed are (a pcapng block that carries no frame and was read all the same, an option that cannot be read taken as its default, and a classic pcap file header with a version no writer makes, a magic one bit off pcap's or a link type its frames are not, whose records follow it, are noted too, with no frame missing)",
		Check:   "the file (its storage, a copy cut short or joined, the tool that wrote it); the detail's file offsets (a hex viewer); the frames after are read as they are"},
	CaptureReplayed: {Name: "smc.capture.replayed", Severity: Note, Group: "sequence", Object: ObjectConn,
		Meaning: "the connection's SYN is one the capture held before, byte for byte (its sequence number, IPv4 identification and TCP timestamp), after that connection ended: no host sends it again, so the capture holds the same traffic twice (a capture played again, tcpreplay or bench/mkbig's rounds; two hosts' captures merged with their clocks further apart than the connection lasted); followed as a connection of its own",
		Check:   "how the capture was made: a replay, or captures merged (the time apart the detail gives is then the clocks' offset); merge with the clocks aligned (editcap -t) or read each host's capture alone"},
	TimeBackwards: {Name: "smc.capture.time_backwards", Severity: Warn, Group: "sequence", Object: ObjectCapture,
		Meaning: "a frame's time is more than a second before the frame's before it: captures joined end to end (mergecap -a) or a capture host's clock stepped back; the tracker's clock stands there (the time between that frame and the one before is not known)",
		Check:   "merge captures by time (mergecap without -a); the capture host's clock (NTP steps); the frames' order (editcap -S sorts by time)"},
	SnapCut: {Name: "smc.capture.snap_cut", Severity: Warn, Group: "sequence", Object: ObjectCapture,
		Meaning: "the capture's snap length cut SMC frames before what they say (a SYN's options, where the SMC option would be; a CLC message; a RoCE header; the 44-byte LLC or CDC message of a SEND): their content is not in the capture, and the connections, links and counts that rest on them are incomplete",
		Check:   "capture again with the whole frames (tcpdump -s 0, its default; 128 bytes keep every LLC step and CDC of IPv4 RoCEv2 but no CLC message)"},
	CaptureReordered: {Name: "roce.capture.reordered", Severity: Note, Group: "sequence", Object: ObjectLink,
		Meaning: "a request the capture showed out of the order its responder took it (after the responder's ACK of it, or after a later request that was then acknowledged with no NAK or resend), too soon for a timeout: the capture point's order, not the network's; followed as the original, not as a retransmission or loss",
		Check:   "the capture point: a multi-queue NIC or a tap feeding each direction apart, a mirror session whose copies come behind the packets it does not see; timestamps of the two directions are then not comparable to the microsecond"},
	EndedPending: {Name: "smc.capture.ended_pending", Severity: Note, Group: "sequence", Object: ObjectConn,
		Meaning: "the capture ended while an SMC step was still pending (handshake, link confirmation, LLC response): what came next is not in it",
		Check:   "the detail: the last step seen, what was expected next and what the kernel does after its timeout; a longer capture"},
	AddedUnconfirmed: {Name: "smc.link.added_unconfirmed", Severity: Warn, Group: "sequence", Object: ObjectLink,
		Meaning: "a link added to its group (ADD_LINK accepted) never completed its CONFIRM_LINK exchange on the new link within 2 s: the group stays without it",
		Check:   "the new link's path: RoCE reachability between its GIDs (routing, MTU, PFC), the second RNIC port; a DELETE_LINK with reason lost path follows"},
	CreditsStarved: {Name: "smc.credits.starved", Severity: Warn, Group: "performance", Object: ObjectLink,
		Meaning: "ANCK (Alibaba Cloud Linux): a sender had no receive-queue credits left for 10 ms or more; it could send no CDC, LLC or write with immediate until the peer returned some",
		Check:   "the peer's receive side (a slow or busy CPU reposting receive WQEs), init_credits in the CLC Accept/Confirm, ANNOUNCE_CREDITS and the credits returned in CDCs or immediates"},
	CreditsDecline: {Name: "smc.credits.decline", Severity: Warn, Group: "protocol", Object: ObjectConn,
		Meaning: "ANCK (Alibaba Cloud Linux): the connection fell back because the client could not announce receive-queue credits on the link (SMC_CLC_DECL_CREDITSERR)",
		Check:   "the link group's link (ANNOUNCE_CREDITS unanswered or failed to send), the RNIC's receive queue"},
	BufferFull: {Name: "smc.kernel.buffer_full", Severity: Warn, Group: "performance", Source: FromKernel, Object: ObjectHost,
		Meaning: "the kernel counted SMC buffers full, or its buffer usage is near the buffers allocated",
		Check:   "slow readers among the host's SMC sockets; net.smc.rmem and net.smc.wmem"},
	HandshakeErrors: {Name: "smc.kernel.handshake_errors", Severity: Warn, Group: "protocol", Source: FromKernel, Object: ObjectHost,
		Meaning: "the kernel's count of SMC handshake errors rose",
		Check:   "the fallback reasons (smctop's overview), the peers' configuration, RNIC state"},
	FallbackBurst: {Name: "smc.kernel.fallback_burst", Severity: Warn, Group: "protocol", Source: FromKernel, Object: ObjectHost,
		Meaning: "ten or more connections fell back to TCP between two refreshes",
		Check:   "the reasons that rose; a peer or middlebox that changed, an exhausted link group"},
	PortErrors: {Name: "roce.port.errors", Severity: Warn, Group: "sequence", Source: FromKernel, Object: ObjectPort,
		Meaning: "an error counter of an RNIC port that carries SMC links is moving",
		Check:   "the counter's name (out_of_sequence, local_ack_timeout_err, rnr_nak_retry_err ...): loss or a slow responder on the path"},
	CloseStuck: {Name: "smc.kernel.close_stuck", Severity: Warn, Group: "state", Source: FromKernel, Object: ObjectConn,
		Meaning: "a socket has stayed in a closing state (PEERCLOSEWAIT, APPCLOSEWAIT, APPFINCLOSEWAIT, PEERFINCLOSEWAIT, PEERABORTWAIT, PROCESSABORT) for over a minute",
		Check:   "the side that has not closed: an application that keeps the socket open after the peer closed (APPCLOSEWAIT*), or a peer that never closes its side (PEERCLOSEWAIT*)"},
	TxUnconfirmed: {Name: "smc.kernel.tx_unconfirmed", Severity: Warn, Group: "performance", Source: FromKernel, Object: ObjectConn,
		Meaning: "data written into the peer's buffer has stood unread for over 30 s: the peer's consumer cursor did not move",
		Check:   "the peer's application (not reading, blocked) and the peer host; smcss -d on the peer shows its unread bytes"},
	BufferSmall: {Name: "smc.kernel.buffer_small", Severity: Note, Group: "performance", Source: FromKernel, Object: ObjectHost,
		Meaning: "the kernel made SMC buffers smaller than wanted, or found the peer's too small (its size_small counters rose)",
		Check:   "memory for SMC buffers (the host's free memory), net.smc.rmem and net.smc.wmem, the buffer size histograms (smctop's statistics)"},
	EIDMismatch: {Name: "smc.fleet.eid_mismatch", Severity: Warn, Group: "protocol", Source: FromFleet, Object: ObjectHost,
		Meaning: "a host declined another and the two share no UEID and no SEID in use: SMC v2 cannot be agreed between them",
		Check:   "smcr ueid show on both hosts (smctop's system view): add the same UEID to both, or have both use the SEID"},
	BadIPSum: {Name: "roce.ip_checksum.bad", Severity: Error, Group: "checksum", Object: ObjectLink,
		Meaning: "a RoCE packet whose IPv4 header checksum fails where its direction's others verify, in a field the ICRC leaves out (type of service, TTL, the checksum): the receiver drops the packet",
		Check:   "corruption on the path (cables, a device that rewrites the TTL or DSCP without the checksum); a capture point that rewrites packets"},
	BadTCPIPSum: {Name: "tcp.ip_checksum.bad", Severity: Warn, Group: "checksum", Object: ObjectConn,
		Meaning: "a segment of a connection followed as SMC (its handshake, or its TCP after it) whose IPv4 header checksum fails where the direction's others verify, or its sender's did (damage in a field the TCP checksum leaves out: type of service, identification, TTL; or in an address, when the segment names no connection seen): the receiving host dropped it, or the capture's copy is damaged; its CLC message, if any, is not the sender's to answer for",
		Check:   "a copy sent again after it (corruption on the path: cables, a device that rewrites the TTL or DSCP without the checksum), else the capture (a damaged file, a capture point that rewrites packets)"},
	CaptureCopyDamaged: {Name: "roce.capture.damaged", Severity: Warn, Group: "checksum", Object: ObjectLink,
		Meaning: "a RoCE request whose copy in the capture fails its ICRC or IPv4 header checksum, or claims more bytes than it holds, that the responder took all the same (its ACK or NAK covers the PSN, with no copy sent again): the capture's copy is damaged, not the packet the network carried; its content is followed where it is the sender's (one byte that explains the ICRC failing, mended; addresses, DestQP or PSN damaged, with which the ICRC verifies as the link expected them; or the damage in a field the ICRC leaves out), else missing as a request the capture point missed",
		Check:   "the capture point (a mirror session or tap that rewrites the TTL or DSCP of its copies, a faulty capture NIC) or the file (its storage, a tool that rewrote it); not the path: the receiver took the packet"},
	CaptureUnreadable: {Name: "smc.capture.unreadable", Severity: Warn, Group: "malformed", Object: ObjectCapture,
		Meaning: "TCP bytes or RoCE request PSNs a peer acknowledged (or whose loss its NAK shows) that the capture shows nowhere else, in whose place it holds frames damaged past reading (an EtherType, IP header or TCP header no sender makes, an IPv4 header checksum that fails; a RoCE packet whose ICRC fails on no link's queue pair, or whose BTH names the PSN with an opcode no sender uses) whose lengths fit them: the capture's copies are damaged, not missed by the capture point nor lost before it; what they held is not known",
		Check:   "the capture file (its storage, a tool that rewrote it) or the capture point (a faulty capture NIC); the frames it is raised on, in hex (smcdump -x)"},
	MirrorLost: {Name: "smc.capture.mirror_lost", Severity: Warn, Group: "sequence", Object: ObjectCapture,
		Meaning: "a mirror session's GRE sequence numbers (ERSPAN II and III number every frame they mirror) skip: frames the switch mirrored that the capture does not hold, whatever they carried (lost between the switch and the collector, dropped by the capture host, left out by a capture filter or a tool that thinned the file); what is missing there is the capture's, not the network's",
		Check:   "the path from the switch to the collector (its drops, the collector's NIC and tcpdump -B), the capture filter; the session's rate against the mirror port's"},
}

func init() {
	for i := range defs {
		defs[i].ID = ID(i)
		if defs[i].Source == 0 {
			defs[i].Source = FromWire
		}
	}
}

// Lookup returns the finding's definition; ok is false for None and for
// a number outside the catalogue.
func Lookup(id ID) (Def, bool) {
	if id == None || id >= numIDs {
		return Def{}, false
	}
	return defs[id], true
}

// Get returns id's definition (the zero Def for an unknown one).
func (id ID) Def() Def {
	d, _ := Lookup(id)
	return d
}

// String is the finding's stable name.
func (id ID) String() string {
	if d, ok := Lookup(id); ok {
		return d.Name
	}
	return "expert?"
}

// Severity is the finding's severity.
func (id ID) Severity() Severity {
	if id == None || id >= numIDs {
		return SeverityNone
	}
	return defs[id].Severity
}

// ByName finds a finding by its stable name.
func ByName(name string) (ID, bool) {
	for i := ID(1); i < numIDs; i++ {
		if defs[i].Name == name {
			return i, true
		}
	}
	return None, false
}

// All lists the catalogue in ID order.
func All() []Def {
	return append([]Def(nil), defs[1:]...)
}

// Count is how many findings the catalogue has (IDs 1..Count).
const Count = int(numIDs) - 1
