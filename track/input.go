package track

import (
	"net/netip"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/textcache"
)

// input is the tracker's view of one frame, filled from a capture.Frame by
// adapt.go. Keeping the tracker logic on this small struct keeps it
// independent of the decoders' struct layouts; it is reused per frame.
type input struct {
	number int
	// ns is the frame's time in Unix nanoseconds: written every frame,
	// and a time.Time holds a pointer (a write barrier while the
	// collector runs). ts() makes the time.Time where one is kept.
	ns int64

	isTCP bool
	tcp   tcpIn
	clc   []clcIn
	clcN  int
	eids  textcache.Cache // the CLC messages' EIDs (fillCLC)

	isRoCE bool
	roce   roceIn

	// isDump: a CDC of ANCK's dump device (decode.DumpHdr), from the
	// sender's TCP endpoint to the receiver's; its CDC is roce.cdc.
	isDump bool
	// clocked: ns is the capture clock's time already (a frame held and
	// fed later, aheadCopies), not the frame's stamp.
	clocked bool
	// isCopy: a copy of a RoCE packet the capture already holds
	// (Tracker.captureDup): counted and noted, nothing else.
	isCopy bool
	// carried: a tunnel carried the frame (a mirror session, an overlay).
	carried bool
	// snapCut: what of the frame the snap length cut that the tracker
	// needs (snapCutCLC, snapCutRoCE, snapCutSYN), 0 for nothing.
	snapCut uint8
	// skip: the capture file's damage read past before this frame
	// (capture.SkipError), nil for none.
	skip     *capture.SkipError
	snapKept int    // with snapCut: the bytes the capture kept of the frame
	snapWire int    // and those on the wire
	cutSYN   cutSYN // with snapCut snapCutSYN: the SYN's ports and sequence number
	dumpCDC  bool   // a CDC frame (else the data)
	dumpData []byte // a data frame's bytes
	dumpFrom netip.AddrPort
	dumpTo   netip.AddrPort
	// wire is the frame's length on the wire (capture.Frame.CI.Length).
	wire int
	// unread: a frame of none of the kinds above that the capture
	// damaged past reading (unreadable); with unreadAddrs, its IPv4
	// header verifies and names unreadSrc and unreadDst.
	unread               bool
	unreadAddrs          bool
	unreadSrc, unreadDst addr
	unreadMAC            [6]byte // its Ethernet destination, with unreadHasMAC
	unreadHasMAC         bool
	// unreadBTH: a datagram to RoCEv2's port whose BTH is past reading
	// (a reserved opcode) names unreadQPN and unreadPSN where its BTH's
	// DestQP and PSN sit.
	unreadBTH            bool
	unreadQPN, unreadPSN uint32
}

type tcpIn struct {
	src, dst netip.AddrPort
	seq      uint32
	ackNum   uint32 // valid with ack
	syn, ack bool
	fin, rst bool
	// oddRST: a RST with a flag no Linux reset carries (SYN, FIN, PSH,
	// URG: tcp_send_active_reset in net/ipv4/tcp_output.c and
	// tcp_v4_send_reset in net/ipv4/tcp_ipv4.c send RST, with ACK at
	// most).
	oddRST  bool
	smcOpt  bool
	payload int    // as on the wire (the IP length says), cut or not
	cut     int    // of payload, the bytes the capture's snap length left out
	hdr     int    // the TCP header's length, as its data offset says
	clcErrs int    // CLC messages of this segment that did not decode
	clcErr  string // the first one's error
	// retyped: messages that did not decode as carried, read as the
	// type their sender sends (Tracker.retype); clcErrs leaves them out.
	retyped   int
	notCLC    bool      // the stream reached application data where CLC would start (capture.Frame.NotCLC)
	away      bool      // a damaged copy shown away from where its direction's stream went on (Tracker.tcpSeq)
	flagsLost bool      // its flags were damage (damagedFlags): it may have carried a FIN
	sumBad    bool      // damaged: its TCP checksum failed (capture.Frame.TCPSum)
	sum       [2]uint16 // with sumBad: the checksum carried and the one computed
	ipSumBad  bool      // damaged: its IPv4 header checksum failed (capture.TCPSumStatus.IPSumBad)
	ipSum     [2]uint16 // with ipSumBad: the checksum carried and the one computed
	// frame is the frame being fed, while it is (damagedTuple verifies
	// its checksums when it names no connection's 4-tuple).
	frame *capture.Frame
	// namedSrc, namedDst: the endpoints the segment named, where they were
	// a damaged copy of its connection's (damagedTuple); else invalid.
	namedSrc, namedDst netip.AddrPort
}

// hidden is how many more bytes of payload than it shows s, a damaged
// copy, carried where its TCP header's length is not h, that of its
// direction's last whole segment: its data offset damaged, the IP
// length whole (less, where the header shows shorter). 0 where s is no
// damaged copy, h is not known, or the header is h's length.
func (s *tcpIn) hidden(h int) int {
	if s.damage() == "" || s.syn || h == 0 || s.hdr == h || s.payload+s.hdr-h < 0 {
		return 0
	}
	return s.hdr - h
}

// damage names the checksum that makes the segment a damaged copy, ""
// for none.
func (s *tcpIn) damage() string {
	switch {
	case s.sumBad:
		return "TCP checksum"
	case s.ipSumBad:
		return "IPv4 header checksum"
	}
	return ""
}

// mayBeDamaged reports whether s may be a damaged copy: a checksum of it
// fails, judged damage (damage) or as held where nothing judged it (no
// segment of its connection verified before: a capture whose checksums
// were never filled in fails them too, but its messages are whole).
func (s *tcpIn) mayBeDamaged() bool {
	if s.damage() != "" {
		return true
	}
	if s.frame == nil || s.frame.TCPSum.Checked {
		return false // verified: its bytes are the sender's
	}
	sum := s.frame.TCPSumAnyway()
	return sum.Damaged()
}

// ts is the frame's time.
func (in *input) ts() time.Time { return time.Unix(0, in.ns) }

// clcName names a CLC message type, "CLC Proposal".
func clcName(t uint8) string { return "CLC " + decode.CLCType(t).String() }

type clcIn struct {
	typ     decode.CLCType
	version uint8
	flag    bool // first contact (Accept/Confirm), out of sync (Decline)
	smcd    bool // Accept/Confirm chose SMC-D
	ep      Endpoint
	eid     string
	decline uint32
	offered string // Proposal: the SMC types and versions offered
	// gids: the SMC-R GIDs a Proposal offers, v1's (the header's) and
	// v2's (its v2 extension's); a client confirms the one of the version
	// chosen (smc_clc_send_proposal, smc_clc_send_confirm_accept in
	// net/smc/smc_clc.c: both the first link's GID). A first-contact v2
	// Confirm's GID list begins with it too: gids[1] (struct
	// smc_clc_msg_accept_confirm's fce GID list, smc_clc_fill_fce_v2x).
	gids     [2]netip.Addr
	maxLinks uint8
	maxConns uint8
	anck     bool // the handshake is ANCK's (decode.CLC.ANCK)
	// inside: the message lies inside the length an earlier malformed
	// message of its direction claims (capture.SwallowedError): a
	// receiver takes it in as part of that one, so it decides nothing.
	inside bool
	// malformed: a kernel of today refuses the message (its error is the
	// segment's clcErr); decoded as far as it goes (decode.CLC.Malformed).
	malformed bool
	// uncaptured: the snap length cut the message (decode.CLC.Cut) before
	// a field the handshake needs of it (an endpoint's token, rkey and
	// buffer, a Decline's reason): it is no step, as bytes the capture
	// missed.
	uncaptured bool
	// raw is the message's bytes in the frame being fed.
	raw []byte
	// sentAs: a type its sender never sends that the message carried,
	// read as typ (Tracker.retype); 0 where typ is the one it carried.
	sentAs decode.CLCType
}

type triplet struct {
	oldRKey, newRKey uint32
	newVA            uint64
}

type llcIn struct {
	typ     decode.LLCType // as sent: v1 code, or v2 (0x20 + the v1 code)
	resp    bool
	reject  bool
	all     bool
	orderly bool

	mac      [6]byte
	gid      netip.Addr
	qpn      uint32
	linkID   uint8
	uid      uint32
	uidCut   bool // CONFIRM_LINK: the snap length cut its link UID
	psn      uint32
	maxLinks uint8
	maxConns uint8
	reason   uint32
	// ANCK: ADD_LINK's init_credits on a credits link (anck), the credits
	// of ANNOUNCE_CREDITS.
	anck        bool
	initCredits uint8
	credits     uint8

	rkey    uint32
	va      uint64
	others  [2]rkeyOther
	nOthers int

	trip  [16]triplet
	nTrip int

	// listN is how many rkeys (ADD_LINK, DELETE_RKEY) or other links
	// (CONFIRM_RKEY) the message names, as far as kept (the lists
	// above), -1 when the snap length cut it before the count; the
	// lists hold only the entries the capture holds whole.
	listN int

	delRKeys [8]uint32
	nDel     int
}

type cdcIn struct {
	seq       uint16
	token     uint32
	prod      Cursor
	cons      Cursor
	prodFlags uint8
	connFlags uint8
	// credits returned (ANCK: CDC byte 26, or a write-with-immediate's),
	// when anck.
	credits uint8
	anck    bool
	// creditsCut: the snap length cut the CDC before its credits byte.
	creditsCut bool
	// noSeq: made from a write-with-immediate or a dump of one, which
	// carry no sequence number.
	noSeq bool
}

// first reports whether m is its connection's first CDC of its direction:
// a sender numbers them from 1 (tx_cdc_seq starts at 0 with the
// connection and smc_cdc_msg_send adds 1 before each, net/smc/smc_cdc.c).
func (m *cdcIn) first() bool { return !m.noSeq && m.seq == 1 }

// rwwiIn is ANCK's write-with-immediate (decode.RWWI).
type rwwiIn struct {
	token      uint8
	op         decode.RWWIOp
	diffCons   uint32
	credits    uint8
	hasCredits bool
	prodFlags  uint8
	connFlags  uint8
}

// CDC flag bits and RC opcodes the tracker distinguishes, as plain bytes
// for the input it copies out of each frame.
const (
	cdcWriteBlocked  = uint8(decode.CDCWriteBlocked)
	cdcUrgentPending = uint8(decode.CDCUrgentPending)
	cdcUrgentPresent = uint8(decode.CDCUrgentPresent)
	cdcConsUpdReq    = uint8(decode.CDCConsUpdateReq)
	cdcFailover      = uint8(decode.CDCFailoverValidation)

	cdcDoneWriting = uint8(decode.CDCPeerDoneWriting)
	cdcConnClosed  = uint8(decode.CDCPeerConnClosed)
	cdcAbort       = uint8(decode.CDCPeerConnAbort)

	opSendFirst     = uint8(decode.OpSendFirst)
	opSendOnly      = uint8(decode.OpSendOnly)
	opSendOnlyInv   = uint8(decode.OpSendOnlyInv)
	opWriteFirst    = uint8(decode.OpWriteFirst)
	opWriteMiddle   = uint8(decode.OpWriteMiddle)
	opWriteLast     = uint8(decode.OpWriteLast)
	opWriteLastImm  = uint8(decode.OpWriteLastImm)
	opWriteOnly     = uint8(decode.OpWriteOnly)
	opWriteOnlyImm  = uint8(decode.OpWriteOnlyImm)
	opAck           = uint8(decode.OpAcknowledge)
	opAtomicAck     = uint8(decode.OpAtomicAcknowledge)
	opReadRespFirst = uint8(decode.OpReadResponseFirst)
	opReadRespOnly  = uint8(decode.OpReadResponseOnly)
)

type roceIn struct {
	// key is the frame's link direction on the wire: IP addresses (the
	// GRH's GIDs for RoCEv1) and BTH DestQP. Kept whole, read in place:
	// copied out it was read back wider than fill wrote it, which stalls
	// the CPU (store forwarding) on every RoCE frame.
	key    qpKey
	opcode uint8
	psn    uint32
	ackReq bool

	hasRETH bool
	va      uint64
	rkey    uint32
	dmaLen  uint32
	// data is a WRITE's payload (BTH.Data), only with Options.Stream;
	// dataLen its length on the wire, always; dataCut: the snap length
	// cut it (data is shorter).
	data    []byte
	dataLen uint32
	dataCut bool

	hasAETH  bool
	syndrome uint8
	msn      uint32

	malformed bool      // a SEND on an SMC-R link that is no valid LLC or CDC
	icrcOK    bool      // the ICRC was checked and matches, and the IPv4 header checksum (capture.ICRCStatus)
	icrcBad   bool      // the ICRC was checked and does not match, or ipSumBad (capture.ICRCStatus)
	ipSumBad  bool      // the ICRC matches, the IPv4 header checksum fails (capture.ICRCStatus.IPSumBad)
	ipSum     [2]uint16 // with ipSumBad: the checksum carried and the one computed
	lengthBad bool      // an IP or UDP length claims more than the frame holds (capture.Frame.LengthBad)
	whyBad    error     // with malformed or lengthBad: the decoder's error (offset and field)
	// icrcCut: the snap length cut the ICRC (not checked): a damaged
	// DestQP or PSN is not seen as damage (damagedQP places the packet by
	// the rest), and with ipSumBad (its IPv4 header's checksum, filled
	// in, fails; icrcBad too) no ICRC vouches for its addresses.
	// cutSumOK: the ICRC cut, that checksum, filled in, verifies (as
	// icrcOK says of the direction's checksums).
	icrcCut, cutSumOK bool
	// shownLate: the responder's ACK of it came before it (reordered):
	// the capture put it late, no sender sent it again.
	shownLate bool
	// icrcGot, icrcWant: the frame's ICRC and the one computed (icrcBad)
	icrcGot, icrcWant uint32
	hasCDC            bool
	cdc               cdcIn
	hasRWWI           bool
	rwwi              rwwiIn
	hasLLC            bool
	llc               llcIn // 400 bytes most frames do not touch
	// mended: one byte explains the ICRC failing (mend, mendRoCE); the
	// key and PSN are the sender's. mendWhole: the content is too (one
	// byte mended outside it, or only a length damaged: LengthMend).
	// Last, with llc: only damaged frames read them.
	mended, mendWhole bool
	// zeroed: the ICRC verifies with the CDC or LLC message's reserved
	// bytes zeroed, as its sender sent them (zeroedSMC): the damage was there
	// alone (mendWhole with it).
	zeroed    bool
	mend      decode.ICRCMend
	mendField string // what the mended byte is part of
	// mendAs: the ICRC verifies with the key fields and PSN its link
	// direction expected (mendExpected), named here, in place of those
	// the frame holds (and with mend, where mended).
	mendAs string
	// opMended: the opcode is the one sent, the capture's copy having
	// damaged it (mendOpcode): the frame's layers after the BTH are not
	// the packet's.
	opMended bool
	// ipHdrOK: with icrcBad or lengthBad, an IPv4 header whose checksum
	// verifies holds the addresses its sender gave (the ICRC may fail
	// for the rest).
	ipHdrOK bool
	// dstMAC is the frame's Ethernet destination (hasMAC): which
	// direction of a link an unreadable frame likely was (unreadRoCE).
	dstMAC [6]byte
	hasMAC bool
}

// isRequest reports whether an RC opcode is a requester packet (carries a
// PSN of the sender's sequence) rather than a response.
func isRequest(op uint8) bool {
	if op>>5 != 0 { // not RC
		return false
	}
	switch {
	case op == opAck || op == opAtomicAck:
		return false
	case op >= opReadRespFirst && op <= opReadRespOnly:
		return false
	}
	return op <= opSendOnlyInv
}

// FieldDemand is what a reader feeding a tracker must compute of every
// frame beyond its layers (capture.Reader.SetFieldDemand, added to what
// the output reads): the ICRC verdict. The receiving RNIC drops a packet
// whose ICRC does not match, so the tracker must not follow it; a reader
// that skipped the check would have it follow a corrupted CDC's cursors.
func FieldDemand() []decode.FieldID { return []decode.FieldID{decode.FieldICRCOK} }
