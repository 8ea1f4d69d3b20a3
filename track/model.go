package track

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/smcscope/smcscope/decode"
)

// Dir is the direction of a frame relative to a connection or link. The
// server is the link-group owner (it sends CONFIRM_LINK and ADD_LINK
// requests). For objects built from RoCE traffic alone the roles are not
// known: DirC2S then means "the first direction seen" (shown as A->B).
type Dir uint8

const (
	DirC2S Dir = iota // client -> server
	DirS2C            // server -> client
)

func (d Dir) String() string {
	if d == DirC2S {
		return "C->S"
	}
	return "S->C"
}

// Reverse returns the other direction.
func (d Dir) Reverse() Dir { return d ^ 1 }

// Outcome is what became of an SMC connection attempt.
type Outcome uint8

const (
	OutcomePending  Outcome = iota // handshake not finished (or capture ended first)
	OutcomeSMCR                    // SMC-R negotiated (Accept + Confirm)
	OutcomeSMCD                    // SMC-D negotiated: no RDMA traffic on the wire
	OutcomeFallback                // plain TCP: see Conn.Fallback
	OutcomeUnknown                 // seen only mid-stream (no TCP handshake, no CLC)
	// OutcomeFailed: the SMC attempt ended without SMC and without a
	// fallback, see Conn.Failure: a malformed CLC message (Linux ends the
	// connection with EPROTO, smc_clc_wait_msg) or a first link that was
	// never confirmed, when TCP closed.
	OutcomeFailed
)

var outcomeNames = [...]string{"pending", "SMC-R", "SMC-D", "fallback", "unknown", "failed"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome?"
}

// FallbackCause says why a connection stayed on TCP.
type FallbackCause uint8

const (
	CauseNone           FallbackCause = iota
	CauseNoOptionSYNACK               // server's SYN-ACK had no SMC option: server is not SMC-capable
	CauseDecline                      // a CLC Decline was sent
	CauseNoCLC                        // both options present but payload that is not CLC followed
	CauseUncaptured                   // payload that is not CLC followed handshake bytes the capture missed or holds damaged
	CauseDeclineCut                   // a CLC Decline was sent; the snap length cut it before its code (Code absent)
)

// A SYN without the option is plain TCP, not an SMC attempt, so there is no
// "option missing on the client's SYN" cause.
var causeNames = [...]string{"", "option missing on server SYN-ACK", "CLC Decline", "no CLC after SMC options", "cause not in the capture (handshake bytes it missed or holds damaged)", "CLC Decline, its code cut by the snap length"}

func (c FallbackCause) String() string {
	if int(c) < len(causeNames) {
		return causeNames[c]
	}
	return "cause?"
}

// Stage is where in the handshake something happened.
type Stage uint8

const (
	StageSYN      Stage = iota // before any CLC
	StageProposal              // instead of a Proposal
	StageAccept                // after Proposal, instead of Accept
	StageConfirm               // after Accept, instead of Confirm
	StageLink                  // after Confirm (first-link setup failed)
)

var stageNames = [...]string{"TCP handshake", "instead of Proposal", "after Proposal", "after Accept", "after Confirm"}

func (s Stage) String() string {
	if int(s) < len(stageNames) {
		return stageNames[s]
	}
	return "stage?"
}

// Fallback describes a connection that stayed on TCP.
type Fallback struct {
	Cause     FallbackCause
	Code      uint32 // decline peer diagnosis (0 without Decline)
	By        Dir    // direction of the Decline: DirC2S = client declined
	Stage     Stage
	OutOfSync bool
	Frame     int
	Time      time.Time // of Frame
	// ANCK: the handshake was ANCK's (its Proposal carried the Alibaba
	// OUI), which names some codes otherwise (decode.DeclineCode.StringIn).
	ANCK bool
}

// CodeName is the Decline code's kernel name as the handshake reads it,
// "" for a code no kernel names.
func (f *Fallback) CodeName() string {
	if c := decode.DeclineCode(f.Code); c.Named() {
		return c.StringIn(f.ANCK)
	}
	return "" // no name: the code's hex is all there is
}

// CodeText is the Decline code in hex and its kernel name where one
// names it ("0x03030002 NOSMCRDEV", "0x03032500").
func (f *Fallback) CodeText() string {
	s := fmt.Sprintf("%#08x", f.Code)
	if name := f.CodeName(); name != "" {
		s += " " + name
	}
	return s
}

// CodeMeaning is what the Decline code means, as the handshake reads it.
func (f *Fallback) CodeMeaning() string { return decode.DeclineCode(f.Code).MeaningIn(f.ANCK) }

// Endpoint holds what one side announced in its CLC Accept (server) or
// Confirm (client): its RMB, alert token and the link it placed the
// connection on.
type Endpoint struct {
	PeerID   [8]byte
	GID      netip.Addr
	MAC      [6]byte
	QPN      uint32
	RKey     uint32
	RMBEIdx  uint8
	Token    uint32
	RMBESize uint32 // bytes
	MTU      uint32 // bytes
	VA       uint64
	PSN      uint32
	Valid    bool
	// From the SMC-Rv2 first-contact extension (struct
	// smc_clc_first_contact_ext), when the message has one.
	HasFCE  bool
	Direct  bool  // peer on the same IP subnet (no gateway)
	OS      uint8 // 1 z/OS, 2 Linux, 3 AIX (decode.OSTypeName)
	Release uint8 // SMC v2 release: 0 = v2.0, 1 = v2.1
	Host    string
	// ANCK (Alibaba Cloud Linux): the handshake's Proposal carried the
	// Alibaba vendor OUI; then InitCredits (0: credits off) and, with a
	// first-contact extension, the vendor options agreed.
	ANCK         bool
	InitCredits  uint8
	Vendor       decode.AliOptions
	VendorAgreed bool
}

// Flow counts what one direction of a connection carried.
type Flow struct {
	// NotShown: the capture holds no packet its sender sent on the link
	// group, where it holds the other side's (a capture of one
	// direction): its counts are unknown, not zero (snapshots).
	NotShown      bool
	CDCs          int
	Dumped        int    // of CDCs, those seen on ANCK's dump device (no link, no WRITE)
	Bytes         uint64 // produced, from producer-cursor deltas
	Consumed      uint64 // consumed by the sender in its own RMBE, from consumer-cursor deltas
	WriteBytes    uint64 // RDMA WRITE bytes into the receiver's RMBE (RETH DMA length)
	Writes        int    // RDMA WRITE messages
	WritesOutside int    // WRITEs whose VA fell outside the receiver's RMBE
	WriteBlocked  int
	UrgentPending int
	UrgentPresent int
	ConsUpdReq    int
	Failover      int // failover-validation CDCs
	FailoverFrame int // frame of the first one
	failoverNS    int64
	// Write-blocked episodes: a run of CDCs with the flag, ended by the
	// next CDC of the direction without it.
	WBEpisodes int
	WBLongest  time.Duration
	// StallLongest is the longest time the peer's RMBE stayed full
	// (producer cursor a whole RMBE ahead of the peer's consumer cursor)
	// before the peer consumed again.
	StallLongest time.Duration
	// wbAtLeast and stallAtLeast: the longest episode spanned a step back
	// of the capture's clock, its length a lower bound (Snapshot.Unmeasured).
	wbAtLeast, stallAtLeast bool
	PastRMBE                int // CDCs whose cursor count is at or past the RMBE size
	// firstSeq: the sequence number of the first CDC followed of this
	// direction (haveFirstSeq): a small one says the connection came up
	// not long before (adoptJoined).
	firstSeq     uint16
	haveFirstSeq bool
	SeqGaps      int // CDC sequence numbers skipped
	// SeqNotCaptured counts CDC sequence numbers skipped in the capture
	// where the responder acknowledged requests the capture never showed:
	// the CDCs were sent and taken, the capture missed them.
	SeqNotCaptured int
	SeqDup         int // CDC sequence numbers seen again (retransmitted or older)
	CursorErrors   int // cursor went backwards or could not be followed
	// DumpDamaged counts CDC frames of ANCK's dump device whose sequence
	// number or cursors moved where no sender moves them: the capture's
	// copy is damaged (nothing checks a dump frame's bytes), and what it
	// said is not followed.
	DumpDamaged int
	flowTCP
	DoneWriting bool
	Closed      bool
	Aborted     bool
	Prod, Cons  Cursor
	LastSeq     uint16
	// lastCDCPSN is the PSN of this direction's last CDC on a link;
	// lastCDCPkts, the requests its link's direction had carried with
	// it (RC.Packets): what the link carried since says how many CDCs
	// the capture may have missed (failoverCands).
	lastCDCPSN  uint32
	lastCDCPkts int
	sinceCDC    uint64     // WRITE bytes attributed since the last CDC
	pieces      dumpPieces // the dump device data frames followed since the last dumped CDC
	// unsizedWraps and unsizedDelta: the producer cursor's moves across
	// the end of an RMBE whose size was not known yet (wraps, and the
	// count's change), counted into Bytes once learnRMBESize learns it.
	unsizedWraps uint64
	unsizedDelta int64
	// joinProd, joinCons: the cursors of the first CDC of a connection
	// joined from CDCs, where its flow started counting, and joinClaimed
	// the WRITE bytes counted with it: a handshake that turns out to be
	// the connection's counts from 0 (countFromZero).
	joinProd, joinCons Cursor
	joinClaimed        uint64
	wbSince            int64 // start of the open write-blocked episode (Unix ns), 0 none
	fullSince          int64 // the peer's RMBE was found full then (Unix ns), 0: not full
	fullFrame          int   // the CDC that filled it
	// dumpLast: what the direction's last dump CDC changed, until the
	// next one shows whether it was a damaged copy.
	dumpLast   dumpLast
	dumpRecent *dumpRecent // nil: no dump CDC followed
	// dumpRejected: the direction's last dump CDC, when it was rejected
	// as damaged for its cursors.
	dumpRejected dumpSaid
	haveSeq      bool
	haveProd     bool
	haveCons     bool
	// uncaptured: the responder took PSNs of this direction's link that
	// the capture never showed since this direction's last CDC; a CDC
	// among them explains a sequence gap, or a close the capture lacks.
	uncaptured bool
}

// flowTCP is what a Flow knows from its direction's TCP segments: a
// connection that takes another's SMC side (Flow.takeSMC) keeps its own.
type flowTCP struct {
	TCPBytes uint64
	// TCPNotCaptured counts this direction's TCP bytes that the peer
	// acknowledged and the capture never showed (the capture missed
	// them): CLC messages may be among them.
	TCPNotCaptured uint64
	// FINNotCaptured: the direction's FIN is known from the peer's ACK
	// of its sequence number alone (FIN is set): the capture never
	// showed it.
	FINNotCaptured bool
	// TCPReordered counts, of those, the bytes the capture showed after
	// the peer's ACK of them (the capture's order, not the network's).
	TCPReordered uint64
	// tcpLate, tcpLateEnd, tcpLateNS: the bytes the peer's last ACK
	// covered unseen, and when, should the capture show them just after.
	tcpLate, tcpLateEnd uint32
	tcpLateNS           int64
	tcpNext             uint32 // the sequence number after this direction's bytes seen in order
	tcpFirst            uint32 // the sequence number of the first of them (where haveTCPNext)
	tcpAhead            uint32 // the first sequence number seen past tcpNext, when aheadSeen
	haveTCPNext         bool
	aheadSeen           bool
	tcpShown            bool // the capture holds a TCP segment of this direction
	FIN, RST            bool
	finFrame            int // this direction's first FIN or RST
	finNS               int64
	// finSentFrame is the first frame with a FIN of this direction in a
	// segment whose checksums do not fail, or in a damaged copy that the
	// stream proved one (finCopy): its sender's, not a damaged copy's
	// flags. 0: none.
	finSentFrame int
	finCopy      finCopy
	// SumResent counts this direction's segments whose checksum failed
	// (tcp.checksum.bad, tcp.ip_checksum.bad) that were sent again: the
	// receiving host dropped them. SumCopyDamaged those the peer's ACK
	// covered with none sent again: the capture's copy was damaged.
	SumResent, SumCopyDamaged int
	sumPend                   []seqSpan // such segments the wire has not yet settled
	// tcpNextFrame is the frame that last moved tcpNext (Tracker.tcpSeq);
	// damagedHid, where that was a damaged copy, the bytes of its payload
	// its damaged header length hid (tcpIn.hidden; hidUnknown where no
	// whole segment told the header's length; damagedGap), else 0: every
	// move of tcpNext sets it.
	tcpNextFrame int
	damagedHid   int32
	// tcpHdr is the TCP header length of this direction's last segment
	// after its SYN that was no damaged copy: what a damaged one's data
	// offset should say; frameHdr, the bytes of its frame before its
	// payload (every header, the link's on): what an unreadable frame
	// holding this direction's bytes adds to them (Tracker.unreadTCP).
	tcpHdr, frameHdr int
	// TCPUnreadable counts bytes the peer acknowledged that the capture
	// holds only in frames damaged past reading (smc.capture.unreadable).
	TCPUnreadable uint64
}

// seqSpan is a TCP segment's sequence numbers, from seq to end;
// malformed: a damaged segment whose CLC message did not decode (it took
// no step of the handshake); away: one shown away from where its
// direction's stream went on (its sequence number may be the damage),
// frame the frame that holds it.
type seqSpan struct {
	seq, end  uint32
	malformed bool
	away      bool
	frame     int
	// finLost: its flags were damage and it ends a sequence number past
	// its bytes: a FIN, where the peer's ACK covers that (damagedGap).
	finLost bool
	// clc: CLC messages decoded from it (not malformed), their values
	// read from the damaged copy (refreshCLC).
	clc bool
}

// finCopy is a damaged copy of a segment whose flags show a FIN (they may
// be the damage): its frame, the sequence number after it (its FIN
// counted), and whether the sender's next whole segment was read against
// it (Tracker.finProof). frame 0: none.
type finCopy struct {
	frame      int
	end        uint32
	senderRead bool
}

// TCPShown reports whether the capture holds a TCP segment of this
// direction: every TCP connection sends some both ways (a SYN or SYN-ACK,
// an ACK), so one without any is a capture of the other direction only.
func (f *Flow) TCPShown() bool { return f.tcpShown }

// BytesWhole reports whether Bytes counts every byte the producer cursor
// moved: not so while it wrapped an RMBE whose size the capture has not
// shown yet (unsizedWraps): Bytes is then what is known, less than was
// sent.
func (f *Flow) BytesWhole() bool { return f.unsizedWraps == 0 }

// FailoverTime is the time of the first failover-validation CDC (zero
// without one).
func (f *Flow) FailoverTime() time.Time {
	if f.failoverNS == 0 {
		return time.Time{}
	}
	return time.Unix(0, f.failoverNS)
}

// Conn is one SMC connection attempt (one internal TCP connection).
type Conn struct {
	ID             int
	Client, Server netip.AddrPort // zero for connections seen only on RoCE
	Inferred       bool           // built from CDCs alone (capture started mid-connection)
	RolesUnknown   bool           // Inferred and still no evidence who is client and server: C->S means A->B (set by Snapshot)
	OptionSYN      bool
	OptionSYNACK   bool
	SeenSYN        bool
	SeenSYNACK     bool
	Version        uint8 // CLC version of the Accept (or Proposal)
	SMCD           bool
	FirstContact   bool
	EID            string
	Offered        string  // what the Proposal offered, e.g. "SMC-Rv2+SMC-Dv2"
	CLCTypes       []uint8 // CLC message types in order (1..4)
	Outcome        Outcome
	Fallback       Fallback
	ClientEP       Endpoint
	ServerEP       Endpoint
	LGR, Link      int // tracker IDs, 0 = none
	// LinkID is the kernel's number of Link (0: not known), set in
	// snapshots: the number every text gives the link.
	LinkID                                                uint8
	Flow                                                  [2]Flow
	FirstFrame                                            int
	LastFrame                                             int
	Frames                                                int
	Start, Last                                           time.Time // Last is set in snapshots (the tracker keeps lastNS)
	TSYN, TProposal, TAccept, TConfirm, TFirstCDC, TClose time.Time
	// firstCDCFrame is TFirstCDC's frame: a CDC followed late (a run
	// kept out of sequence, Tracker.replaying) may be an earlier one.
	firstCDCFrame int
	Timeline      []Event
	TimelineCut   int // events not kept because the timeline was full
	// Merged are the connections found to be this one (a joined half and
	// its handshake, the two halves of a joined connection): their frames
	// went by, and were attributed (smc.conn.id), under their own IDs.
	Merged []int

	// AwaitingLink: the CLC handshake chose SMC-R, but the link the
	// connection is placed on is not confirmed yet (first contact: until
	// the CONFIRM_LINK exchange completes). Outcome stays pending until then.
	AwaitingLink bool
	// LinkNotCaptured: SMC-R on a link of which the capture shows not one
	// packet (a host's tcpdump where the RNIC offloads RoCE sees the
	// handshake only: its outcome comes from the TCP stream, failPending),
	// or on none the capture ties it to: its data is unknown (set in
	// snapshots, markUnseen).
	LinkNotCaptured bool
	// clcUncaptured: the capture missed TCP bytes of the handshake (the
	// peer's ACK covers them): a CLC message may be among them, so the
	// handshake's outcome is not inferred from what is missing.
	clcUncaptured bool
	// clcCut: those bytes were cut by the capture's snap length; clcHole:
	// the sender's own sequence numbers skip them (its FIN came past bytes
	// the capture never showed).
	clcCut, clcHole bool
	// synAckUnsure: the SYN-ACK's checksum did not verify, and no
	// segment of the client's whose checksum does has acknowledged its
	// sequence number yet (or another: the SYN-ACK's was damaged).
	synAckUnsure bool
	// cutHeader: the header of an Accept or Confirm whose body the snap
	// length cut said whether the connection made its link group
	// (FirstContact): a step that needs no more (cutStep).
	cutHeader bool
	// cutPeer: the peer IDs the cut Accept (DirS2C: the server's) and
	// Confirm kept, zero where the cut left them out.
	cutPeer [2][8]byte
	// clcDamaged: a CLC message the capture holds damaged (its segment's
	// checksum fails) and malformed made them so.
	clcDamaged bool
	// damagedStart: the segment that began it failed its checksum.
	damagedStart bool
	// cutSegs counts the handshake's segments the capture holds cut
	// whose whole copy has not come (feedCLCOfCut); cutUnread[d], the
	// messages the last of direction d ended with that the cut left
	// unread (those before it took their step).
	cutSegs   uint8
	cutUnread [2]uint8
	// cameUp: the capture showed a CDC of sequence 1 of the connection,
	// which came up while the capture ran (its handshake is in the
	// capture, or the capture missed it).
	cameUp bool
	// noCLCEarly: the stream's first bytes were not CLC before the
	// capture showed the SYN-ACK (clocks apart): the fallback they make
	// if the SYN-ACK offers SMC.
	noCLCEarly *Fallback
	// Failure says what went wrong in a handshake that did not fall back:
	// set as soon as it is seen (the outcome stays pending), and the
	// outcome becomes OutcomeFailed when TCP closes.
	Failure string
	// failedMalformed: Failure names a malformed CLC message, which
	// smc.malformed then says too.
	failedMalformed bool
	// malformedDir: the direction that message came in; malformedType,
	// the type its header names, sent at malformedAt.
	malformedDir  Dir
	malformedType decode.CLCType
	malformedAt   time.Time
	// malformedEP: the client's end a first contact's malformed Confirm
	// names (placeMalformedConfirm), asked while its link is yet to come
	// (halfAnnounced).
	malformedEP Endpoint
	// malformedUnjudged: that message's segment had its checksum judged
	// neither way (clcFlow.checkSum); malformedSum names the checksum of
	// it that failed as held ("TCP checksum"), if one did: a later
	// segment of the connection whose checksum verifies makes it damage
	// (sumsFilled).
	malformedUnjudged bool
	malformedSum      string
	// resetUnsure: the reset that ended c had its checksum fail as held,
	// nothing of c's judged: undone if its sender goes on (resetUndone).
	resetUnsure *resetUndo
	// malformedOwn: smc.malformed's detail is the message's that Failure
	// names (malformedWasCopy adds why it was a damaged copy after all).
	malformedOwn bool
	// failedLink: Failure says the link never came up (failPending); a
	// CDC of c's followed after that says it did (connUp).
	failedLink bool

	lgr    *LinkGroup
	link   *Link
	synSeq uint32 // client's initial sequence number, to tell a retransmitted SYN from a new connection
	// refusedDecline: a Decline today's kernel refuses (malformed) was
	// sent; TCP payload after it makes it the fallback it was meant to be
	// (declinedAt is the segment that carried it, to tell a
	// retransmission of that segment from data).
	refusedDecline *Fallback
	declinedAt     struct {
		dir Dir
		seq uint32
	}
	finished bool
	idled    bool  // finished by the idle sweep (Options.IdleTimeout), not by a close or a reused 4-tuple
	folded   bool  // in the tracker's folded sums, no longer listed
	lastNS   int64 // time of the last frame (Unix nanoseconds): written per frame, a time.Time holds a pointer
	// halfPlaced: placed from a Confirm without its Accept, so one
	// direction's token is unknown and is paired like a joined connection's.
	halfPlaced bool
	// reuseShown: placed by its CDCs on a group the capture showed
	// before its first frame (placeBlind): a reused group, its Accept
	// and Confirm not needed to say so.
	reuseShown bool
	// firstOf[d]: the connections whose first CDC of direction d a CDC
	// that went to a joined connection may have been, this one among
	// them (claimFirst).
	firstOf [2]*firstCDCs
	tokens  [2]uint32 // receiver token of each direction while registered
	hasTok  [2]bool
	// epDamaged[d]: the endpoint whose token direction d's CDCs carry
	// came from a CLC message whose segment failed its checksum (a
	// damaged copy): the link's CDCs, their ICRC checked, may name the
	// token and queue pair the peers use (damagedToken, claimHalf).
	epDamaged [2]bool
	// sizeDamaged[d]: rmbeSize(d) came from a CLC message whose segment
	// failed its checksum; a cursor past it says the size was the damage
	// (sizeContradicted). pastDamaged[d][e]: the CDCs of direction e
	// counted Flow.PastRMBE against that size, taken back then.
	sizeDamaged [2]bool
	pastDamaged [2][2]uint32
	// proposed: the GIDs of the client's Proposal (clcIn.gids), and
	// whether its segment's checksum verified: a damaged copy of its
	// Confirm is read with the one proposed (confirmedGID).
	proposed   [2]netip.Addr
	proposedOK bool
	expert     marks       // its findings (expert.go)
	stream     *connStream // reassembly (Options.Stream), nil until used
}

// Closed reports whether both sides signalled the end (CDC close flags, or
// TCP FIN/RST for a fallback connection).
// offeredSMC reports whether the client's SYN carried the SMC option: the
// SYN's word, or where the capture lacks the SYN (begun late, or the SYN
// damaged past reading) the SYN-ACK's, for a server echoes the option only
// to a SYN that carried it (tcp_synack_options under ireq->smc_ok,
// net/ipv4/tcp_output.c).
func (c *Conn) offeredSMC() bool { return c.OptionSYN || !c.SeenSYN && c.OptionSYNACK }

func (c *Conn) Closed() bool {
	if c.Outcome == OutcomeFallback || c.Outcome == OutcomePending || c.Outcome == OutcomeFailed {
		return (c.Flow[0].FIN && c.Flow[1].FIN) || c.Flow[0].RST || c.Flow[1].RST
	}
	end := func(f *Flow) bool { return f.Closed || f.Aborted }
	return (end(&c.Flow[0]) && end(&c.Flow[1])) || c.Flow[0].Aborted || c.Flow[1].Aborted
}

// LinkState is a link's state as the observer last saw it.
type LinkState uint8

const (
	LinkUnknown    LinkState = iota // seen only as RoCE traffic
	LinkConfirming                  // first link announced by CLC, CONFIRM_LINK not finished
	LinkAdding                      // ADD_LINK request seen
	LinkAdded                       // ADD_LINK accepted, CONFIRM_LINK on the new link pending
	LinkUp                          // CONFIRM_LINK response seen
	LinkRejected                    // ADD_LINK rejected
	LinkDeleted                     // DELETE_LINK
)

var linkStateNames = [...]string{"unknown", "confirming", "adding", "added", "up", "rejected", "deleted"}

func (s LinkState) String() string {
	if int(s) < len(linkStateNames) {
		return linkStateNames[s]
	}
	return "state?"
}

// LinkEnd is one side of a link.
type LinkEnd struct {
	Addr netip.Addr // IP of the RoCEv2 packets (v4-mapped GIDs unmapped), or the GID for RoCEv1
	GID  netip.Addr
	MAC  [6]byte
	QPN  uint32
	PSN  uint32 // initial PSN
	UID  uint32 // link user ID from CONFIRM_LINK
}

// RC counts the reliable-connection transport of one link direction.
type RC struct {
	Packets    int // request packets (SEND, WRITE, READ ...)
	Sends      int
	WritePkts  int
	Acks       int // acknowledgements sent in this direction
	NAKs       int
	NAKCodes   [5]int // by NAK code: PSN sequence error, invalid request, remote access error, remote operational error, invalid RD request
	RNRs       int
	PSNGaps    int // runs out of sequence: times the PSN jumped ahead of the one the responder expects
	PSNMissing int // PSNs those jumps skipped
	Retrans    int // request packets with a PSN seen before
	// Dups counts, of the retransmissions, the requests before the PSN
	// the responder expects, which it acknowledges again and leaves.
	Dups int
	// OutOfSeq counts request packets ahead of the PSN the responder
	// expects, which it drops (inSequence); Late those first seen after
	// later PSNs: lost before the capture point and sent again, or
	// overtaken.
	OutOfSeq int
	Late     int
	// NotCaptured counts request PSNs the responder took (its ACK or NAK
	// covers them) that the capture never showed: the capture point
	// missed them, the network did not lose them.
	NotCaptured int
	// Reordered counts requests the capture showed after the responder's
	// ACK of them (the PSNs were counted not captured until they came):
	// the capture's order, not the network's.
	Reordered int
	// ReorderedCarried counts those of them a tunnel carried (a mirror
	// session's copy, its packet not in the capture): its path to the
	// capture point is longer than the packets' around it.
	ReorderedCarried int
	// ICRCBad counts packets whose ICRC does not match: the receiving
	// RNIC drops them, and the tracker follows none of their content
	// (a request the responder took all the same is Damaged instead).
	ICRCBad int
	// Damaged counts requests the capture holds damaged (a checksum that
	// fails, a length past the frame) that the responder took all the
	// same (its ACK or NAK covers the PSN): the capture's copy is
	// damaged, the packet was not.
	Damaged int
	// Unreadable counts request PSNs the responder took that the capture
	// holds only in frames damaged past reading (smc.capture.unreadable).
	Unreadable int
	// Untied counts RDMA WRITE packets the capture showed on the
	// direction's queue pair before anything named the link (its setup
	// missed or cut by the snap length): no connection's count has
	// their bytes.
	Untied int
	// damagedShown counts the direction's packets the capture holds
	// with a checksum or length that fails, whatever became of them: a
	// packet shown all the same (Shown).
	damagedShown int
	// ipSumOK: a packet of this direction carried an ICRC and an IPv4
	// header checksum that verify (roce: one whose checksum alone fails
	// is damage only then).
	ipSumOK bool
	// cutPSN is the last SEND followed whose content the snap length
	// cut, and cut what (sendCut: until its whole copy, should the
	// capture hold one after it, gives that, feedRoCEOfCut);
	// creditsWas, with cutCredits, the peer's credits before it
	// (Link.Credits), which its whole copy takes up again (uncutCredits).
	cutPSN     uint32
	cut        sendCut
	creditsWas Credits
	goBack     goBack                      // the requester's pass over PSNs sent before, while it may settle late requests
	maxPSN     uint32                      // the highest PSN seen (in PSN order), while a run is open
	hiShown    uint32                      // the highest request PSN the capture has shown (in PSN order)
	ahead      psnWindow                   // PSNs ahead of nextPSN seen out of sequence
	late       lateWindow                  // PSNs the responder took unseen, which may yet come (reordered)
	gapPend    [maxPendingGaps]pendingLoss // PSN gaps the wire has not shown yet (reordered or lost)
	kept       []keptReq                   // the run's requests, for a capture that only missed frames (resync)
	// resyncing: resync is following kept; a request among them that
	// settles runs (a DELETE_LINK of every link) leaves this one alone,
	// and the run that settles may not settle this one in turn.
	resyncing bool
	// lastDup: the last request out of PSN order (not the expected
	// one) was a duplicate, a PSN before the expected one sent again,
	// or the expected one was sent again after a copy held out of
	// sequence. While a run out of sequence is open every request is
	// out of order but the one that ends it: then it tells whether the
	// request before that one was.
	lastDup    bool
	LLCs       int
	CDCs       int
	Unattached int // CDCs or WRITEs that matched no connection
	nextPSN    uint32
	havePSN    bool
	damaged    bool    // dmg or dmgTaken holds a request: the fast path steps aside
	lastPSN    uint32  // PSN of the last request packet
	lastFrame  int     // its frame number
	mac        [6]byte // the Ethernet destination of the direction's requests (haveMAC), for unreadRoCE
	haveMAC    bool
	unreadPSNs []unreadPSN // the PSNs unreadRoCE settled lately, and by which frames
	recent     [16]psnConn // connections of the last requests, to attribute ACKs
	nRecent    uint        // unsigned: the ring index is a mask, not a division
	curWrite   *Conn       // connection of the WRITE message in progress (FIRST..LAST)
	// lastFirst is the WRITE whose FIRST came last, in sequence or out
	// of it: its MIDDLE and LAST packets that come out of sequence
	// (requestConn) are its connection's frames as they go by.
	lastFirst  writeSpan
	curPending bool        // the WRITE in progress matched no rkey
	curLen     uint32      // its whole length (the FIRST's RETH), for a LAST with immediate
	sw         streamWrite // where the WRITE in progress places its bytes (Options.Stream)
	pend       []pendingWrite
	dmg        []damagedReq   // damaged requests whose PSN the responder has yet to take (holdDamaged)
	dmgTaken   []takenDamaged // damaged requests the responder's word made the capture's damage, lately
	dmgPass    []passDamaged  // damaged requests whose PSN a pass sent again before the responder's word
	unplaced   []unplacedReq  // damaged requests whose PSN may be the one the responder expected (holdDamaged)
	sumUnsure  []sumUnsure    // requests followed though their IPv4 header checksum fails, none of the direction's verifying yet
	// sumsUnfilled: the direction's IPv4 header checksums are left to
	// the RNIC in this capture (unsureSum).
	sumsUnfilled bool
}

// writeSpan is an RDMA WRITE message by its FIRST packet: its connection
// (nil: unknown), PSN and packets (its RETH length over the FIRST's
// payload, the path MTU; 0 where there was none).
type writeSpan struct {
	conn       *Conn
	from, pkts uint32
}

// spanOf is the WRITE message whose FIRST, of connection c, has PSN psn,
// RETH length dmaLen and a payload of pmtu bytes.
func spanOf(c *Conn, psn, dmaLen, pmtu uint32) writeSpan {
	w := writeSpan{conn: c, from: psn, pkts: 1}
	if pmtu > 0 {
		w.pkts = max((dmaLen+pmtu-1)/pmtu, 1)
	}
	return w
}

// covers reports whether psn is one of the message's packets.
func (w *writeSpan) covers(psn uint32) bool {
	n := psnDiff(psn, w.from)
	return n >= 0 && n < int32(w.pkts)
}

// holds reports whether psn is one of the message's later packets.
func (w *writeSpan) holds(psn uint32) bool { return psn != w.from && w.covers(psn) }

// ackedConn is the connection of the request of PSN psn that an ACK or
// NAK of the other direction names: one of the last requests, or a
// packet of the WRITE whose FIRST came last (a message longer than the
// PSNs remembered).
func (r *RC) ackedConn(psn uint32) *Conn {
	if c := r.connOf(psn); c != nil || !r.lastFirst.covers(psn) {
		return c
	}
	return r.lastFirst.conn
}

// psnConn remembers which connection a request packet belonged to.
type psnConn struct {
	psn  uint32
	conn *Conn
}

// connOf returns the connection of a recent request with this PSN.
func (r *RC) connOf(psn uint32) *Conn {
	// Newest first: an ACK usually answers one of the last requests.
	n := r.nRecent
	for i := uint(1); i <= min(n, uint(len(r.recent))); i++ {
		if e := &r.recent[(n-i)%uint(len(r.recent))]; e.psn == psn {
			return e.conn
		}
	}
	return nil
}

func (r *RC) remember(psn uint32, c *Conn) {
	e := &r.recent[r.nRecent%uint(len(r.recent))]
	e.psn = psn
	if e.conn != c { // mostly the same connection: no pointer written
		e.conn = c
	}
	r.nRecent++
}

// pendingWrite is an RDMA WRITE whose rkey matched no known RMB; the next
// CDC on the same link direction names the connection it belonged to.
type pendingWrite struct {
	rkey   uint32
	bytes  uint64
	writes int
	frames int // counted in Stats.Unattached as they went by
	// linkOnly are frames followed when a run out of sequence was
	// resolved (resync): counted in Stats.LinkOnly as they went by.
	linkOnly int
	last     int // the number of the last frame added
}

// LinkEvent is one step in a link's life: What is its text, the other
// fields say the same for programs.
type LinkEvent struct {
	Frame int
	Time  time.Time
	What  string
	Kind  LinkEventKind
	LLC   decode.LLCType // the LLC message of an LLC event, as sent
	Resp  bool
	// Link is the link number the message is about, On the one it was
	// sent on (they differ for ADD_LINK and for a DELETE_LINK sent over
	// another link).
	Link, On uint8
	Reason   uint32 // DELETE_LINK reason
	All      bool   // DELETE_LINK of every link: the group ends
	Orderly  bool   // DELETE_LINK ORDERLY: ended on purpose, nothing lost
	UID      uint32 // CONFIRM_LINK link user ID
}

// Shown reports whether the capture showed any packet of the link: a
// request or a response, either way, damaged copies included (the capture
// point sees the link's traffic).
func (l *Link) Shown() bool {
	for d := range l.RC {
		if r := &l.RC[d]; r.Packets+r.Acks+r.NAKs+r.RNRs+r.damagedShown > 0 {
			return true
		}
	}
	return false
}

// FirstContactKnown reports whether the capture holds the flag
// FirstContact reads: an Accept or Confirm, whole or its header (cut by
// the snap length).
func (c *Conn) FirstContactKnown() bool { return c.ServerEP.Valid || c.ClientEP.Valid || c.cutHeader }

// bornInCapture reports whether the capture shows g made: a first
// contact's Accept and Confirm announced one of its links, or its first
// link's CONFIRM_LINK request is in it (the first message on a new
// group's link, smcr_serv_conf_first_link in net/smc/af_smc.c). Every
// connection of such a group came up while the capture ran.
func (g *LinkGroup) bornInCapture() bool {
	for _, l := range g.links {
		if l.announced || l.setupShown {
			return true
		}
	}
	return false
}

// between reports whether g joins client a and server b: one of its
// links or of its connections known from their handshakes has those ends.
func (g *LinkGroup) between(a, b netip.Addr) bool {
	for _, l := range g.links {
		if l.Client.Addr == a && l.Server.Addr == b {
			return true
		}
	}
	for _, c := range g.conns {
		if !c.Inferred && c.Client.Addr() == a && c.Server.Addr() == b {
			return true
		}
	}
	return false
}

// oneWay reports whether the capture shows no packet at all (request,
// ACK, NAK or RNR NAK) sent by one side of the group, on any of its
// links, while it shows the other's.
func (g *LinkGroup) oneWay() bool {
	s := g.sent()
	return (s[0] == 0) != (s[1] == 0)
}

// sent counts the packets of each direction of the group's links.
func (g *LinkGroup) sent() (n [2]int) {
	for _, l := range g.links {
		for d := range l.RC {
			r := &l.RC[d]
			n[d] += r.Packets + r.Acks + r.NAKs + r.RNRs
		}
	}
	return n
}

// Link is one RC QP pair of a link group.
type Link struct {
	ID         int
	LGR        int
	LinkID     uint8 // link number on the wire (0 until CONFIRM_LINK/ADD_LINK)
	Client     LinkEnd
	Server     LinkEnd
	State      LinkState
	DeleteCode uint32
	// DeleteKnown: DeleteCode is the reason a DELETE_LINK request stated.
	// The response carries 0 or "no such link" in its place (net/smc/
	// smc_llc.c smc_llc_process_cli_delete_link): a link whose deletion
	// the capture shows by the response alone was deleted for a reason
	// not captured.
	DeleteKnown bool
	Inferred    bool // built from RoCE traffic alone; Client/Server mean A/B
	RC          [2]RC
	Conns       []int
	ConnsFolded int         // connections of Conns folded into the totals (Options.MaxConns)
	History     []LinkEvent // in snapshots; the tracker keeps hist
	FirstFrame  int
	LastFrame   int
	Start, Last time.Time // Last is set in snapshots (the tracker keeps lastNS)

	TestLinks int

	// Credits[d]: ANCK receive-queue credits of the sender of direction
	// d (granted by the peer), in a link group with credits (credits.go).
	Credits [2]Credits

	lgr     *LinkGroup
	conns   []*Conn
	retired bool  // out of the lookup tables (deleted or idle)
	folded  bool  // in the tracker's folded sums, no longer listed
	lastNS  int64 // time of the last frame (Unix nanoseconds), as Conn's
	// rkeys finds the connection an RDMA WRITE on this link writes into
	// by the receiver's RMB rkey (each link has its own rkey for an RMB),
	// one map per direction of the WRITE; made at the first rkey.
	rkeys   [2]map[uint32]rmbRef
	keys    [2]qpKey
	keyed   [2]bool
	history *int // the tracker's count of kept link events (maxHistory)
	hist    []histEvent
	expert  marks // its findings (expert.go)
	// llcPend: per direction, the LLC requests waiting for a response
	// (slot 0 the LLC flow's, slot 1 TEST_LINK's; expert.go).
	llcPend [2][2]pendingLLC
	// unknownNS: per direction, when the responder's word last said it
	// took requests whose content the capture lacks (contentUnknown): a
	// request of the other direction followed later (held for its
	// sequence) from before then may have had its response among them.
	unknownNS [2]int64
	// llcEarly: per direction, the responses to requests of that
	// direction that the capture showed before the requests (llcPairs).
	llcEarly [2]earlyLLCs
	// uncaptured: while it was being confirmed, the capture missed
	// requests on it (the CONFIRM_LINK exchange may be among them), or,
	// added, requests of its group before its ADD_LINK's response (the
	// response may be among them).
	uncaptured bool
	// added: made by an ADD_LINK exchange; wasUp: its CONFIRM_LINK
	// exchange finished (it carried connections); endNS: when it was
	// deleted or rejected.
	added, wasUp bool
	endNS        int64
	// answered: an ADD_LINK response for it came; announced: a first
	// contact's CLC Accept and Confirm announced it; setupShown: made at
	// the server's CONFIRM_LINK request of a group's first link (its
	// handshake not followed), which the capture holds.
	answered, announced, setupShown bool
	// respFirstNS: made by an ADD_LINK response whose request the capture
	// had not shown, then (addLink); 0 once a request came.
	respFirstNS int64
	// groupOneWay is lgr.oneWay() when the snapshot was taken (a
	// snapshot's links have no lgr).
	groupOneWay bool
}

// oneWay is its group's oneWay, in the tracker or in a snapshot.
func (l *Link) oneWay() bool {
	if l.lgr != nil {
		return l.lgr.oneWay()
	}
	return l.groupOneWay
}

// LinkGroup is one SMC-R link group as seen from both ends.
type LinkGroup struct {
	ID           int
	ServerPeerID [8]byte
	ClientPeerID [8]byte
	ServerLGRID  uint32 // link user ID minus link number, from CONFIRM_LINK
	ClientLGRID  uint32
	Version      uint8
	MaxLinks     uint8
	MaxConns     uint8
	// From the first contact's CLC Accept (server) and Confirm (client)
	// and their first-contact extensions.
	Release    uint8
	Direct     bool
	EID        string
	Server     GroupEnd
	Client     GroupEnd
	Inferred   bool
	Deleted    bool
	DeleteCode uint32
	// DeleteKnown: DeleteCode is a reason the wire stated (Link.DeleteKnown).
	DeleteKnown bool
	// ANCK (Alibaba Cloud Linux) link groups: made by a handshake with the
	// Alibaba vendor options; with receive-queue credits; with data by
	// RDMA WRITE with Immediate instead of CDCs.
	ANCK, Credits, RWWI bool
	Links               []int
	Conns               []int
	LinksFolded         int // links of Links folded into the totals
	ConnsFolded         int // connections of Conns folded into the totals
	FirstFrame          int
	Start               time.Time

	links      []*Link
	conns      []*Conn
	rolesKnown bool // client and server are known (not just A and B)
	// tokens finds a CDC's connection by the receiver's alert token, one
	// map per direction of the CDC.
	tokens [2]map[uint32]*Conn
	// CONFIRM_RKEY announcements waiting for the Accept/Confirm that names
	// the same rkey on the link they were sent on.
	pendingRKeys map[rkeyKey]pendingRKey
	gone         []*Link // its folded links, for Tracker.recycle
	folded       bool    // in the folded sums, out of Tracker.lgrs
	expert       marks   // its findings (expert.go)
	// unplaced: DELETE_LINKs of one link that named a link number none
	// of its links had (the capture joined that link after the exchange
	// that numbered it): adoptDeleted's evidence once the capture ends.
	unplaced []unplacedDelete
	// missedNS: when the capture last showed that it missed requests on
	// one of its links (notCaptured): an LLC message among them may have
	// changed a link that showed nothing since (a DELETE_LINK).
	missedNS int64
}

// GroupEnd is what one side said of itself when it made the link group.
type GroupEnd struct {
	OS   uint8 // decode.OSTypeName
	Host string
}

// Event is one frame in a connection's timeline.
type Event struct {
	Frame int
	Time  time.Time
	Dir   Dir
	What  string // e.g. "CLC Accept", "CDC", "RDMA WRITE"
	Info  string // meaning, e.g. "seq 1 prod 0/64 (+64 B)"
}

// Stats counts frames by what the tracker could do with them, so nothing
// is dropped silently.
type Stats struct {
	Frames       int `json:"frames"`
	TCP          int `json:"tcp"`           // TCP segments of tracked connections
	TCPUntracked int `json:"tcp_untracked"` // TCP segments of connections without SMC option (or seen mid-stream without CLC)
	// TCPDamaged are those of TCPUntracked whose IPv4 header checksum
	// fails: the capture's damaged copies of segments, their addresses
	// past trusting, not a host's plain TCP.
	TCPDamaged    int `json:"tcp_damaged,omitempty"`
	CLC           int `json:"clc"`  // CLC messages
	RoCE          int `json:"roce"` // RoCE packets (BTH decoded)
	LLC           int `json:"llc"`
	CDC           int `json:"cdc"`
	Writes        int `json:"writes"`                 // RDMA WRITE messages (FIRST/ONLY)
	ConnAttached  int `json:"conn_attached"`          // frames attributed to a connection
	LinkOnly      int `json:"link_only"`              // RoCE frames attributed to a link but to no connection
	Unattached    int `json:"unattached"`             // RoCE frames tied to no connection: on QPs not identified yet, or CDCs/WRITEs that matched nothing
	LateAttached  int `json:"late_attached"`          // of those, attributed later (WRITE resolved by the CDC that followed it)
	Retrans       int `json:"retrans"`                // RoCE request packets with a repeated PSN
	InferredLinks int `json:"inferred_links"`         // links created from RoCE traffic alone
	InferredConns int `json:"inferred_conns"`         // connections created from CDCs alone
	Evicted       int `json:"evicted"`                // connections folded into the totals, no longer listed (Options.MaxConns)
	EvictedLinks  int `json:"evicted_links"`          // links folded into the totals, no longer listed (Options.MaxConns)
	EvictedLGRs   int `json:"evicted_lgrs,omitempty"` // link groups folded with their last link
	Other         int `json:"other"`                  // frames that are neither TCP nor RoCE
	// CaptureDups are RoCE and TCP frames the capture holds twice
	// (captureDup): counted here only, followed once.
	CaptureDups int `json:"capture_duplicates,omitempty"`
	// CaptureDupsOtherPath are those of them that came by another path
	// than their original: one of the two carried by a mirror session
	// or an overlay (capturePath).
	CaptureDupsOtherPath int `json:"capture_duplicates_other_path,omitempty"`
	// CaptureDupsApart are those of them that came the time two merged
	// captures of the same packets are apart after their originals
	// (each host's capture, the clocks apart), the last CaptureApartNS.
	CaptureDupsApart int   `json:"capture_duplicates_apart,omitempty"`
	CaptureApartNS   int64 `json:"capture_copies_apart_ns,omitempty"`
	// MirrorLost are frames mirror sessions numbered that the capture
	// does not hold (Snapshot.Mirrors).
	MirrorLost int `json:"mirror_lost,omitempty"`
	// MirrorDamaged are frames of mirror sessions the capture holds
	// damaged (a number, session ID or outer header no longer read as
	// sent), taken for the numbers they hid: not in MirrorLost.
	MirrorDamaged int `json:"mirror_damaged,omitempty"`
	RWWI          int `json:"rwwi,omitempty"` // ANCK writes with immediate on an SMC-R link
	Dump          int `json:"dump,omitempty"` // CDCs of ANCK's dump device
	// Malformed SMC messages: CLC messages that did not decode, and SENDs
	// on an SMC-R link that did not decode as LLC or CDC.
	Malformed int `json:"malformed,omitempty"`
}
