package track

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
)

// tcp handles a TCP segment: the SYN options decide whether the connection
// is an SMC attempt, CLC messages carry the handshake, FIN/RST the end.
func (t *Tracker) tcp(in *input) {
	s := &in.tcp
	t.stats.Malformed += s.clcErrs
	if s.syn && t.cutShown.next > 0 {
		t.uncutSYN(in)
	}
	// A connection's segments mostly follow each other: the last one
	// found is compared before the 4-tuple is hashed.
	c := t.lastTuple
	if c == nil || !(s.src == c.Client && s.dst == c.Server || s.src == c.Server && s.dst == c.Client) {
		c = t.byTuple[makeTCPKey(s.src, s.dst)]
	}
	if c != nil && s.syn {
		damagedFlags(c, s)
		t.synFlagsTurned(c, s)
	}
	if c != nil && s.syn && !s.ack && (!c.SeenSYN && !c.SeenSYNACK || s.seq != c.synSeq || s.src != c.Client || c.Closed()) {
		// The 4-tuple is being reused by a new connection (a retransmitted
		// SYN carries the same initial sequence number, and so does a SYN
		// the capture showed after its SYN-ACK: two hosts' captures
		// merged, their clocks apart).
		t.untuple(c)
		if c.damagedStart && c.Frames == 1 {
			// Its one segment was a damaged copy (a mirror's of this
			// SYN, its flags damaged, shown first): no connection of its
			// own. The SYN's takes its place.
			t.phantom = c
		} else {
			t.finish(c)
		}
		c = nil
	}
	if c == nil {
		c = t.damagedTuple(in)
	}
	if c == nil {
		c = t.startConn(in, makeTCPKey(s.src, s.dst))
		if c != nil {
			t.keepDamagedSYN(c, in)
		}
	}
	if t.phantom != nil {
		// Not begun again (the segment was no SMC connection's SYN):
		// ended as it was.
		t.finish(t.phantom)
		t.phantom = nil
	}
	if c == nil {
		t.stats.TCPUntracked++
		if s.clcErrs > 0 {
			t.raise(&t.expert, expert.Malformed, in)
		}
		if f := s.frame; f != nil && f.IPv4 != nil && !f.Cut {
			// Its IPv4 header checksum failing, its addresses may be
			// damage: a connection's segment, past reading as one.
			if !decode.IPv4HeaderSumOK(f.IPv4.Contents) || in.clcN > 0 && t.damagedCLCCopy(in) {
				t.stats.TCPDamaged++
				in.unreadFrom(f)
				t.keepUnread(in, expert.None)
			}
		}
		return
	}
	t.lastTuple = c
	t.stats.TCP++
	if s.rst && s.damage() != "" {
		// A damaged copy's RST flag may be the damage (an ACK's flags
		// damaged): a reset is taken from a segment that verifies, and
		// the connection goes on where its peers' segments say so.
		s.rst = false
	}
	if s.rst && (s.oddRST || s.payload > 0) && s.mayBeDamaged() {
		// Linux sends a reset bare, with no payload and no flag but
		// ACK (tcp_send_active_reset in net/ipv4/tcp_output.c,
		// tcp_v4_send_reset in net/ipv4/tcp_ipv4.c): one with either
		// whose checksum fails as held, judged or not, is another
		// segment whose flags byte the capture damaged.
		s.rst = false
	}
	d := DirC2S
	if s.src != c.Client {
		d = DirS2C
	}
	t.touchConn(c, in, d)
	if u := c.resetUnsure; u != nil && in.number != u.frame &&
		(u.dir == d && !s.syn && !s.sumBad && int32(s.seq-u.seq) >= 0 || newStep(c, in)) {
		t.resetUndone(c, d, in)
	}
	if s.rst && c.resetUnsure == nil && s.mayBeDamaged() {
		// (Judged damage took the flag above: this one's checksum
		// failed with nothing of c's verified before.)
		c.resetUnsure = &resetUndo{dir: d, seq: s.seq, frame: in.number, rst: c.Flow[d].RST, finFrame: c.Flow[d].finFrame,
			finNS: c.Flow[d].finNS, tClose: c.TClose, outcome: c.Outcome, failure: c.Failure, failedMalformed: c.failedMalformed,
			failedLink: c.failedLink, awaiting: c.AwaitingLink, failed: c.expert.find(expert.HandshakeFailed) != nil}
	}
	if c.malformedSum != "" {
		t.sumsFilled(c, s, in)
	}
	if s.sumBad {
		// The receiving host drops a segment whose checksum fails
		// (tcp_checksum_complete in tcp_v4_rcv, net/ipv4/tcp_ipv4.c).
		// It is followed all the same (a capture edited by hand fails
		// it too); the finding says which segment to distrust.
		t.raiseText(&c.expert, expert.BadTCPSum, in, func() string {
			return fmt.Sprintf("%schecksum in the segment %#04x, computed %#04x", s.namedText(), s.sum[0], s.sum[1])
		})
	}
	if s.ipSumBad {
		// ip_rcv_core (net/ipv4/ip_input.c) drops it before TCP sees it.
		t.raiseText(&c.expert, expert.BadTCPIPSum, in, func() string {
			return fmt.Sprintf("%sIPv4 header checksum in the segment %#04x, computed %#04x", s.namedText(), s.ipSum[0], s.ipSum[1])
		})
	}
	rec := t.recording(c)
	f := &c.Flow[d]
	f.tcpShown = true
	if !s.syn && s.damage() == "" {
		f.tcpHdr = s.hdr
		if in.wire > 60 {
			// (Not an Ethernet frame padded to its least size.)
			f.frameHdr = in.wire - s.payload
		}
	}
	if in.clcN > 0 {
		t.retype(c, d, s, in)
	}
	switch {
	case s.syn && !s.ack:
		if r := &t.seenCopies; r.replayOf != 0 && c.FirstFrame == in.number {
			t.raiseText(&c.expert, expert.CaptureReplayed, in, func() string {
				if r.replayAfter <= 0 {
					// The capture's clock stepped back between the two.
					return fmt.Sprintf("its SYN is frame %d's byte for byte, after that connection ended", r.replayOf)
				}
				return fmt.Sprintf("its SYN is frame %d's byte for byte, %s later, after that connection ended", r.replayOf, fmtApart(r.replayAfter))
			})
		}
		c.SeenSYN = true
		c.synSeq = s.seq
		c.OptionSYN = s.smcOpt
		if c.TSYN.IsZero() {
			c.TSYN = in.ts()
		}
	case s.syn && s.ack && c.SeenSYN && d == DirC2S:
		// A SYN-ACK from the client whose SYN the capture showed: no
		// TCP stack sends one (its flags were damaged in the capture).
	case s.syn && s.ack && c.SeenSYNACK && c.OptionSYNACK && !s.smcOpt && s.damage() != "":
		// A damaged copy of the SYN-ACK shown whole before (a mirror's,
		// or one sent again and damaged on the way): the option's bytes
		// are among the damage, not taken back.
	case s.syn && s.ack:
		if c.SeenSYN && !c.SeenSYNACK && s.ackNum != c.synSeq+1 && t.damagedSYNAt(c) >= 0 {
			// The SYN's sequence number was damaged (its checksum
			// failed): the client's bytes count from the one its
			// SYN-ACK acknowledges (clcFlow.synDamaged likewise).
			c.synSeq, c.Flow[DirC2S].tcpNext = s.ackNum-1, s.ackNum
		}
		if !c.SeenSYN && !c.SeenSYNACK {
			c.synSeq = s.ackNum - 1 // the SYN it acknowledges
		}
		if !s.smcOpt && damagedSMCOption(s) {
			s.smcOpt = true
		}
		c.SeenSYNACK = true
		c.OptionSYNACK = s.smcOpt
		sum := s.sums()
		// (A checksum that only the SMC option's damage fails vouches
		// for the sequence number: capture.Frame.SMCOptionMended.)
		c.synAckUnsure = (!sum.Checked || !sum.OK) && !(s.frame != nil && s.frame.SMCOptionMended())
		if !s.smcOpt && c.Outcome == OutcomePending {
			c.Outcome = OutcomeFallback
			c.Fallback = Fallback{Cause: CauseNoOptionSYNACK, By: DirS2C, Stage: StageSYN, Frame: in.number, Time: in.ts()}
			t.raise(&c.expert, expert.Fallback, in)
		}
		if s.smcOpt && c.noCLCEarly != nil && c.Outcome == OutcomePending && len(c.CLCTypes) == 0 {
			c.Outcome, c.Fallback = OutcomeFallback, *c.noCLCEarly
			t.raise(&c.expert, expert.Fallback, in)
			if c.Fallback.Cause == CauseNoCLC {
				t.raise(&c.expert, expert.OptionEchoed, in)
			}
		}
		c.noCLCEarly = nil
	case d == DirS2C && c.noCLCEarly != nil && !c.SeenSYNACK && s.damage() == "":
		// The server sends nothing before its SYN-ACK, and every capture
		// of it shows that first: a segment of the server's after the
		// client's first bytes that were no CLC says the SYN-ACK is not
		// in the capture (missed, or damaged past knowing).
		t.noSYNACKFallback(c, in)
	}
	if s.fin {
		f.FIN = true
		switch {
		case f.finSentFrame != 0:
		case !s.mayBeDamaged():
			f.finSentFrame = in.number
		case !s.syn && !s.away && f.finCopy.frame == 0:
			f.finCopy = finCopy{frame: in.number, end: s.seq + uint32(s.payload) + 1}
		}
	}
	if s.rst {
		f.RST = true
	}
	if (s.fin || s.rst) && f.finFrame == 0 {
		// Whether the SMC side was closed first is decided later
		// (endWithoutClose): its CDC may be captured after the FIN.
		f.finFrame, f.finNS = in.number, in.ns
	}
	if s.rst {
		// The connection is gone, whatever its SMC side said.
		t.endEpisodes(c, in, d, true)
	}
	if s.payload > 0 {
		f.TCPBytes += uint64(s.payload)
	}
	if f.haveTCPNext && s.seq != f.tcpNext && nextCLCAt(c, d, s, in) {
		// A damaged copy away from its stream's place whose one whole
		// message is the handshake's next step from this side (a
		// Proposal first, a Confirm or Decline after the Accept, an
		// Accept or Decline after the Proposal): its sequence number is
		// the damage; no other message could stand there.
		s.seq = f.tcpNext
	}
	if d == DirC2S && c.synAckUnsure && s.ack && !s.syn {
		if sum := s.sums(); sum.Checked && sum.OK {
			c.synAckUnsure = false
			if o := &c.Flow[DirS2C]; o.haveTCPNext && o.tcpNext != s.ackNum && o.TCPBytes == 0 && !o.FIN {
				// The client's first segment whose checksum verifies
				// acknowledges another initial sequence number than
				// the SYN-ACK's, whose checksum did not: that was the
				// damage (clcFlow.synAckDamaged likewise). The
				// server's bytes count from the one acknowledged.
				o.tcpNext, o.damagedHid = s.ackNum, 0
			}
		}
	}
	t.finProof(c, d, s, in)
	resent, replaces, refresh := t.tcpSeq(c, d, s, in)
	if (s.sumBad || s.ipSumBad) && (s.payload > 0 || s.fin && !s.syn || s.flagsLost) && (!resent || s.away) && len(f.sumPend) < maxSumPend {
		// Settled by the wire (tcpSeq): sent again, or acknowledged.
		// (One whose bytes framed no message is as a malformed one: its
		// copy sent again is read in its place.) One away from its
		// place may be so behind it: its sequence number the damage.
		// A FIN takes a sequence number of its own; a segment whose
		// flags were damage may have been one, where its place is
		// covered (damagedGap). A header whose length is not the
		// direction's took its payload's bytes, or gave it some: the
		// data offset damaged (the IP length holds).
		end := s.seq + uint32(s.payload+s.hidden(c.tcpHdrOf(d)))
		if s.fin {
			end++
		}
		malformed := s.payload > 0 && (s.clcErrs > 0 || in.clcN == 0)
		f.sumPend = append(f.sumPend, seqSpan{s.seq, end, malformed, s.away || s.flagsLost, in.number, s.flagsLost, !malformed && in.clcN > 0})
	}
	if replaces && c.clcDamaged && !c.clcCut && !c.clcHole && c.Flow[0].TCPNotCaptured == 0 && c.Flow[1].TCPNotCaptured == 0 {
		// The damaged message sent again whole: the handshake is
		// followed from it as if the damaged copy had not been.
		c.clcUncaptured, c.clcDamaged = false, false
		t.unpend(c)
	}
	if s.damage() != "" && s.payload > 0 && !resent && in.clcN == 0 && s.clcErrs == 0 && c.Outcome == OutcomePending && c.offeredSMC() && !c.clcUncaptured {
		// A damaged segment of the handshake whose bytes frame no CLC
		// message (the capture passes them over): a message may have
		// been there, as in bytes the capture missed.
		c.clcUncaptured, c.clcDamaged = true, true
		t.awaitServerHalf(c, in)
	}
	if resent && !replaces {
		// Bytes the capture showed already: a TCP retransmission, or a
		// copy the capture made (two hosts' captures merged), that the
		// CLC reassembly took for a new message after the handshake's
		// stream was done. The handshake took its step the first time;
		// unless the first time was a damaged segment whose message did
		// not decode: the receiver dropped it and read this one. Where
		// it decoded, this copy says what the receiver read.
		if refresh {
			for i := range in.clcN {
				t.refreshCLC(c, d, &in.clc[i], in)
			}
		}
		in.clcN = 0
	}
	if s.fin && c.Outcome == OutcomePending && !c.clcUncaptured && f.haveTCPNext && int32(s.seq-f.tcpNext) > 0 {
		// A FIN past bytes of its own direction the capture never showed
		// (what the peer's ACK would say, where the capture holds no ACK
		// of them: a capture of one direction): a CLC message may be
		// among them.
		c.clcUncaptured, c.clcHole = true, true
		t.awaitServerHalf(c, in)
	}
	if s.cut > 0 && !resent && c.Outcome == OutcomePending {
		// The snap length cut the handshake's bytes: as bytes the
		// capture missed, nothing is inferred from them (bytes the
		// capture showed whole before are not missed), unless the
		// segment whole comes after its cut copy (feedCLCOfCut).
		c.cutSegs = min(c.cutSegs+1, 255)
		c.cutUnread[d] = 0
		for i := range in.clcN {
			if in.clc[i].uncaptured {
				c.cutUnread[d]++
			}
		}
		if !c.clcUncaptured {
			c.clcUncaptured, c.clcCut = true, true
			t.awaitServerHalf(c, in)
		}
	}
	switch {
	case !s.notCLC || in.clcN != 0 || c.Outcome != OutcomePending || !c.offeredSMC():
	case s.damage() != "" || c.clcUncaptured && s.mayBeDamaged():
		// Bytes that are not CLC in a damaged copy say nothing of what
		// the sender sent: its receiver read another copy, or none. So
		// where handshake bytes before them were missed or damaged, a
		// checksum failing as held, unjudged, is enough to wait for the
		// next segment (a capture point's checksum offload fails its own
		// host's, not its peer's).
	case !c.SeenSYNACK:
		// The SYN-ACK is not in the capture yet (two hosts' captures
		// merged, their clocks apart, show the client's first bytes
		// before it): whether the server offered SMC decides when it
		// comes.
		if len(c.CLCTypes) == 0 && c.noCLCEarly == nil {
			cause := CauseNoCLC
			if c.clcUncaptured {
				// Handshake bytes before these the capture missed or
				// holds damaged: what they held decides.
				cause = CauseUncaptured
			}
			c.noCLCEarly = &Fallback{Cause: cause, By: d, Stage: StageProposal, Frame: in.number, Time: in.ts()}
		}
	case !c.OptionSYNACK:
	case c.clcUncaptured:
		// Application data on the connection: its handshake ended in a
		// fallback, for a reason the bytes the capture missed held (the
		// peer's Decline, or its Proposal that this side declined).
		c.Outcome = OutcomeFallback
		c.Fallback = Fallback{Cause: CauseUncaptured, By: d, Stage: declineStage(c), Frame: in.number, Time: in.ts()}
		t.raise(&c.expert, expert.Fallback, in)
	case len(c.CLCTypes) == 0:
		// Both sides offered SMC but the stream, reassembled, starts with
		// bytes that are not CLC. Judged on the stream, not the segment: a
		// Proposal split into segments of fewer than 4 bytes, or whose
		// second half arrives first, is still a Proposal.
		c.Outcome = OutcomeFallback
		c.Fallback = Fallback{Cause: CauseNoCLC, By: d, Stage: StageProposal, Frame: in.number, Time: in.ts()}
		t.raise(&c.expert, expert.Fallback, in)
		t.raise(&c.expert, expert.OptionEchoed, in)
	}
	if s.clcErrs > 0 || s.retyped > 0 {
		// A message read as the type its sender sends (retype) does not
		// decode as carried: malformed all the same, no error of the
		// handshake's.
		t.raiseText(&c.expert, expert.Malformed, in, func() string {
			if what := s.damage(); what != "" {
				return s.clcErr + " (in a segment whose " + what + " fails: a damaged copy)"
			}
			return s.clcErr
		})
	}
	if s.clcErrs > 0 && c.Outcome == OutcomeFallback {
		// A malformed message's header says what step it is, which
		// undoes a fallback as a whole one's would.
		for i := range in.clcN {
			if m := &in.clc[i]; m.malformed && !m.inside && !m.uncaptured {
				c.noCLCUndone(m.typ, d)
			}
		}
	}
	if s.clcErrs > 0 && c.Outcome == OutcomePending && c.Failure == "" && s.damage() != "" {
		// The receiver's TCP dropped the segment (or took an undamaged
		// copy the capture's is not): it never read the malformed
		// message, which is as if the capture had missed it. The
		// message the receiver read is told by what the peers did
		// next (a copy sent again, the CLC, LLC or CDCs that follow).
		if !c.clcUncaptured {
			c.clcUncaptured, c.clcDamaged = true, true
			t.awaitServerHalf(c, in)
		}
		if rec {
			t.note(c, in, d, "CLC", "malformed, a damaged copy: "+s.clcErr)
		}
	} else if s.clcErrs > 0 && c.Outcome == OutcomePending && c.Failure == "" {
		// Linux's receiver fails the handshake on it (EPROTO, no Decline);
		// a Decline or a later CLC still decides if one follows.
		c.Failure, c.failedMalformed, c.malformedDir = "malformed CLC from the "+sender(d)+": "+s.clcErr, true, d
		c.malformedType, c.malformedAt = 0, in.ts()
		for i := range in.clcN {
			if m := &in.clc[i]; m.malformed && !m.inside && !m.uncaptured {
				c.malformedType = m.typ
				break
			}
		}
		// (smc.malformed's detail is this message's where this frame
		// raised it first: malformedWasCopy may add to it.)
		m := c.expert.find(expert.Malformed)
		c.malformedOwn = m != nil && m.first == in.number
		// Its checksum not judged (no segment of the connection verified
		// to vouch that a failing one is damage, not a capture edited
		// without them): what the link's traffic shows may still tell
		// (failPending).
		c.malformedUnjudged = s.frame != nil && !s.frame.TCPSum.Checked
		if c.malformedUnjudged {
			switch sum := s.frame.TCPSumAnyway(); {
			case sum.Checked && !sum.OK:
				c.malformedSum = "TCP checksum"
			case sum.IPSumBad:
				c.malformedSum = "IPv4 header checksum"
			}
		}
		if rec {
			t.note(c, in, d, "CLC", "malformed: "+s.clcErr)
		}
	}
	if c.refusedDecline != nil && c.Outcome == OutcomePending && s.payload > 0 && in.clcN == 0 && s.clcErrs == 0 &&
		(d != c.declinedAt.dir || s.seq != c.declinedAt.seq) {
		// Payload after a Decline, whatever its shape, is the fallback:
		// its sender switched to TCP (smc_switch_to_fallback after
		// smc_clc_send_decline, net/smc/af_smc.c) and its receiver, a
		// kernel that took the Decline, did too; one that refused it
		// ends the connection with EPROTO and no data would flow.
		c.Outcome, c.Fallback, c.Failure = OutcomeFallback, *c.refusedDecline, ""
		t.raise(&c.expert, expert.Fallback, in)
		c.refusedDecline = nil
	}
	if c.TClose.IsZero() && (s.rst || (c.Flow[0].FIN && c.Flow[1].FIN)) &&
		(c.Outcome == OutcomeFallback || c.Outcome == OutcomePending) {
		c.TClose = in.ts()
		t.failPending(c, in)
	}
	if rec && (in.clcN == 0 || s.syn || s.fin || s.rst) {
		t.note(c, in, d, "TCP", tcpInfo(s))
	}
	for i := range in.clcN {
		t.clc(c, d, &in.clc[i], in, rec)
	}
}

// refreshCLC reads m, a CLC message of direction d of c in a verified copy
// of a segment whose damaged copy the handshake took its step from (the
// segment sent again, or the capture's other copy of it): the receiver
// read this one. What the damaged copy may have said wrong and nothing
// after it mends is taken from it: the first PSN of the Accept's or the
// Confirm's sender, where its direction of the link has sent nothing,
// and its RMBE's size.
func (t *Tracker) refreshCLC(c *Conn, d Dir, m *clcIn, in *input) {
	if m.smcd || c.SMCD || m.inside {
		return
	}
	switch {
	case m.typ == decode.CLCTypeAccept && d == DirS2C && c.epDamaged[DirC2S]:
		c.ServerEP.PSN = m.ep.PSN
		if c.sizeDamaged[DirC2S] {
			c.ServerEP.RMBESize, c.sizeDamaged[DirC2S] = m.ep.RMBESize, false
		}
		t.announcedAgain(c, DirS2C, &m.ep, in)
	case m.typ == decode.CLCTypeConfirm && d == DirC2S && c.epDamaged[DirS2C]:
		c.ClientEP.PSN = m.ep.PSN
		if c.sizeDamaged[DirS2C] {
			c.ClientEP.RMBESize, c.sizeDamaged[DirS2C] = m.ep.RMBESize, false
		}
		t.announcedAgain(c, DirC2S, &m.ep, in)
	}
}

// maxSumPend bounds the damaged segments a direction holds for the wire's
// word: the handshake's few CLC segments are the ones checked.
const maxSumPend = 8

// tcpSeq follows which bytes of each direction the capture showed, and
// tells the capture's gaps from what the peer's ACK covers: bytes the
// peer acknowledged that the capture never showed were missed by the
// capture, not lost (Wireshark's "ACKed segment that wasn't captured").
// A handshake that misses bytes is not judged by what is missing. It
// reports whether the segment's bytes were all shown before (resent), and
// whether they are those of a damaged segment whose CLC message did not
// decode (replaces) or did (refresh).
func (t *Tracker) tcpSeq(c *Conn, d Dir, s *tcpIn, in *input) (resent, replaces, refresh bool) {
	f := &c.Flow[d]
	end := s.seq + uint32(s.payload)
	if s.syn || s.fin {
		end++
	}
	// Before tcpNext and outside the last bytes an ACK covered unseen:
	// shown before. (Not before the first the capture showed: those it
	// never showed, a damaged SYN's sequence number put them there; told
	// while the direction has shown less than 1 GiB, far from the
	// sequence space's wrap.)
	beforeFirst := int32(s.seq-f.tcpFirst) < 0 && f.tcpNext-f.tcpFirst < 1<<30
	again := (s.payload > 0 || s.fin) && !s.syn && f.haveTCPNext && int32(end-f.tcpNext) <= 0 &&
		!beforeFirst && (int32(end-f.tcpLate) <= 0 || int32(s.seq-f.tcpLateEnd) >= 0)
	resent = again && s.payload > 0
	if again && len(f.sumPend) > 0 {
		// A copy of a segment whose checksum failed: the receiving host
		// dropped that one.
		f.sumPend = slices.DeleteFunc(f.sumPend, func(p seqSpan) bool {
			if int32(p.seq-s.seq) >= 0 && int32(end-p.end) >= 0 {
				f.SumResent++
				replaces = replaces || p.malformed
				refresh = refresh || p.clc
				return true
			}
			return false
		})
	}
	// The sequence numbers the segment takes: its bytes, and its FIN.
	span := uint32(s.payload)
	if s.fin {
		span++
	}
	if span > 0 && !s.syn && f.tcpLateEnd != f.tcpLate && in.ns-f.tcpLateNS <= int64(lateMax) &&
		int32(s.seq-f.tcpLate) >= 0 && int32(s.seq-f.tcpLateEnd) < 0 {
		// Bytes (or a FIN) the peer's ACK covered, shown just after it:
		// the capture put the two directions out of order, it did not
		// miss them (a sender resends acknowledged bytes never).
		n := uint64(min(span, f.tcpLateEnd-s.seq))
		if s.fin && f.FINNotCaptured {
			f.FINNotCaptured = false
		}
		f.TCPNotCaptured -= min(n, f.TCPNotCaptured)
		f.TCPReordered += n
		f.tcpLate = s.seq + uint32(n)
		t.raise(&c.expert, expert.CaptureReordered, in)
		if c.clcUncaptured && !c.clcCut && c.Flow[0].TCPNotCaptured == 0 && c.Flow[1].TCPNotCaptured == 0 {
			// The handshake's bytes are all there after all.
			c.clcUncaptured = false
		}
	}
	s.away = false
	switch {
	case !f.haveTCPNext, s.syn && int32(end-f.tcpNext) > 0:
		// A SYN sent again, or copied by the capture (two hosts'
		// captures merged), after the bytes that followed it moves
		// nothing back.
		if !f.haveTCPNext {
			f.tcpFirst = s.seq
		}
		f.tcpNext, f.haveTCPNext, f.aheadSeen = end, true, false
		f.tcpNextFrame, f.damagedHid = in.number, 0
	case s.damage() != "" && !s.syn && s.seq != f.tcpNext:
		// A damaged copy away from where the stream goes on: its
		// sequence number may be the damage (clcStream.Accept leaves
		// it out likewise).
		s.away = true
	case int32(s.seq-f.tcpNext) <= 0:
		if int32(end-f.tcpNext) > 0 {
			if s.damage() == "" && !resent {
				f.awayResent(span)
			}
			f.tcpNext, f.tcpNextFrame = end, in.number
			f.damagedHid = 0
			switch h := c.tcpHdrOf(d); {
			case s.damage() == "":
			case h == 0:
				f.damagedHid = hidUnknown
			default:
				f.damagedHid = int32(max(s.hidden(h), 0))
			}
		}
		if f.aheadSeen && int32(f.tcpAhead-f.tcpNext) <= 0 {
			f.aheadSeen = false
		}
	case !f.aheadSeen || int32(s.seq-f.tcpAhead) < 0:
		f.tcpAhead, f.aheadSeen = s.seq, true
	}
	if !s.ack || s.rst {
		return
	}
	o := &c.Flow[d.Reverse()]
	if len(o.sumPend) > 0 {
		// The peer acknowledges a segment whose checksum failed, none
		// sent again: it took it, and the capture's copy is damaged.
		o.sumPend = slices.DeleteFunc(o.sumPend, func(p seqSpan) bool {
			if !p.away && int32(s.ackNum-p.end) >= 0 {
				o.SumCopyDamaged++
				return true
			}
			return false
		})
	}
	if s.syn && !o.haveTCPNext {
		// A SYN-ACK whose SYN the capture lacks (a capture of one
		// direction) acknowledges the peer's initial sequence number:
		// the peer's bytes count from there, and an ACK of them that the
		// capture never showed says so.
		o.tcpNext, o.tcpFirst, o.haveTCPNext, o.tcpNextFrame = s.ackNum, s.ackNum, true, in.number
		return
	}
	if !o.haveTCPNext || int32(s.ackNum-o.tcpNext) <= 0 || int32(s.ackNum-o.tcpNext) > 1<<20 {
		return
	}
	if sum := s.sums(); sum.Damaged() {
		// An acknowledgement number in a damaged copy is no word of the
		// peer's (checked only here, where it would say bytes were
		// missed: the segments that do not are most).
		return
	}
	missed := s.ackNum - o.tcpNext
	if o.aheadSeen && int32(o.tcpAhead-s.ackNum) < 0 {
		missed = o.tcpAhead - o.tcpNext
	}
	rest, fin := o.damagedGap(missed)
	if rest > 0 && len(t.unread) > 0 {
		var unreadFIN bool
		rest, unreadFIN = t.unreadTCP(c, d.Reverse(), rest, in)
		fin = fin || unreadFIN
	}
	if rest < missed {
		// Damaged copies shown away from their place (their sequence
		// numbers damaged too), one in place whose length was the
		// damage, or frames damaged past reading: the bytes the peer
		// took, which the capture holds damaged, not missed; the rest,
		// if any, it missed.
		if rest > 0 {
			o.TCPNotCaptured += uint64(rest)
			o.tcpLate, o.tcpLateEnd, o.tcpLateNS = s.ackNum-rest, s.ackNum, in.ns
			t.raise(&c.expert, expert.NotCaptured, in)
		}
		o.tcpNext, o.tcpNextFrame, o.aheadSeen, o.damagedHid = s.ackNum, in.number, false, 0
		if fin && !o.FIN && !o.RST {
			// The damaged copy whose flags were damage was the FIN.
			o.FIN = true
		}
		if c.Outcome == OutcomePending && !c.clcUncaptured && !(fin && missed == 1) {
			// (The FIN alone holds no CLC byte.)
			c.clcUncaptured, c.clcDamaged = true, true
			t.awaitServerHalf(c, in)
		}
		return
	}
	if missed == 1 && o.tcpNext+1 == s.ackNum && !o.FIN && !o.RST && c.Outcome != OutcomeFallback {
		// One sequence number acknowledged unseen where it ends the
		// direction's stream, on a connection whose TCP carries CLC
		// messages only (8 bytes at least, RFC 7609 section 3.3.1; the
		// data goes by RDMA or the DMB): its FIN, which takes one (RFC
		// 9293 section 3.4).
		o.FIN, o.FINNotCaptured = true, true
		o.tcpLate, o.tcpLateEnd, o.tcpLateNS = o.tcpNext, s.ackNum, in.ns
		o.tcpNext, o.tcpNextFrame, o.aheadSeen, o.damagedHid = s.ackNum, in.number, false, 0
		t.raise(&c.expert, expert.NotCaptured, in)
		return resent, replaces, refresh
	}
	o.TCPNotCaptured += uint64(missed)
	o.tcpLate, o.tcpLateEnd, o.tcpLateNS = o.tcpNext, o.tcpNext+missed, in.ns
	o.tcpNext, o.tcpNextFrame, o.aheadSeen, o.damagedHid = s.ackNum, in.number, false, 0
	t.raise(&c.expert, expert.NotCaptured, in)
	if c.Outcome == OutcomePending && !c.clcUncaptured {
		c.clcUncaptured = true
		t.awaitServerHalf(c, in)
	}
	return resent, replaces, refresh
}

// dataOffsetSlack is the most payload a TCP header's damaged data offset
// can hide: a header of 60 bytes read where 20 were sent (RFC 9293
// section 3.1).
const dataOffsetSlack = 40

// hidUnknown is Flow.damagedHid where no whole segment of the connection
// told its header length.
const hidUnknown = -1

// tcpHdrOf is the TCP header length of direction d's last segment after
// its SYN that was no damaged copy, or where it has none yet, the other
// direction's (both send the options they agreed in the handshake, RFC
// 7323's timestamps alike): 0 where neither has one.
func (c *Conn) tcpHdrOf(d Dir) int {
	if h := c.Flow[d].tcpHdr; h != 0 {
		return h
	}
	return c.Flow[d.Reverse()].tcpHdr
}

// damagedGap settles, of missed bytes the peer's ACK covers past tcpNext
// that the capture did not show in place, those it holds damaged:
// copies shown away from their place since tcpNext last moved (their
// sequence numbers damaged: their lengths tell), as many as fit, each
// counted in SumCopyDamaged, a segment whose flags were damage taking the
// FIN's sequence number where one is left over; and where a damaged
// segment in place ends at tcpNext, the bytes of its payload its damaged
// header length hid (tcpIn.hidden), or where no whole segment told the
// header's length, up to dataOffsetSlack bytes in 4-byte words. It
// returns the bytes left, those the capture missed, and
// whether a copy settled was the direction's FIN, its flags damaged
// (seqSpan.finLost).
func (f *Flow) damagedGap(missed uint32) (rest uint32, fin bool) {
	var idx [maxSumPend]int
	n := 0
	for i, p := range f.sumPend {
		if p.away && p.frame > f.tcpNextFrame && n < len(idx) {
			idx[n], n = i, n+1
		}
	}
	var best uint32
	bestSet := 0
	for set := 1; set < 1<<n; set++ {
		var sum uint32
		for j := range n {
			if set&(1<<j) != 0 {
				p := f.sumPend[idx[j]]
				sum += p.end - p.seq
			}
		}
		if sum <= missed && sum > best {
			best, bestSet = sum, set
		}
	}
	rest = missed - best
	if rest > 0 {
		// One FIN at most, its sequence number the last: a segment
		// whose flags were damage, settled with the rest or on its own.
		for j := range n {
			if p := f.sumPend[idx[j]]; p.finLost && (bestSet&(1<<j) != 0 || p.end == p.seq) {
				bestSet |= 1 << j
				rest, fin = rest-1, true
				break
			}
		}
	}
	switch {
	case f.damagedHid > 0:
		rest -= min(rest, uint32(f.damagedHid))
	case f.damagedHid == hidUnknown && rest <= dataOffsetSlack && rest%4 == 0:
		// No whole segment of the connection tells its header length:
		// what a data offset damaged can hide, in 4-byte words.
		rest = 0
	}
	for j := n - 1; j >= 0; j-- {
		if bestSet&(1<<j) != 0 {
			f.sumPend = slices.Delete(f.sumPend, idx[j], idx[j]+1)
			f.SumCopyDamaged++
		}
	}
	return rest, fin
}

// finProof reads a whole segment of direction d against the FIN copies
// (Flow.finCopy) of both: the peer's ACK of exactly the sequence number
// after one (no data follows a FIN; an ACK past it says the flag was the
// damage), or the sender's next segment, an ACK alone, standing there
// (were the flag the damage, it would stand a number short), proves it
// its sender's FIN.
func (t *Tracker) finProof(c *Conn, d Dir, s *tcpIn, in *input) {
	if c.Flow[DirC2S].finCopy.frame == 0 && c.Flow[DirS2C].finCopy.frame == 0 {
		return // (every segment comes here: mayBeDamaged may sum it)
	}
	if s.syn || s.rst || s.mayBeDamaged() {
		return
	}
	if f := &c.Flow[d]; f.finCopy.frame != 0 && !f.finCopy.senderRead && f.finCopy.frame < in.number {
		f.finCopy.senderRead = true
		if s.seq == f.finCopy.end && s.payload == 0 && !s.fin {
			f.finProven()
		}
	}
	if o := &c.Flow[d.Reverse()]; o.finCopy.frame != 0 && s.ack && int32(s.ackNum-o.finCopy.end) >= 0 {
		if s.ackNum == o.finCopy.end {
			o.finProven()
		} else {
			o.finCopy = finCopy{}
		}
	}
}

// finProven takes the FIN copy as this direction's FIN.
func (f *Flow) finProven() {
	if f.finSentFrame == 0 {
		f.finSentFrame = f.finCopy.frame
	}
	f.finCopy = finCopy{}
}

// awayResent settles a damaged copy shown away from its place since
// tcpNext last moved whose n bytes a segment in place, one that verifies,
// now shows: sent again, the receiving host having dropped the damaged
// one (its sequence number damaged too: its length tells).
func (f *Flow) awayResent(n uint32) {
	i := slices.IndexFunc(f.sumPend, func(p seqSpan) bool { return p.away && p.frame > f.tcpNextFrame && p.end-p.seq == n })
	if i >= 0 && n > 0 {
		f.sumPend = slices.Delete(f.sumPend, i, i+1)
		f.SumResent++
	}
}

// awaitServerHalf: a connection with the server's Accept but not (yet)
// the client's Confirm waits in pendingHalf from the Accept on: the
// client sends its CDCs, and the server its first CONFIRM_LINK, only once
// the Confirm was sent, so the first C->S CDC to the Accept's QP with its
// token (claimHalf) or that CONFIRM_LINK (halfAnnounced) places it where
// the capture missed the Confirm, whether or not an ACK of its bytes
// came first (a peer's delayed ACK comes after the first CDCs). Its
// Confirm, when the capture holds it, places it as usual.
//
// A handshake whose Accept and Confirm the capture both missed (blind)
// waits there too once the capture is known to have missed its bytes:
// its connection's first CDC may still name it (claimFirst).
func (t *Tracker) awaitServerHalf(c *Conn, in *input) {
	if (c.ServerEP.Valid && !c.ClientEP.Valid || c.blind()) && !c.SMCD && c.link == nil && !slices.Contains(t.pendingHalf, c) {
		t.addPendingHalf(c)
		t.adoptJoined(c, in, false)
	}
}

// adoptJoined: a blind handshake c whose first sign of bytes the capture
// missed came after its connection's CDCs (the FIN, or an ACK past the
// CLC messages, follows the data when the capture lost the handshake
// and its ACKs together) is the connection joined from CDCs that came up
// in the capture (a CDC of sequence 1), after c's SYN, between c's hosts,
// where there is one such connection and c is the one handshake of
// those hosts, without a CLC message the capture showed, that could be
// its; with young, also one whose first CDCs followed are among its
// first (Conn.young). Elsewhere the two stay apart: which handshake a
// connection is cannot be told. A group built from traffic alone whose
// roles were guessed the other way round turns (flip): the handshake
// names them.
func (t *Tracker) adoptJoined(c *Conn, in *input, young bool) {
	if !c.blind() {
		return
	}
	cands := t.joinedFor(c, young)
	if len(cands) == 0 {
		return
	}
	// Rarely reached (a joined connection that came up, between c's
	// hosts): the walk over every connection is not paid per handshake.
	hs := append(t.handshakesBeside(c), c)
	// alone: j could be no handshake's of hs but x's (a connection's
	// first CDC comes after its SYN).
	alone := func(x, j *Conn) bool {
		for _, y := range hs {
			if y != x && !j.TFirstCDC.Before(y.Start) {
				return false
			}
		}
		return true
	}
	// taken: hs[i] has a connection of its own other than j, one that no
	// other handshake could be: a handshake is one connection. Worked
	// out for a few handshakes and connections only (each handshake's
	// candidates are a walk of its hosts' groups): beyond, none is.
	deduce := len(hs) <= blindSet && len(cands) <= blindSet
	theirs, asked := make([][]*Conn, len(hs)), make([]bool, len(hs)) // joinedFor of hs[i]
	taken := func(i int, j *Conn) bool {
		if !deduce {
			return false
		}
		if !asked[i] {
			theirs[i], asked[i] = t.joinedFor(hs[i], young), true
		}
		return slices.ContainsFunc(theirs[i], func(k *Conn) bool { return k != j && alone(hs[i], k) })
	}
	// another: a handshake of hs but c (its last) could be k's.
	another := func(k *Conn) bool {
		for i, y := range hs[:len(hs)-1] {
			if !k.TFirstCDC.Before(y.Start) && !taken(i, k) {
				return true
			}
		}
		return false
	}
	var j *Conn
	for _, k := range cands {
		if another(k) {
			continue
		}
		if j != nil {
			return // two: which is c's cannot be told
		}
		j = k
	}
	if j == nil {
		return
	}
	client, server := c.Client.Addr(), c.Server.Addr()
	if g := j.lgr; !g.between(client, server) {
		if !t.flip(g, in) {
			return
		}
		g.settle()
	}
	t.adoptCameUp(c, j, in)
}

// blindSet bounds how many handshakes, and connections joined from CDCs,
// adoptJoined works out whose is whose among.
const blindSet = 8

// joinedFor lists the connections joined from CDCs that handshake c may
// be (adoptJoined): on a group between c's hosts (or one whose roles
// were guessed, the other way round), come up in the capture (a CDC of
// sequence 1, or on a group born in it; with young, among its first
// CDCs), their first CDC after c began.
func (t *Tracker) joinedFor(c *Conn, young bool) []*Conn {
	client, server := c.Client.Addr(), c.Server.Addr()
	var out []*Conn
	for _, g := range t.lgrs {
		if !g.between(client, server) && (!g.Inferred || g.rolesKnown || !g.between(server, client)) {
			continue
		}
		born := g.bornInCapture()
		for _, x := range g.conns {
			if !x.Inferred || x.finished || !x.cameUp && !born && !(young && x.young()) || x.link == nil || x.TFirstCDC.Before(c.Start) {
				continue
			}
			out = append(out, x)
		}
	}
	return out
}

// handshakesBeside lists the other handshakes between c's hosts, pending
// with no CLC endpoint or link, that a connection joined from CDCs may
// be. (A SYN alone whose checksum failed is a damaged copy's connection,
// which no SYN-ACK answered: no handshake.)
func (t *Tracker) handshakesBeside(c *Conn) []*Conn {
	client, server := c.Client.Addr(), c.Server.Addr()
	var out []*Conn
	for _, x := range t.conns {
		if x != c && !x.Inferred && x.link == nil && x.Outcome == OutcomePending && !x.ServerEP.Valid && !x.ClientEP.Valid &&
			!x.SMCD && x.Client.Addr() == client && x.Server.Addr() == server && t.damagedSYNAt(x) < 0 {
			out = append(out, x)
		}
	}
	return out
}

// adoptCameUp makes j, a connection joined from CDCs that came up in the
// capture, c's: c goes on j's link, j merges into it, and its bytes count
// from cursor 0.
func (t *Tracker) adoptCameUp(c, j *Conn, in *input) {
	t.placeBlind(c, j.link, in)
	t.merge(c, j)
	for d := range c.Flow {
		c.Flow[d].countFromZero(c.rmbeSize(Dir(d)), c.rmbeSize(Dir(d).Reverse()))
	}
}

// adoptByToken: c, whose Accept the capture holds and whose client's next
// CLC message was malformed, is the connection joined from CDCs between
// c's hosts that came up after the Accept (its first CDCs among its
// first youngSeq) and whose client's CDCs carry the token the Accept
// announced: a host gives each connection of a link group its own
// (smc_lgr_register_conn in net/smc/smc_core.c), and Linux sends no CDC
// on a connection whose handshake failed, so the malformed message was a
// damaged copy of the Confirm. One such connection only; it reports
// whether c was placed.
func (t *Tracker) adoptByToken(c *Conn, in *input) bool {
	if c.SMCD || c.link != nil || c.TAccept.IsZero() {
		return false
	}
	client, server := c.Client.Addr(), c.Server.Addr()
	var j *Conn
	for _, g := range t.lgrs {
		if !g.between(client, server) {
			continue
		}
		for _, x := range g.conns {
			if !x.Inferred || x.finished || x.link == nil || !x.hasTok[DirC2S] || x.tokens[DirC2S] != c.ServerEP.Token ||
				x.TFirstCDC.Before(c.TAccept) || !x.cameUp && !x.young() {
				continue
			}
			if j != nil {
				return false
			}
			j = x
		}
	}
	if j == nil {
		return false
	}
	failure := c.Failure
	c.Failure, c.failedMalformed, c.malformedUnjudged = "", false, false
	t.adoptCameUp(c, j, in)
	if t.recording(c) {
		t.note(c, in, DirC2S, "CLC", fmt.Sprintf("the malformed message was a damaged copy (%s): CDCs of the token its Accept announced came on", failure))
	}
	return true
}

// youngSeq is the highest first CDC sequence number followed of a
// connection joined from CDCs that young takes for one that came up
// shortly before (its first CDCs damaged or missed).
const youngSeq = 16

// young reports whether the first CDC followed of each direction of c
// that has one is among its first youngSeq: a connection that came up
// not long before, where the capture did not follow its first.
func (c *Conn) young() bool {
	n := 0
	for d := range c.Flow {
		f := &c.Flow[d]
		if f.CDCs == 0 {
			continue
		}
		if !f.haveFirstSeq || f.firstSeq > youngSeq {
			return false
		}
		n++
	}
	return n > 0
}

// blind reports whether c is an SMC handshake under way (an SMC SYN or
// CLC bytes made it a connection) whose Accept and Confirm the capture
// both missed (its ACKs cover their bytes, or a snap length cut them).
func (c *Conn) blind() bool {
	return c.Outcome == OutcomePending && c.clcUncaptured && !c.ServerEP.Valid && !c.ClientEP.Valid
}

// startConn creates a connection for a segment of an unknown 4-tuple, or
// returns nil when the segment is not SMC: a SYN without the SMC option,
// or a mid-stream segment without a CLC message.
func (t *Tracker) startConn(in *input, key tcpKey) *Conn {
	s := &in.tcp
	if s.ipSumBad && (!s.syn || s.ack) && !tupleVouched(s) {
		// Its addresses and ports may be the damage: a connection's
		// segment past reading as one (kept unread), no connection of
		// its own. (A SYN's begins one all the same: its SYN-ACK or the
		// client's next segment may show the 4-tuple it was sent with,
		// keepDamagedSYN.)
		return nil
	}
	var client, server = s.src, s.dst
	if s.syn {
		if !s.smcOpt && !damagedSMCOption(s) {
			return nil
		}
		s.smcOpt = true
	}
	if s.syn && !s.ack && s.mayBeDamaged() {
		// Its flags may be the damage. A client's SYN acknowledges
		// nothing, its acknowledgement number 0 (tcp_connect_init in
		// net/ipv4/tcp_output.c sets rcv_nxt 0): one whose number has
		// two bytes or more set is the server's SYN-ACK, its ACK bit
		// lost. RST or FIN beside SYN no sender sets, and a listener
		// drops (tcp_rcv_state_process in net/ipv4/tcp_input.c).
		s.ack = setBytes(s.ackNum) >= 2
		s.rst, s.fin = false, false
	}
	switch {
	case s.syn && !s.ack:
	case s.syn:
		client, server = s.dst, s.src
	case in.clcN > 0:
		if t.damagedCLCCopy(in) {
			return nil
		}
		// Capture started after the SYNs: the CLC type says who sends.
		switch in.clc[0].typ {
		case decode.CLCTypeProposal, decode.CLCTypeConfirm:
		case decode.CLCTypeAccept:
			client, server = s.dst, s.src
		default:
			// A Decline, which either end sends, or a type no CLC
			// message has (its byte damaged): the client is the end
			// whose port is the higher, the ephemeral one.
			if s.dst.Port() > s.src.Port() {
				client, server = s.dst, s.src
			}
		}
	default:
		return nil
	}
	c := t.newConn(in)
	c.Client, c.Server = client, server
	sum := s.sums()
	c.damagedStart = sum.Damaged()
	t.tuple(c)
	if !s.syn || s.ack {
		for i := range t.cutSYNs {
			if y := &t.cutSYNs[i]; y.ns != 0 && y.key == key && y.client == client && y.ns <= in.ns {
				// Its SYN is in the capture, its options cut: the
				// handshake is timed from there.
				c.TSYN, c.synSeq = time.Unix(0, y.ns), y.seq
				*y = cutSYN{}
			}
		}
	}
	return c
}

// damagedCLCCopy reports whether the segment in in, which carries CLC
// messages and names no connection followed, is a live connection's
// copy damaged past reading as one: its TCP checksum fails (computed: no
// segment of its 4-tuple was judged), its client end (as its first
// message's type says) is that connection's and its server end one field
// off (its sequence number damaged too, or damagedTuple would have taken
// it), so it begins no connection of its own. (A client's port a byte
// off is another connection's: consecutive ephemeral ports differ so.)
func (t *Tracker) damagedCLCCopy(in *input) bool {
	s := &in.tcp
	client, server := s.src, s.dst
	switch in.clc[0].typ {
	case decode.CLCTypeProposal, decode.CLCTypeConfirm:
	case decode.CLCTypeAccept:
		client, server = s.dst, s.src
	default:
		return false
	}
	c := t.byClient(client)
	if c == nil || c.Server == server || tupleOff(client, server, c.Client, c.Server) != 1 {
		return false
	}
	sum := s.sums()
	return sum.Damaged()
}

// byClient finds the live connection, among the last tupleScan, whose
// client end is client.
func (t *Tracker) byClient(client netip.AddrPort) *Conn {
	for i := len(t.conns) - 1; i >= max(0, len(t.conns)-tupleScan); i-- {
		c := t.conns[i]
		if c.Client == client && t.byTuple[makeTCPKey(c.Client, c.Server)] == c && !c.Closed() {
			return c
		}
	}
	return nil
}

// tupleVouched reports whether s's TCP checksum verifies as held: it
// covers the addresses (its pseudo-header) and the ports, so an IPv4
// header whose checksum fails was damaged elsewhere (its type of service,
// identification or TTL).
func tupleVouched(s *tcpIn) bool {
	if s.frame == nil {
		return false
	}
	sum := s.frame.TCPSumAnyway()
	return sum.Checked && sum.OK
}

// setBytes counts the bytes of x that are not 0.
func setBytes(x uint32) (n int) {
	for ; x != 0; x >>= 8 {
		if x&0xFF != 0 {
			n++
		}
	}
	return n
}

// cutSYN is a SYN (or, ack, a SYN-ACK) whose options a snap length cut
// (Tracker.cutSYNs); client is its sender.
type cutSYN struct {
	key    tcpKey
	client netip.AddrPort
	seq    uint32
	ns     int64
	ack    bool
}

func tcpInfo(s *tcpIn) string {
	var b strings.Builder
	flag := func(on bool, name string) {
		if on {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			b.WriteString(name)
		}
	}
	flag(s.syn, "SYN")
	flag(s.ack && (s.syn || s.fin), "ACK")
	flag(s.fin, "FIN")
	flag(s.rst, "RST")
	if b.Len() == 0 {
		b.WriteString("ACK")
	}
	if s.syn {
		if s.smcOpt {
			b.WriteString(" with SMC option")
		} else {
			b.WriteString(" WITHOUT SMC option")
		}
	}
	if s.payload > 0 {
		fmt.Fprintf(&b, " %d B payload", s.payload)
	}
	return b.String()
}

// clc advances the handshake with one CLC message sent in direction d.
func (t *Tracker) clc(c *Conn, d Dir, m *clcIn, in *input, rec bool) {
	if m.uncaptured {
		// As bytes the capture missed (tcp: the snap length cut it), but
		// for what its header says.
		if !m.inside && !m.malformed {
			t.cutStep(c, d, m, in, rec)
		}
		return
	}
	if m.malformed {
		// A kernel of today refuses it: no step of the handshake (the
		// segment's error made the connection's Failure). A refused
		// Decline still says its sender fell back: data after it
		// decides (tcp).
		if m.typ == decode.CLCTypeDecline && !m.inside && c.Outcome == OutcomePending && c.refusedDecline == nil {
			c.refusedDecline = &Fallback{Cause: CauseDecline, Code: m.decline, By: d, Stage: declinedStage(c, d),
				OutOfSync: m.flag, Frame: in.number, Time: in.ts()}
			c.declinedAt.dir, c.declinedAt.seq = d, in.tcp.seq
		}
		if m.typ == decode.CLCTypeConfirm && d == DirC2S && !m.inside && c.Outcome == OutcomePending &&
			c.ServerEP.Valid && !c.ClientEP.Valid && !c.SMCD && c.link == nil && !slices.Contains(t.pendingHalf, c) {
			// The server may have got this Confirm whole (its copy in
			// the capture damaged: TCP checksums are not checked): the
			// client's CDCs to the Accept's queue pair with its token
			// say it did, as for a Confirm the capture missed (claimHalf).
			t.addPendingHalf(c)
		}
		if m.typ == decode.CLCTypeConfirm && d == DirC2S && !m.inside {
			t.placeMalformedConfirm(c, m, in)
		}
		return
	}
	if (m.sentAs != 0 || !clcSender(m.typ, d)) && !t.wrongSender(c, d, m, in) {
		if rec {
			t.note(c, in, d, clcName(uint8(m.typ)), "from the "+sender(d)+", who sends none: no step of the handshake")
		}
		return
	}
	t.stats.CLC++
	if c.failedMalformed && c.malformedUnjudged && c.Outcome == OutcomePending && !m.inside {
		t.malformedAnswered(c, d, m.typ, in)
	}
	if c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseNoOptionSYNACK && clcSender(m.typ, d) {
		// A client whose SYN-ACK had no SMC option sends no Proposal
		// (__smc_connect falls back on !syn_smc, net/smc/af_smc.c), a
		// server that sent none answers none, and a client confirms
		// only an Accept: the SYN-ACK the capture shows is not the one
		// the client got (damaged in the capture, or changed past the
		// capture point). The handshake goes on from this message.
		c.Outcome, c.Fallback, c.OptionSYNACK = OutcomePending, Fallback{}, true
		c.expert.drop(expert.Fallback)
	}
	c.noCLCUndone(m.typ, d)
	if len(c.CLCTypes) < maxCLCTypes {
		c.CLCTypes = append(c.CLCTypes, uint8(m.typ))
	}
	switch m.typ {
	case decode.CLCTypeProposal:
		if c.TProposal.IsZero() {
			c.TProposal = in.ts()
		}
		if c.Version == 0 {
			c.Version = m.version
		}
		if c.EID == "" {
			c.EID = m.eid
		}
		c.Offered = m.offered
		c.proposed, c.proposedOK = m.gids, !in.tcp.mayBeDamaged()
	case decode.CLCTypeAccept:
		c.TAccept = in.ts()
		t.answered(c)
		c.epDamaged[DirC2S] = in.tcp.mayBeDamaged()
		c.sizeDamaged[DirC2S] = c.epDamaged[DirC2S]
		c.ServerEP = m.ep
		c.Version = m.version
		c.SMCD = m.smcd
		c.FirstContact = m.flag
		if m.eid != "" {
			c.EID = m.eid
		}
		t.awaitServerHalf(c, in)
		if c.ClientEP.Valid && c.link == nil && !c.SMCD && !c.halfPlaced &&
			(c.Outcome == OutcomeSMCR || c.Outcome == OutcomePending && c.AwaitingLink) {
			// The Confirm came first in the capture (the capture point
			// put the two directions out of order: its ACK covers this
			// Accept): the connection is placed now, as the Confirm
			// would have placed it.
			t.unpend(c)
			t.place(c, in, m)
			switch {
			case c.link == nil:
			case !linkConfirmed(c.link) && c.TFirstCDC.IsZero():
				c.Outcome, c.AwaitingLink = OutcomePending, true
			default:
				connUp(c)
			}
		}
	case decode.CLCTypeConfirm:
		c.TConfirm = in.ts()
		if !m.inside {
			// A client confirms only an Accept it took (__smc_connect
			// reads it in smc_connect_clc before smc_connect_rdma or
			// smc_connect_ism send the Confirm, net/smc/af_smc.c).
			handshakeRead(c)
		}
		c.epDamaged[DirS2C] = in.tcp.mayBeDamaged()
		t.slowHandshake(c, in, "Confirm")
		c.ClientEP = m.ep
		c.sizeDamaged[DirS2C] = c.epDamaged[DirS2C]
		c.FirstContact = c.FirstContact || m.flag // the Accept may be missing from the capture
		if c.epDamaged[DirS2C] && !m.smcd && (c.FirstContact || !wellFormedGID(m.ep.GID)) {
			c.ClientEP.GID = c.confirmedGID(m)
		}
		if c.Version == 0 {
			c.Version = m.version
		}
		if c.Outcome == OutcomePending && !m.inside {
			if m.smcd || c.SMCD {
				c.Outcome = OutcomeSMCD
			} else {
				c.Outcome = OutcomeSMCR
			}
		}
		// A Confirm inside a malformed message decides nothing, but its
		// QPN and token are still what the link's traffic carries: it ties
		// them to this connection, which stays pending (failed when TCP
		// closes, with the malformed message as the reason).
		smcr := c.Outcome == OutcomeSMCR || m.inside && c.Outcome == OutcomePending && !m.smcd && !c.SMCD
		if smcr && c.FirstContact && !m.inside {
			t.retireReused(&c.ClientEP, in)
		}
		switch {
		case smcr && c.link != nil:
			// Placed from its C->S CDCs already (claimHalf): a Confirm
			// delivered late, after bytes the capture missed.
			t.registerToken(c, DirS2C, c.ClientEP.Token)
			t.registerRMB(c, c.link, DirS2C, &c.ClientEP)
		case smcr && c.ServerEP.Valid:
			t.place(c, in, m)
		case smcr:
			t.placeClientHalf(c, in)
		}
		if c.Outcome == OutcomeSMCR && c.TFirstCDC.IsZero() &&
			(c.link != nil && !linkConfirmed(c.link) || c.link == nil && c.FirstContact) {
			// Linux uses the connection only once its link is active:
			// the first contact waits for CONFIRM_LINK (smc_listen_work,
			// smc_connect_rdma in net/smc/af_smc.c), a reusing one finds
			// an active link of the group, or waits for the first contact
			// under the same lock. A first contact whose Accept the
			// capture holds damaged has no link yet (pendingHalf): its
			// CONFIRM_LINK makes it (placeHalfLink).
			c.Outcome, c.AwaitingLink = OutcomePending, true
		}
	case decode.CLCTypeDecline:
		if m.inside {
			break // the receiver read it as part of an earlier message
		}
		t.declined(c, d, m, in, CauseDecline)
		if decode.DeclineCode(m.decline) == decode.DeclineCreditsErr {
			t.raise(&c.expert, expert.CreditsDecline, in)
		}
	}
	if rec {
		info := clcInfo(c, m)
		if m.sentAs != 0 {
			info += " [carried as a " + clcName(uint8(m.sentAs)) + ", which the " + sender(d) + " never sends]"
		}
		if m.inside {
			info += " [inside the malformed CLC before it: no step of the handshake]"
		}
		t.note(c, in, d, clcName(uint8(m.typ)), info)
	}
}

// retype reads each CLC message of s of a type its sender never sends
// (clcSender) as the one it sends where its bytes decode whole as that:
// an Accept and a Confirm share one layout (struct
// smc_clc_msg_accept_confirm, net/smc/smc_clc.h) and each side sends one
// of them, so one sent as the other differs in its type byte (and, as
// the other, may not decode: a first contact's Confirm carries a GID
// list the Accept's extension has no room for). A receiver refuses a type
// other than the one it awaits (smc_clc_wait_msg in net/smc/smc_clc.c:
// EPROTO), so a handshake that goes on says the capture's copy was
// damaged there; a Decline of its receiver still ends it. A type no
// message has, in a segment whose checksum fails as held, is read so as
// the step its sender takes next (an Accept, a Confirm after the Accept,
// else a Proposal).
func (t *Tracker) retype(c *Conn, d Dir, s *tcpIn, in *input) {
	for i := range in.clcN {
		m := &in.clc[i]
		if m.uncaptured || len(m.raw) <= clcTypeOff {
			continue
		}
		var as decode.CLCType
		switch {
		case m.typ == decode.CLCTypeAccept && d == DirC2S:
			as = decode.CLCTypeConfirm
		case m.typ == decode.CLCTypeConfirm && d == DirS2C:
			as = decode.CLCTypeAccept
		case m.typ >= decode.CLCTypeProposal && m.typ <= decode.CLCTypeDecline, !s.mayBeDamaged():
			continue
		case d == DirS2C:
			as = decode.CLCTypeAccept
		case c.ServerEP.Valid || slices.Contains(c.CLCTypes, uint8(decode.CLCTypeAccept)):
			as = decode.CLCTypeConfirm
		default:
			as = decode.CLCTypeProposal
		}
		t.clcBuf = append(t.clcBuf[:0], m.raw...)
		t.clcBuf[clcTypeOff] = byte(as)
		var c decode.CLC
		if c.DecodeFromBytes(t.clcBuf, gopacket.NilDecodeFeedback) != nil {
			continue
		}
		sent, inside, malformed := m.typ, m.inside, m.malformed
		fillCLC(m, &c, &in.eids)
		m.sentAs, m.inside = sent, inside
		if malformed && s.clcErrs > 0 {
			s.clcErrs--
			s.retyped++
		}
	}
}

// clcTypeOff is the type's offset in a CLC message (struct
// smc_clc_msg_hdr, net/smc/smc_clc.h: after the 4-byte eyecatcher).
const clcTypeOff = 4

// wrongSender raises smc.clc.wrong_sender on m, a CLC message of a type
// its sender never sends, read as the one it sends (retype) or, where it
// does not decode as that, no step; not on one retyped in a segment
// judged damaged. It reports whether m is a step.
func (t *Tracker) wrongSender(c *Conn, d Dir, m *clcIn, in *input) bool {
	if m.sentAs != 0 && in.tcp.damage() != "" {
		// Its segment's checksum fails where the connection's others
		// verify: the type byte is what the capture's copy damaged
		// (the segment's own finding says so), not what its sender's
		// stack did.
		return true
	}
	t.raiseText(&c.expert, expert.CLCWrongSender, in, func() string {
		if m.sentAs != 0 {
			return "a " + clcName(uint8(m.sentAs)) + " from the " + sender(d) + ", who never sends one: followed as its " + m.typ.String() + " (one layout)"
		}
		return "a " + clcName(uint8(m.typ)) + " from the " + sender(d) + ", who never sends one: no step of the handshake"
	})
	return m.sentAs != 0
}

// declined ends c's handshake in the fallback a Decline sent in
// direction d says (cause CauseDecline, or CauseDeclineCut for one whose
// code the snap length cut).
func (t *Tracker) declined(c *Conn, d Dir, m *clcIn, in *input, cause FallbackCause) {
	c.Outcome = OutcomeFallback
	c.Fallback = Fallback{Cause: cause, By: d, Stage: declinedStage(c, d), OutOfSync: m.flag, Frame: in.number, Time: in.ts(), ANCK: m.anck}
	if cause == CauseDecline {
		c.Fallback.Code = m.decline
	}
	t.raise(&c.expert, expert.Fallback, in)
	t.slowHandshake(c, in, "Decline")
	if c.TClose.IsZero() && c.lgr != nil {
		t.unregister(c) // the connection never uses the link
	}
	if c.Version == 0 {
		c.Version = m.version
	}
}

// cutStep takes the step that the header of m, a CLC message the snap
// length cut before the fields a whole step needs (clcIn.uncaptured),
// says on its own (struct smc_clc_msg_hdr, net/smc/smc_clc.h: type,
// version, path, flag; decode.CLC.DecodeCut checked it): when it came; a
// Decline, that its sender fell back to TCP (smc_clc_send_decline and
// smc_switch_to_fallback, net/smc/af_smc.c), for a reason the capture
// does not hold; an Accept's or Confirm's first-contact flag, and its
// SMC type: a Confirm ends an SMC-D handshake (nothing on the wire would
// place it later, as CDCs place an SMC-R one: claimFirst). The endpoint
// is not taken: its fields are not all in the capture.
func (t *Tracker) cutStep(c *Conn, d Dir, m *clcIn, in *input, rec bool) {
	// A Decline after the Confirm (the server's, its link or buffers
	// failed) overrides SMC-D, as a whole one does.
	if c.Outcome != OutcomePending && (c.Outcome != OutcomeSMCD || m.typ != decode.CLCTypeDecline) || !clcSender(m.typ, d) {
		return
	}
	kind, fc := "SMC-R", "reused link group"
	if m.smcd {
		kind = "SMC-D"
	}
	if m.flag {
		fc = "first contact"
	}
	info := fmt.Sprintf("%sv%d %s", kind, m.version, fc)
	switch m.typ {
	case decode.CLCTypeAccept:
		if c.TAccept.IsZero() {
			c.TAccept = in.ts()
		}
		c.Version, c.SMCD, c.FirstContact, c.cutHeader = m.version, m.smcd, m.flag, true
		c.cutPeer[DirS2C] = m.ep.PeerID // (zero where the cut left it out: absent)
	case decode.CLCTypeConfirm:
		if c.TConfirm.IsZero() {
			c.TConfirm = in.ts()
		}
		c.FirstContact, c.cutHeader = c.FirstContact || m.flag, true
		c.cutPeer[DirC2S] = m.ep.PeerID
		if c.Version == 0 {
			c.Version = m.version
		}
		if m.smcd || c.SMCD {
			c.SMCD = true
			c.Outcome = OutcomeSMCD
		}
	case decode.CLCTypeDecline:
		t.declined(c, d, m, in, CauseDeclineCut)
		c.Failure = ""
		info = fmt.Sprintf("v%d, the %s fell back to TCP", m.version, sender(d))
	default:
		return
	}
	if rec {
		t.note(c, in, d, clcName(uint8(m.typ)), "cut by the snap length, its header only: "+info)
	}
}

// declineStage is the handshake step a Decline sent now answers.
func declineStage(c *Conn) Stage {
	switch {
	case !c.TConfirm.IsZero():
		return StageLink
	case !c.TAccept.IsZero():
		return StageConfirm
	case !c.TProposal.IsZero():
		return StageAccept
	}
	return StageProposal
}

// sumsFilled: where c's handshake failed on a malformed CLC message whose
// segment's checksum failed with no segment of c's verifying before it
// (no telling a damaged copy from a capture whose checksums were never
// filled in: a host's transmit offload), a segment s of c's that the
// capture judged and whose checksum verifies says they are filled in
// (as clcFlow.checkSum judges with one that came before): that message
// was a damaged copy, its receiver never read it, and the handshake goes
// on as one whose bytes the capture holds damaged.
func (t *Tracker) sumsFilled(c *Conn, s *tcpIn, in *input) {
	if f := s.frame; f == nil || !f.TCPSum.Checked || !f.TCPSum.OK {
		return
	}
	what := c.malformedSum
	c.malformedSum = ""
	if !c.failedMalformed || c.Outcome != OutcomePending {
		return
	}
	c.malformedWasCopy("in a segment whose " + what + " fails: a damaged copy")
	if !c.clcUncaptured {
		c.clcUncaptured, c.clcDamaged = true, true
		t.awaitServerHalf(c, in)
	}
}

// placeMalformedConfirm: m, a malformed Confirm of c's, its checksum
// judged neither way and c's Accept not read either: the client's GID,
// queue pair and token this copy holds are still what the link's traffic
// carries where the server read it whole, as a Confirm's whose Accept
// the capture missed (placeClientHalf); the server's CDCs with its token
// then say it did (malformedCopy), else TCP's close fails it; where no
// one link fits, the handshake stays blind, for its link's traffic to
// place (adoptJoined, claimFirst). A first contact's, its Accept read or
// not, waits for its link (pendingHalf) with the client's end this copy
// names kept aside (Conn.malformedEP): the link's first CONFIRM_LINK from
// or to that queue pair says the server read it whole, where no Accept
// read names an end of the link (halfAnnounced).
func (t *Tracker) placeMalformedConfirm(c *Conn, m *clcIn, in *input) {
	if m.smcd || !m.ep.Valid || m.ep.QPN == 0 || c.Outcome != OutcomePending || !c.malformedUnjudged ||
		!m.flag && c.ServerEP.Valid || c.ClientEP.Valid || c.SMCD || c.link != nil {
		return
	}
	if m.flag {
		c.malformedEP = m.ep
		if !slices.Contains(t.pendingHalf, c) {
			t.addPendingHalf(c)
		}
		return
	}
	waiting := slices.Contains(t.pendingHalf, c)
	c.ClientEP, c.epDamaged[DirS2C] = m.ep, true
	t.placeClientHalf(c, in)
	switch {
	case c.link == nil:
		c.ClientEP, c.epDamaged[DirS2C] = Endpoint{}, false
		if !waiting {
			t.unpend(c)
		}
	case c.Version == 0:
		c.Version = m.version
	}
}

// malformedAnswered: a CLC message of c's in direction d after the
// malformed one c failed on, that message's checksum judged neither way,
// says its copy was damaged: Linux's receiver of a malformed message ends
// the handshake with EPROTO and sends nothing (smc_clc_wait_msg in
// net/smc/smc_clc.c fails; smc_listen_decline and
// smc_connect_decline_fallback send no Decline for a negative reason,
// net/smc/af_smc.c), so its peer's answer, or its sender's next step
// (made for an answer), or its sender's copy sent again, comes only where
// it was read whole. The handshake went on, the message's contents
// missing from what the capture tells. (Where the checksum verified, the
// bytes are the sender's, a hand-edited capture's among them, and mean
// what they hold: the failure stands.)
func (t *Tracker) malformedAnswered(c *Conn, d Dir, typ decode.CLCType, in *input) {
	why := "a damaged copy: the " + sender(d) + " answered it"
	if d == c.malformedDir {
		why = "a damaged copy: the " + sender(d) + " sent a " + clcName(uint8(typ)) + " after it"
	}
	c.malformedWasCopy(why)
	if !c.clcUncaptured {
		c.clcUncaptured, c.clcDamaged = true, true
		t.awaitServerHalf(c, in)
	}
}

// declinedStage is the handshake step a Decline sent now in direction d
// answers: a server's answers a Proposal at least, which it cannot send
// before one came (smc_listen_work in net/smc/af_smc.c reads the
// Proposal first), whether or not the capture holds it.
func declinedStage(c *Conn, d Dir) Stage {
	s := declineStage(c)
	if d == DirS2C && s == StageProposal {
		s = StageAccept
	}
	return s
}

// slowHandshake raises expert.HandshakeSlow on the CLC message (what)
// that ends c's handshake more than slowHandshake after its Proposal.
func (t *Tracker) slowHandshake(c *Conn, in *input, what string) {
	if c.TProposal.IsZero() {
		return
	}
	if d := in.ns - c.TProposal.UnixNano(); d > int64(slowHandshake) {
		t.raiseText(&c.expert, expert.HandshakeSlow, in, func() string {
			return "CLC Proposal to " + what + " " + lowerBound(msText(d), t.clock.steps.between(c.TProposal.UnixNano(), in.ns))
		})
	}
}

// linkConfirmed reports whether a link can carry connections: its
// CONFIRM_LINK exchange completed, or it was only ever seen carrying
// traffic (set up before the capture).
func linkConfirmed(l *Link) bool {
	switch l.State {
	case LinkConfirming, LinkAdding, LinkAdded:
		return false
	}
	return true
}

// linkUp makes SMC-R the outcome of the connections that waited for l.
func (t *Tracker) linkUp(l *Link) {
	for _, c := range l.conns {
		connUp(c)
	}
}

// connUp: c's link is confirmed (or c carries CDCs, which proves it),
// also where c was failed for want of that when its TCP closed: a CDC
// the capture gave c only later (a request kept out of sequence, a
// connection joined from CDCs merged into it) says it did not fail.
func connUp(c *Conn) {
	if c.failedMalformed && c.malformedUnjudged {
		c.handshakeWentOn()
	}
	if c.AwaitingLink && c.Outcome == OutcomePending {
		c.Outcome = OutcomeSMCR
	}
	if c.failedLink && c.Outcome == OutcomeFailed {
		c.Outcome, c.Failure, c.failedLink = OutcomeSMCR, "", false
		c.expert.drop(expert.HandshakeFailed)
	}
	c.AwaitingLink = false
}

// failPending ends a handshake that TCP closed while it waited for its
// link or after a malformed CLC message: no SMC, and no fallback either.
func (t *Tracker) failPending(c *Conn, in *input) {
	if c.Outcome != OutcomePending {
		return
	}
	if c.clcUncaptured && c.Failure == "" {
		// What decided it may be in the bytes the capture missed (a
		// malformed message before them decided already); a connection
		// joined from CDCs that came up between c's hosts after c began,
		// c the one handshake that could be its, says SMC-R
		// (adoptJoined, as for a malformed message below).
		if t.adoptJoined(c, in, true); c.Outcome != OutcomePending {
			return
		}
		c.Failure = uncapturedDetail(c)
		return
	}
	if !c.AwaitingLink && c.Failure == "" {
		return
	}
	if c.failedMalformed && c.malformedUnjudged && !c.ServerEP.Valid && !c.ClientEP.Valid {
		// A connection joined from CDCs that came up on a group between
		// c's hosts after c began, where c is the one handshake that
		// could be its (adoptJoined), says the malformed message was a
		// damaged copy after all: Linux sends no CDC on a connection
		// whose handshake failed.
		failure, uncaptured, damaged := c.Failure, c.clcUncaptured, c.clcDamaged
		c.Failure, c.failedMalformed, c.clcUncaptured, c.clcDamaged = "", false, true, true
		t.adoptJoined(c, in, true)
		if c.Outcome != OutcomePending {
			return
		}
		c.Failure, c.failedMalformed, c.clcUncaptured, c.clcDamaged = failure, true, uncaptured, damaged
	}
	if c.failedMalformed && c.malformedUnjudged && c.ServerEP.Valid && !c.ClientEP.Valid && t.adoptByToken(c, in) {
		return
	}
	if c.awaitsUnseenLink() {
		// Linux ends a link it could not confirm with a CLC Decline
		// (TIMEOUT_CL: smc_connect_decline_fallback and smc_listen_decline,
		// net/smc/af_smc.c) and falls back to TCP; the stream holds none,
		// so the connection ran SMC-R on a link the capture does not show
		// (Snapshot: LinkNotCaptured). The link carried it: up, in a state
		// the capture does not show.
		c.Outcome, c.AwaitingLink = OutcomeSMCR, false
		if c.link != nil {
			c.link.uncaptured, c.link.State = true, LinkUnknown
		}
		return
	}
	t.raise(&c.expert, expert.HandshakeFailed, in)
	if c.AwaitingLink {
		what := "no CONFIRM_LINK"
		if l := c.link; l != nil && (l.LinkID != 0 || l.RC[0].damagedShown+l.RC[1].damagedShown > 0) {
			// A damaged packet on a link not yet confirmed is a
			// CONFIRM_LINK message all the same: none other goes on
			// it before (smcr_serv_conf_first_link and
			// smcr_clnt_conf_first_link, net/smc/af_smc.c).
			what = "CONFIRM_LINK not answered"
		}
		if !c.FirstContact {
			what += " on the link group's first link"
		}
		c.Failure, c.failedMalformed, c.failedLink = "SMC-R failed: "+what+" before TCP closed", false, true
	}
	c.Outcome, c.AwaitingLink = OutcomeFailed, false
}

// awaitsUnseenLink reports whether c, its handshake done and followed
// whole, waits for a link the capture shows not one packet of: a host's
// tcpdump where the RNIC offloads RoCE, a mirror of the TCP port alone.
func (c *Conn) awaitsUnseenLink() bool {
	return c.AwaitingLink && c.Outcome == OutcomePending && c.Failure == "" && !c.clcUncaptured &&
		(c.link == nil || !c.link.Shown())
}

// pendingDetail says why a pending connection waits, or "".
func pendingDetail(c *Conn) string {
	switch {
	case c.AwaitingLink && c.FirstContact:
		return "SMC-R pending: awaiting CONFIRM_LINK (first contact)"
	case c.AwaitingLink:
		return "SMC-R pending: awaiting CONFIRM_LINK of its link group"
	case c.Failure != "":
		return c.Failure
	case c.clcUncaptured:
		// Still open, but what comes next may lie in what the capture
		// did not keep: not "incomplete after" the last message seen.
		return uncapturedDetail(c)
	}
	return ""
}

// uncapturedDetail says why c's handshake was not followed: bytes of its
// CLC stream the capture missed or its snap length cut.
func uncapturedDetail(c *Conn) string {
	if c.clcCut {
		return "handshake not followed to its end: the capture's snap length cut its CLC messages (capture with -s 0)"
	}
	if c.clcHole {
		return "handshake not followed to its end: the capture missed CLC bytes (its sender's FIN came after them)"
	}
	if c.clcDamaged {
		return "handshake not followed to its end: the capture's copy of a CLC message is damaged (its checksum fails)"
	}
	return "handshake not followed to its end: the capture missed CLC bytes (the peer's ACK covers them)"
}

func sender(d Dir) string {
	if d == DirS2C {
		return "server"
	}
	return "client"
}

func clcInfo(c *Conn, m *clcIn) string {
	switch m.typ {
	case decode.CLCTypeProposal:
		return fmt.Sprintf("v%d offers %s%s", m.version, dashEmpty(m.offered), eidInfo(m.eid))
	case decode.CLCTypeAccept, decode.CLCTypeConfirm:
		kind := "SMC-R"
		if m.smcd {
			kind = "SMC-D"
		}
		fc := "reused link group"
		if m.flag {
			fc = "first contact"
		}
		return fmt.Sprintf("%sv%d %s: GID %v QPN %#x rkey %#x token %d RMBE %d B VA %#x PSN %#x",
			kind, m.version, fc, m.ep.GID, m.ep.QPN, m.ep.RKey, m.ep.Token, m.ep.RMBESize, m.ep.VA, m.ep.PSN)
	case decode.CLCTypeDecline:
		code := decode.DeclineCode(m.decline)
		s := fmt.Sprintf("v%d %#08x %s: %s (%s)", m.version, m.decline, code, code.Meaning(), c.Fallback.Stage)
		if m.flag {
			s += " [out of sync]"
		}
		return s
	}
	return ""
}

func dashEmpty(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func eidInfo(eid string) string {
	if eid == "" {
		return ""
	}
	return " EID " + strings.TrimRight(eid, " ")
}

// place ties an SMC-R connection to its link and link group once both
// Accept and Confirm are known: the link's wire keys come from the GIDs and
// QPNs of the two messages.
func (t *Tracker) place(c *Conn, in *input, m *clcIn) {
	s, cl := &c.ServerEP, &c.ClientEP
	c2s := makeQPKey(gidAddr(cl.GID), gidAddr(s.GID), s.QPN)
	s2c := makeQPKey(gidAddr(s.GID), gidAddr(cl.GID), cl.QPN)
	var l *Link
	if !c.FirstContact {
		l = t.reusedLink(c2s, s2c, c.epDamaged, in)
	} else if l = t.earlyLink(c2s, s2c, in); l != nil {
		// The new group's link, its CONFIRM_LINK exchange shown before
		// the Confirm that announced it.
		l.lgr.fromCLC(c, m)
		l.lgr.Inferred = false // the handshake made it, not joined mid-stream
		l.announced = true
		l.addHistory(in, textEvent("announced by CLC Accept/Confirm (first contact), shown after the link's first packets"))
	}
	if l != nil && (l.Inferred || !l.keyed[0] || !l.keyed[1]) {
		t.adopt(l, c2s, s2c, s, cl, in)
	}
	if l == nil {
		g := t.newLGR(in, !c.FirstContact)
		g.fromCLC(c, m)
		l = t.newLink(g, in, false)
		if g.Credits {
			l.startCredits(DirC2S, s.InitCredits)
			l.startCredits(DirS2C, cl.InitCredits)
		}
		l.Server = LinkEnd{Addr: gidAddr(s.GID), GID: s.GID, MAC: s.MAC, QPN: s.QPN, PSN: s.PSN}
		l.Client = LinkEnd{Addr: gidAddr(cl.GID), GID: cl.GID, MAC: cl.MAC, QPN: cl.QPN, PSN: cl.PSN}
		if c.FirstContact {
			l.State, l.announced = LinkConfirming, true
			t.announced++
			l.addHistory(in, histEvent{kind: LinkEventAnnounced, text: "announced by CLC Accept/Confirm (first contact)"})
		} else {
			l.State, l.wasUp = LinkUp, true
			l.addHistory(in, textEvent("known from CLC Accept/Confirm of a reused link group (its setup was not captured)"))
		}
		t.keyLink(l, DirC2S, c2s)
		t.keyLink(l, DirS2C, s2c)
	}
	g := l.lgr
	if g.Version == 0 {
		g.Version = c.Version
	}
	t.attach(c, l)
	t.claimEarly(c, DirC2S, s.Token, cl.Token, true)
	t.claimEarly(c, DirS2C, cl.Token, s.Token, true)
	t.registerToken(c, DirC2S, s.Token)
	t.registerToken(c, DirS2C, cl.Token)
	t.registerRMB(c, l, DirC2S, s)
	t.registerRMB(c, l, DirS2C, cl)
}

// claimEarly merges into c, known from its handshake and now given token
// for its CDCs of direction d, the connection joined from CDCs of that
// token no longer than lateMax before: two hosts' captures merged with
// their clocks apart show a side's first CDCs before the CLC message that
// placed c (Linux sends none before, smc_listen_work and smc_connect_rdma
// in net/smc/af_smc.c); on a fast path they may come before the client's
// SYN. Joined that recently, it is c's, not an older connection's of the
// same token. One joined from both directions' CDCs is merged only when
// its other token is other, c's (known says it is).
func (t *Tracker) claimEarly(c *Conn, d Dir, token, other uint32, known bool) {
	x := c.lgr.tokens[d][token]
	if x == nil || x == c || !x.Inferred || c.Inferred || x.finished || c.hasTok[d] ||
		t.lastNS-x.Start.UnixNano() > int64(lateMax) {
		return
	}
	if o := d.Reverse(); x.hasTok[o] && (!known || x.tokens[o] != other) {
		return // a half of another connection's, or of one c cannot tell
	}
	t.merge(c, x)
}

// fromCLC sets what a first contact's CLC Accept and Confirm say of the
// link group they create.
func (g *LinkGroup) fromCLC(c *Conn, m *clcIn) {
	s, cl := &c.ServerEP, &c.ClientEP
	g.ServerPeerID = s.PeerID
	g.ClientPeerID = cl.PeerID
	g.MaxLinks, g.MaxConns = m.maxLinks, m.maxConns
	g.EID = c.EID
	g.Release, g.Direct = s.Release, s.Direct
	g.Server, g.Client = GroupEnd{OS: s.OS, Host: s.Host}, GroupEnd{OS: cl.OS, Host: cl.Host}
	if s.ANCK && s.VendorAgreed {
		// What the Accept's first-contact extension agreed (ANCK
		// smc_lgr_create): credits need init_credits from both,
		// write-with-immediate a v2 group of one link.
		g.ANCK = true
		g.Credits = s.Vendor.Credits() && s.InitCredits != 0 && cl.InitCredits != 0
		g.RWWI = s.Vendor.RWWI() && c.Version >= 2 && m.maxLinks <= 1
	}
}

// earlyLink finds a first contact's new link that the capture showed
// before the CLC Confirm announcing it: a link joined from its traffic
// alone, by the Confirm's wire keys in the roles the Confirm gives, first
// seen no longer than lateMax before (two hosts' captures merged, their
// clocks apart, put the server's CONFIRM_LINK before the client's
// Confirm; Linux sends it only once the Confirm came, smc_listen_work).
func (t *Tracker) earlyLink(c2s, s2c qpKey, in *input) *Link {
	for d, k := range [2]qpKey{c2s, s2c} {
		ref, ok := t.byQP[k]
		if !ok || ref.dir != Dir(d) {
			continue
		}
		if l := ref.link; l.lgr.Inferred && !l.lgr.Deleted && len(l.lgr.links) == 1 && in.ns-l.Start.UnixNano() <= int64(lateMax) {
			return l
		}
	}
	return nil
}

// retireReused takes out of the wire-key tables every link whose client
// end is the queue pair a first contact's Confirm (ep) announces for its
// new link, first seen longer than lateMax before: Linux numbers a new QP
// only once the old one is destroyed, so that link is gone, whether or not
// the capture showed its end (a capture of the client's side holds no
// DELETE_LINK of the server's). Its frames no longer go to the new group's.
func (t *Tracker) retireReused(ep *Endpoint, in *input) {
	addr := gidAddr(ep.GID)
	for _, x := range t.links {
		if !x.retired && x.Client.QPN == ep.QPN && x.Client.Addr == addr && in.ns-x.Start.UnixNano() > int64(lateMax) {
			t.retire(x)
		}
	}
}

// placeClientHalf places a connection whose Confirm was captured but not
// its Accept (the capture starts between the two): the client's GID and QPN
// find the link, and the client's token claims the S->C CDCs. The C->S half
// is paired later by cursor evidence (halfMatch), as for joined connections;
// without this the connection was counted twice, once from TCP and once
// from its CDCs.
func (t *Tracker) placeClientHalf(c *Conn, in *input) {
	cl := &c.ClientEP
	dst := addrOf(cl.GID)
	var (
		found *Link
		dir   Dir
	)
	for k, ref := range t.byQP {
		if k.dst != dst || k.qpn != uint64(cl.QPN) || ref.link.lgr.Deleted {
			continue
		}
		if found != nil && found != ref.link {
			return // two links fit: no guess
		}
		found, dir = ref.link, ref.dir
	}
	if found == nil {
		if l := t.linkOfClient(cl); l != nil {
			// A capture of the client's side: no frame goes to the
			// client's QP, but the link's first CONFIRM_LINK named it.
			t.attachHalf(c, l)
			return
		}
		t.addPendingHalf(c)
		return
	}
	if dir != DirS2C && !t.flip(found.lgr, in) {
		return
	}
	t.attachHalf(c, found)
}

// linkOfClient finds the one live link whose client end, in roles its CLC
// or LLC messages settled, is the GID and QPN a Confirm of a reused link
// group announces.
func (t *Tracker) linkOfClient(cl *Endpoint) *Link {
	addr := gidAddr(cl.GID)
	var pick *Link
	for _, l := range t.links {
		if l.retired || l.lgr.Inferred || l.lgr.Deleted || l.State == LinkDeleted || l.State == LinkRejected ||
			l.Client.QPN != cl.QPN || l.Client.Addr != addr {
			continue
		}
		if pick != nil {
			return nil
		}
		pick = l
	}
	return pick
}

// halfEP is the endpoint a connection waiting for its other half
// (pendingHalf) has: its Confirm's when it has one (client), else its
// Accept's.
func (c *Conn) halfEP() (ep *Endpoint, client bool) {
	if c.ClientEP.Valid {
		return &c.ClientEP, true
	}
	return &c.ServerEP, false
}

// halfAnnounced finds the first-contact connection caught with one side's
// CLC message only (pendingHalf: a capture of one direction, a port
// mirror's egress or tcpdump -Q out) whose side sends this CONFIRM_LINK on
// a wire key nothing announced: the sender's address and the QPN the LLC
// message names are the GID and QPN its Accept or Confirm gave. Linux
// sends the first CONFIRM_LINK request only once the Confirm came
// (smc_listen_work in net/smc/af_smc.c), and the client answers it only
// after its Confirm: either proves the handshake done (a connection
// whose Accept the capture holds waits in pendingHalf from it on, so the
// server's request from its Accept's queue pair proves the Confirm that
// the capture missed). So does the other side's CONFIRM_LINK sent to that
// GID and queue pair (toEP: a capture that missed the Accept and kept
// the Confirm, or the other way round). Where the end the connection
// holds names neither, a first contact's malformed Confirm's (malformed:
// Conn.malformedEP) is asked. Two connections that fit prove nothing.
func (t *Tracker) halfAnnounced(key qpKey, qpn uint32) (pick *Conn, toEP, malformed bool) {
	announces := func(ep *Endpoint) (from, to bool) {
		return addrOf(ep.GID) == key.src && ep.QPN == qpn, addrOf(ep.GID) == key.dst && uint64(ep.QPN) == key.qpn
	}
	for _, c := range t.pendingHalf {
		if c.finished || c.link != nil || c.SMCD {
			continue
		}
		var from, to, mal bool
		if ep, _ := c.halfEP(); ep.Valid && c.FirstContact {
			from, to = announces(ep)
		}
		if !from && !to && c.malformedEP.Valid {
			from, to = announces(&c.malformedEP)
			mal = from || to
		}
		if !from && !to {
			continue
		}
		if pick != nil {
			return nil, false, false
		}
		pick, toEP, malformed = c, to && !from, mal
	}
	return pick, toEP, malformed
}

// placeHalfLink makes the link of first-contact connection c, whose one
// CLC message announced its side of the link and whose CONFIRM_LINK,
// sent with wire key key, names the other side's address and QPN (or,
// toEP, the other side's CONFIRM_LINK to it, whose QPN is qpn); the
// connection is placed on it as its CDCs would have placed it
// (claimHalf).
func (t *Tracker) placeHalfLink(c *Conn, key qpKey, qpn uint32, toEP bool, in *input) linkRef {
	t.unpend(c)
	ep, client := c.halfEP()
	d, msg := DirC2S, "Confirm"
	if !client {
		d, msg = DirS2C, "Accept"
	}
	g := t.newLGR(in, false)
	g.EID, g.Version = c.EID, c.Version
	if client {
		g.ClientPeerID, g.Client = ep.PeerID, GroupEnd{OS: ep.OS, Host: ep.Host}
	} else {
		g.ServerPeerID, g.Server = ep.PeerID, GroupEnd{OS: ep.OS, Host: ep.Host}
		g.Release, g.Direct = ep.Release, ep.Direct
	}
	l := t.newLink(g, in, false)
	*l.end(d) = LinkEnd{Addr: gidAddr(ep.GID), GID: ep.GID, MAC: ep.MAC, QPN: ep.QPN, PSN: ep.PSN}
	kd := d // the direction key is of
	if toEP {
		kd = d.Reverse()
		*l.end(kd) = LinkEnd{Addr: key.src.netip(), QPN: qpn}
	} else {
		*l.end(d.Reverse()) = LinkEnd{Addr: key.dst.netip(), QPN: uint32(key.qpn)}
	}
	l.State, l.announced = LinkConfirming, true
	t.announced++
	other := "the other side's message is not in the capture"
	if client && c.malformedEP.Valid {
		other = "its copy malformed; no Accept read names an end of it"
	}
	l.addHistory(in, histEvent{kind: LinkEventAnnounced, text: "announced by CLC " + msg + " (first contact; " + other + ")"})
	t.keyLink(l, kd, key)
	// The other direction, should the capture hold it after all, pairs
	// with this one as with a link joined from traffic.
	t.halfLinks[addrPair{key.src, key.dst}] = append(t.halfLinks[addrPair{key.src, key.dst}], l)
	if client {
		t.attachHalf(c, l)
	} else {
		t.attachServerHalf(c, l)
	}
	// The first CONFIRM_LINK comes after the Confirm was read (above): a
	// CLC message the capture missed or holds damaged was read too.
	handshakeRead(c)
	if c.TFirstCDC.IsZero() {
		// The link is not confirmed yet: the connection waits for it
		// as one whose CLC messages were both captured does (the
		// Confirm's case in clc).
		c.Outcome, c.AwaitingLink = OutcomePending, true
	}
	return linkRef{l, kd}
}

func (t *Tracker) attachHalf(c *Conn, l *Link) {
	c.halfPlaced = true
	t.attach(c, l)
	t.registerToken(c, DirS2C, c.ClientEP.Token)
	t.registerRMB(c, l, DirS2C, &c.ClientEP)
}

// maxPendingHalf bounds pendingHalf: it only ever holds the connections
// caught between Accept and Confirm at the start of a capture.
const maxPendingHalf = 64

func (t *Tracker) addPendingHalf(c *Conn) {
	keep := t.pendingHalf[:0]
	for _, x := range t.pendingHalf {
		if !x.finished && x.link == nil && x != c {
			keep = append(keep, x)
		}
	}
	if len(keep) >= maxPendingHalf {
		keep = keep[1:]
	}
	t.pendingHalf = append(keep, c)
}

// confirmedGID is the GID of c's Confirm m, a damaged copy, asked of a
// first contact's or of a GID no device has (wellFormedGID). A client
// confirms the GID its Proposal offered for the version chosen (a reused
// link group's Confirm names the GID of the link the connection got,
// which may be another device's, its address a byte off on hosts whose
// devices' subnets differ in one byte: reusedLink allows for a byte
// damaged there), and a first-contact v2 Confirm lists it first:
// m's GID is the damage where it differs from the one proposed in one
// byte and the Proposal verified, or the Proposal and the list agree on
// it (two damaged copies), or the proposed one is a GID a RoCE device
// has and m's is not (wellFormedGID: the two copies both damaged, their
// checksums telling nothing). Else m's stands.
func (c *Conn) confirmedGID(m *clcIn) netip.Addr {
	i := 0
	if m.version >= 2 {
		i = 1
	}
	g, p := m.ep.GID, c.proposed[i]
	if !p.IsValid() || p.IsUnspecified() || g == p || !oneByteOff(g, p) {
		return g
	}
	if c.proposedOK || m.gids[1] == p || wellFormedGID(p) && !wellFormedGID(g) {
		return p
	}
	return g
}

// wellFormedGID reports whether g is a GID a RoCE device has
// (addr.wellFormed): an IPv4-mapped one (RoCEv2 over IPv4, RFC 4291
// 2.5.5.2) or an IPv6 unicast address outside ::/8, which IPv6 reserves
// (RFC 4291 2.4) and no device is given. A damaged byte of an
// IPv4-mapped GID's prefix (the GIDs a lab's and a cloud's hosts have),
// but its first, leaves one that is neither.
func wellFormedGID(g netip.Addr) bool { return g.Is6() && addrOf(g).wellFormed() }

// oneByteOff reports whether GIDs a and b differ in exactly one byte.
func oneByteOff(a, b netip.Addr) bool {
	if !a.Is6() || !b.Is6() {
		return false
	}
	x, y := a.As16(), b.As16()
	n := 0
	for k := range x {
		if x[k] != y[k] {
			n++
		}
	}
	return n == 1
}

// claimHalf finds the half-placed connection a CDC of a newly seen stream
// belongs to: the stream goes to the client's QP and GID that its Confirm
// announced and carries the client's token (or, for a connection whose
// Confirm the capture missed, the server's QP, GID and token of its
// Accept). Only that triple is evidence enough; the other half is then
// paired by cursors (halfMatch).
func (t *Tracker) claimHalf(l *Link, d Dir, m *cdcIn, in *input) (*Conn, Dir) {
	if !l.keyed[d] {
		return nil, d
	}
	k := l.keys[d]
	for i, c := range t.pendingHalf {
		ep, client := c.halfEP()
		want := DirC2S // the server's token: the client's CDCs carry it
		if client {
			want = DirS2C
		}
		if !ep.Valid || c.finished || c.link != nil {
			continue
		}
		if k.dst != addrOf(ep.GID) && (k.qpn != uint64(ep.QPN) || m.token != ep.Token) &&
			!(c.epDamaged[want] && m.token == ep.Token && m.first() && l.lgr.between(c.Client.Addr(), c.Server.Addr())) {
			// The GID of a damaged copy may be the damage where its
			// queue pair and token, 56 bits, are the link's (whether
			// or not its checksum could say it was damaged); and its
			// queue pair too, where a connection's first CDC on a link
			// between the connection's hosts carries its token: a
			// host gives each live connection its own
			// (smc_lgr_register_conn in net/smc/smc_core.c).
			continue
		}
		if qpn := uint64(ep.QPN); k.qpn != qpn || m.token != ep.Token {
			// (A queue pair alone differing with the token and GID the
			// same is a damaged copy whose checksum told nothing as
			// well, whichever CDC of the connection's comes first: a
			// host's alert tokens are its own, one per connection,
			// smc_lgr_register_conn in net/smc/smc_core.c.)
			ours := m.token == ep.Token && k.dst == addrOf(ep.GID)
			if !ours && !(c.epDamaged[want] && t.firstOf(c, l, m)) || k.qpn != qpn && m.token != ep.Token {
				continue
			}
			// The message was a damaged copy: the connection's first
			// CDC, to its queue pair or with its token, names the
			// queue pair and token its receiver sent (damagedToken).
			ep.QPN, ep.Token, c.epDamaged[want] = uint32(k.qpn), m.token, false
		}
		if d != want {
			if !t.flip(l.lgr, in) {
				continue
			}
			d = want
		}
		t.pendingHalf = append(t.pendingHalf[:i], t.pendingHalf[i+1:]...)
		if want == DirC2S {
			t.attachServerHalf(c, l)
		} else {
			t.attachHalf(c, l)
		}
		t.adoptHalf(c, l, in)
		return c, d
	}
	return nil, d
}

// halfSetup bounds how long after a first contact's CLC message its
// link is first seen where the capture damaged or missed its first
// packets: the link's setup (CONFIRM_LINK, ADD_LINK, CONFIRM_RKEY) is a
// few round trips, a first CDC among youngSeq a few more.
const halfSetup = time.Second

// adoptHalf: c, a first contact placed by its one CLC message's queue
// pair (claimHalf), on a group the capture made from its traffic whose
// first link was first seen after that message and not long after, made
// that group (a first contact's alone makes one, and its link's first
// packets follow the Confirm, smc_listen_work in net/smc/af_smc.c): the
// group is no longer one joined mid-stream, and its version is the
// handshake's (adoptCut's, for a connection whose CLC messages the snap
// length cut). The peer c's message named is not taken: that copy may
// be damaged (its queue pair or token was, where the CDC claimed it).
func (t *Tracker) adoptHalf(c *Conn, l *Link, in *input) {
	g := l.lgr
	_, client := c.halfEP()
	at, msg := c.TConfirm, "Confirm"
	if !client {
		at, msg = c.TAccept, "Accept"
	}
	if !c.FirstContact || c.SMCD || !g.Inferred || g.Deleted || len(g.links) == 0 || at.IsZero() {
		return
	}
	first := g.links[0]
	if d := first.Start.Sub(at); d < 0 || d > halfSetup {
		return
	}
	g.Inferred = false
	if g.Version == 0 {
		g.Version = c.Version
	}
	first.announced = true
	first.addHistory(in, histEvent{kind: LinkEventAnnounced, text: "announced by CLC " + msg + " (first contact; the other side's is damaged in the capture or not in it): its CDCs tie them"})
}

// firstOf reports whether m, a CDC on l of a token no connection
// registered, is among the first of c's that the capture can show: its
// first, or one of its first youngSeq (those before it damaged or
// missed) where c made its link group (a first contact's link carries
// its CDCs before any other connection's) or c is the one handshake
// waiting that could be its: no other with a CLC message naming l's
// queue pair, none blind between its group's hosts.
func (t *Tracker) firstOf(c *Conn, l *Link, m *cdcIn) bool {
	switch {
	case m.first():
		return true
	case m.noSeq || m.seq > youngSeq:
		return false
	case c.FirstContact:
		return true
	}
	for _, x := range t.pendingHalf {
		if x == c || x.link != nil || x.finished {
			continue
		}
		if x.blind() && l.lgr.between(x.Client.Addr(), x.Server.Addr()) {
			return false
		}
		if ep, _ := x.halfEP(); ep.Valid && (ep.QPN == l.Client.QPN || ep.QPN == l.Server.QPN) {
			return false
		}
	}
	return true
}

// claimFirst finds the connection a connection's first CDC belongs to when
// its token is one no CLC message the capture holds announced: a CDC
// carries its receiver's token, which only the receiver's own message
// (the client's Confirm, the server's Accept) tells, so a capture of one
// direction, or one that missed that message, never learns it. The
// sequence number says it is the connection's first CDC (cdcIn.first):
// it belongs to a connection that came up while the capture ran, which a
// handshake the capture showed announced.
// It is taken for the one such connection on l still without a token of
// direction d, no CDC of that direction yet and its sender not gone
// (placed from its one CLC message, or, for the server's side, waiting
// with an Accept that named l's server QP). Where there are several
// (connections coming up together) nothing tells which, none is taken,
// and the CDC goes to a connection joined from CDCs; once as many such
// CDCs came as there were connections to choose from, each of those has
// had its first CDC, and the next connection's is told apart again.
func (t *Tracker) claimFirst(l *Link, d Dir, m *cdcIn, in *input) *Conn {
	if !m.first() && !l.lgr.bornInCapture() {
		return nil
	}
	cands := t.firstCandidates(l, d)
	switch len(cands) {
	case 0:
		return nil
	case 1:
	default:
		if g := cands[0].firstOf[d]; g != nil && slices.Equal(g.conns, cands) {
			g.taken++
			return nil
		}
		g := &firstCDCs{conns: cands, taken: 1}
		for _, c := range cands {
			c.firstOf[d] = g
		}
		return nil
	}
	c := cands[0]
	switch {
	case c.link != nil:
	case c.blind():
		t.placeBlind(c, l, in)
	default:
		t.unpend(c)
		t.attachServerHalf(c, l)
	}
	t.registerToken(c, d, m.token)
	return c
}

// firstCandidates lists the connections a first CDC of direction d on l
// may be the first of (claimFirst).
func (t *Tracker) firstCandidates(l *Link, d Dir) []*Conn {
	var cands []*Conn
	open := func(c *Conn) bool {
		f := &c.Flow[d]
		return !c.finished && !c.Inferred && !c.hasTok[d] && f.CDCs == 0 && !f.FIN && !f.RST && c.TClose.IsZero() &&
			(c.firstOf[d] == nil || !c.firstOf[d].spoken())
	}
	for _, c := range l.lgr.conns {
		if c.link == l && c.halfPlaced && c.hasTok[d.Reverse()] && open(c) {
			cands = append(cands, c)
		}
	}
	for _, c := range t.pendingHalf {
		if c.link != nil || !open(c) {
			continue
		}
		switch {
		case c.blind():
			// A handshake the capture saw none of the Accept and
			// Confirm of: one between the hosts of l's group (the
			// link's own addresses may be others, SMC-Rv2).
			if l.lgr.between(c.Client.Addr(), c.Server.Addr()) {
				cands = append(cands, c)
			}
		case d == DirS2C && l.Server.QPN != 0 && c.ServerEP.Valid && !c.ClientEP.Valid &&
			c.ServerEP.QPN == l.Server.QPN && gidAddr(c.ServerEP.GID) == l.Server.Addr:
			cands = append(cands, c)
		}
	}
	return cands
}

// unpend takes c out of pendingHalf: placed, it waits no more.
func (t *Tracker) unpend(c *Conn) {
	t.pendingHalf = slices.DeleteFunc(t.pendingHalf, func(x *Conn) bool { return x == c })
}

// placeBlind places blind connection c on l, SMC-R by its CDCs.
func (t *Tracker) placeBlind(c *Conn, l *Link, in *input) {
	t.unpend(c)
	c.halfPlaced = true
	t.adoptCut(c, l, in)
	// A group the capture showed before c's first frame is not c's
	// making: a first contact's group shows only after its Confirm (the
	// server sends its first CONFIRM_LINK then, smc_listen_work in
	// net/smc/af_smc.c), and c's first frame is one of its handshake.
	c.reuseShown = !c.FirstContact && l.lgr.FirstFrame > 0 && l.lgr.FirstFrame < c.FirstFrame
	t.attach(c, l)
	c.Outcome = OutcomeSMCR
	c.handshakeWentOn()
}

// adoptCut: c, a first contact whose Accept and Confirm the snap length
// cut (their headers said first contact: cutStep), is the first
// connection placed on l's group, one the capture made from its RoCE
// traffic, whose roles its LLC requests settled and whose first link
// was first seen after c's Confirm and not long after: c's handshake
// made that group (a first contact's alone makes one, and the server
// sends its first link's CONFIRM_LINK once the Confirm came,
// smc_listen_work in net/smc/af_smc.c). The group is no longer one
// joined mid-stream; its version, and its peers where the cut kept
// their IDs (struct smc_clc_msg_accept_confirm, offset 8), are the
// handshake's.
func (t *Tracker) adoptCut(c *Conn, l *Link, in *input) {
	g := l.lgr
	if !c.cutHeader || !c.FirstContact || c.SMCD || !g.Inferred || !g.rolesKnown || g.Deleted || len(g.conns) > 0 ||
		len(g.links) == 0 || c.TConfirm.IsZero() {
		return
	}
	first := g.links[0]
	if at := first.Start.Sub(c.TConfirm); at < 0 || at > lateMax {
		return
	}
	g.Inferred = false
	if g.Version == 0 {
		g.Version = c.Version
	}
	for d, id := range [2]*[8]byte{&g.ClientPeerID, &g.ServerPeerID} { // (by the sender of each message)
		if p := c.cutPeer[Dir(d)]; p != ([8]byte{}) {
			*id = p
		}
	}
	first.announced = true
	first.addHistory(in, histEvent{kind: LinkEventAnnounced, text: "announced by CLC Accept/Confirm (first contact) whose bodies the snap length cut: its first CDC ties them"})
}

// firstCDCs is a set of connections (Conn.firstOf) and how many first
// CDCs that could each have been any of them went to joined connections.
type firstCDCs struct {
	conns []*Conn
	taken int
}

// spoken reports whether every connection of g has had its first CDC.
func (g *firstCDCs) spoken() bool { return g.taken >= len(g.conns) }

// attachServerHalf places a connection whose Confirm the capture missed
// on the link its C->S CDCs showed up on: they prove SMC-R.
func (t *Tracker) attachServerHalf(c *Conn, l *Link) {
	c.halfPlaced = true
	t.attach(c, l)
	t.registerToken(c, DirC2S, c.ServerEP.Token)
	t.registerRMB(c, l, DirC2S, &c.ServerEP)
	if c.Outcome == OutcomePending {
		c.Outcome = OutcomeSMCR
		c.handshakeWentOn()
	}
}

// reusedLink finds the link a connection of a reused link group was
// placed on, by either wire key. A link built from traffic alone may have
// its roles the wrong way round; the CLC settles them.
func (t *Tracker) reusedLink(c2s, s2c qpKey, epDamaged [2]bool, in *input) *Link {
	damaged := epDamaged[DirC2S] || epDamaged[DirS2C]
	for d, k := range [2]qpKey{c2s, s2c} {
		ref, ok := t.byQP[k]
		if !ok || (ref.link.lgr.Deleted && !ref.link.Inferred) {
			continue
		}
		if ref.dir != Dir(d) && !t.flip(ref.link.lgr, in) {
			continue // contradicts what CLC/LLC said about this link
		}
		return ref.link
	}
	// The link whose queue pairs the message names, both of its
	// addresses but one as the message says: a byte of a GID damaged in
	// the capture's copy (its TCP checksum fails; the hosts went on).
	// Where the Accept's or the Confirm's copy is damaged, both GIDs may
	// be, each a byte off, and one end's queue pair with its address:
	// the other end's names the link, a host's QP numbers being its own.
	near := func(k, o *qpKey) bool {
		return sameOfKey(k, o) >= 2 || damaged && k.src.nearly(o.src) && k.dst.nearly(o.dst)
	}
	// (Those with both queue pairs as named first: a link beside it
	// between the same hosts' other devices, addresses a byte apart,
	// may differ in one.)
	var found [2]*Link
	var n [2]int
	for _, l := range t.links {
		k := &l.keys
		// A queue pair off is its end's (C->S goes to the server's), and
		// the other end's address must then be as named: the damage of
		// one message, which names one end. Where both messages' copies
		// are damaged (epDamaged: C->S's token is the Accept's, S->C's
		// the Confirm's), each may have lost a byte of its own: the
		// other end's address may be a byte off where this end's is as
		// named, its message's damage being its queue pair. (Both
		// addresses a byte off and a queue pair too name another link:
		// one between the same hosts' other devices.)
		qpOff := 0
		switch {
		case k[DirC2S].qpn != c2s.qpn && k[DirS2C].qpn != s2c.qpn:
			continue
		case k[DirC2S].qpn != c2s.qpn:
			qpOff = 1
			if k[DirC2S].src != c2s.src && (!epDamaged[DirS2C] || k[DirC2S].dst != c2s.dst) {
				continue
			}
		case k[DirS2C].qpn != s2c.qpn:
			qpOff = 1
			if k[DirC2S].dst != c2s.dst && (!epDamaged[DirC2S] || k[DirC2S].src != c2s.src) {
				continue
			}
		}
		if l.retired || !l.keyed[DirC2S] || !l.keyed[DirS2C] || l.lgr.Deleted && !l.Inferred ||
			qpOff == 1 && !damaged || !near(&k[DirC2S], &c2s) || !near(&k[DirS2C], &s2c) {
			continue
		}
		found[qpOff] = l
		n[qpOff]++
	}
	switch {
	case n[0] == 1:
		return found[0]
	case n[0] == 0 && n[1] == 1:
		return found[1]
	}
	return nil
}

// adopt completes a link built from traffic with what a CLC handshake on
// it announced: both ends, both wire keys.
func (t *Tracker) adopt(l *Link, c2s, s2c qpKey, s, cl *Endpoint, in *input) {
	fill := func(e *LinkEnd, ep *Endpoint) {
		e.Addr, e.GID, e.MAC, e.QPN = gidAddr(ep.GID), ep.GID, ep.MAC, ep.QPN
		if e.PSN == 0 {
			e.PSN = ep.PSN
		}
	}
	fill(&l.Server, s)
	fill(&l.Client, cl)
	if l.keyed[0] != l.keyed[1] {
		k := l.keys[l.knownDir()]
		t.removeHalf(addrPair{k.src, k.dst}, l)
	}
	for d, k := range [2]qpKey{c2s, s2c} {
		if !l.keyed[d] {
			t.keyLink(l, Dir(d), k)
		}
	}
	g := l.lgr
	g.ServerPeerID, g.ClientPeerID = s.PeerID, cl.PeerID
	g.settle()
	l.addHistory(in, textEvent("roles and QPs learned from the CLC Accept/Confirm of a connection on this link"))
}

// attach makes l the link c currently uses.
func (t *Tracker) attach(c *Conn, l *Link) {
	if c.link == l {
		return
	}
	c.link, c.Link = l, l.ID
	l.Conns = append(l.Conns, c.ID)
	l.conns = append(l.conns, c)
	if c.lgr != l.lgr {
		if g := c.lgr; g != nil {
			// Not seen to happen (a connection moves between groups only
			// with mergeLGR), but a connection must be in the lists of its
			// own group only: finish clears those, and a folded connection
			// is reused.
			g.conns = removeConn(g.conns, c)
			for _, x := range g.links {
				x.conns = removeConn(x.conns, c)
			}
			t.unregister(c)
		}
		c.lgr, c.LGR = l.lgr, l.lgr.ID
		l.lgr.Conns = append(l.lgr.Conns, c.ID)
		l.lgr.conns = append(l.lgr.conns, c)
	}
}

// registerToken makes token the one c's CDCs of direction d carry,
// claiming a connection joined from them before (claimEarly).
func (t *Tracker) registerToken(c *Conn, d Dir, token uint32) {
	t.claimEarly(c, d, token, 0, false)
	c.lgr.tokens[d][token] = c
	c.tokens[d], c.hasTok[d] = token, true
}

// registerRMB records the receiver's RMB element (rkey/VA on link l) that
// WRITEs in direction d target, and any rkeys for the same RMB on other
// links that a CONFIRM_RKEY announced before the CLC message.
func (t *Tracker) registerRMB(c *Conn, l *Link, d Dir, ep *Endpoint) {
	g := l.lgr
	sender := d.Reverse() // CONFIRM_RKEY travels from the RMB's owner
	pk := rkKey(l, sender, ep.RKey)
	p := g.pendingRKeys[pk]
	va := ep.VA
	if p.va != 0 && p.va != va {
		// The RMB's address on this link as its CONFIRM_RKEY gave it,
		// whose ICRC the RNIC checked: the CLC copy that says otherwise
		// was damaged in the capture (both are the RMB's address on
		// the link: smcr_clc_prep_confirm_accept in
		// net/smc/smc_clc.c, smc_llc_send_confirm_rkey in
		// net/smc/smc_llc.c).
		va = p.va
	}
	if ep.RMBEIdx > 1 {
		va += uint64(ep.RMBEIdx-1) * uint64(ep.RMBESize)
	}
	l.setRKey(d, ep.RKey, rmbRef{conn: c, va: va, size: ep.RMBESize})
	for _, o := range p.others {
		if ol := g.linkByID(o.linkID); ol != nil {
			ol.setRKey(d, o.rkey, rmbRef{conn: c, va: o.va, size: ep.RMBESize})
		}
	}
	delete(g.pendingRKeys, pk)
}

// nextCLCAt reports whether s, a segment of direction d of c whose
// checksum fails, holds nothing but one whole CLC message (in) that is
// the handshake's next step from d.
func nextCLCAt(c *Conn, d Dir, s *tcpIn, in *input) bool {
	if s.syn || in.clcN != 1 || s.clcErrs != 0 || in.clc[0].malformed || in.clc[0].inside ||
		c.Outcome != OutcomePending || s.frame == nil || s.frame.TCP == nil || len(s.frame.TCP.Payload) != s.payload {
		return false
	}
	if sum := s.sums(); !sum.Damaged() {
		return false
	}
	if n, fr := decode.CLCFrame(s.frame.TCP.Payload); fr != decode.CLCFramed || n != s.payload {
		return false
	}
	last := decode.CLCType(0)
	if k := len(c.CLCTypes); k > 0 {
		last = decode.CLCType(c.CLCTypes[k-1])
	}
	switch typ := in.clc[0].typ; {
	case d == DirC2S && len(c.CLCTypes) == 0:
		return typ == decode.CLCTypeProposal || typ == decode.CLCTypeDecline
	case d == DirC2S && last == decode.CLCTypeAccept:
		return typ == decode.CLCTypeConfirm || typ == decode.CLCTypeDecline
	case d == DirS2C && last == decode.CLCTypeProposal:
		return typ == decode.CLCTypeAccept || typ == decode.CLCTypeDecline
	}
	return false
}

// clcSender reports whether a CLC message of type typ is one the side
// sending direction d sends: Proposal and Confirm the client's, Accept the
// server's, Decline either's.
func clcSender(typ decode.CLCType, d Dir) bool {
	switch typ {
	case decode.CLCTypeProposal, decode.CLCTypeConfirm:
		return d == DirC2S
	case decode.CLCTypeAccept:
		return d == DirS2C
	}
	return true
}

// handshakeRead: what came after the handshake's bytes the capture missed
// or holds damaged shows them read as the handshake goes (a Confirm, a
// CONFIRM_LINK: before either, each side sends one message, the client's
// Proposal and the server's Accept), and the snap length cut none of them,
// nor did a FIN end a direction past them: the handshake is followed as
// if the capture held them.
func handshakeRead(c *Conn) {
	if c.clcUncaptured && !c.clcCut && !c.clcHole {
		c.clcUncaptured, c.clcDamaged = false, false
	}
}

// answered: the server's Accept or Decline was followed. Where the one
// message missed or damaged was the Proposal (before any message was
// followed, and none of the server's bytes missed), the handshake is
// followed whole from here, as where the Proposal was read: the server's
// answer tells what it took.
func (t *Tracker) answered(c *Conn) {
	if c.clcUncaptured && len(c.CLCTypes) == 1 && !c.clcCut && !c.clcHole && c.Flow[DirS2C].TCPNotCaptured == 0 {
		c.clcUncaptured, c.clcDamaged = false, false
		t.unpend(c)
	}
}

// noSYNACKFallback ends the handshake of c, whose client sent bytes that
// were no CLC after a SYN with the SMC option (noCLCEarly), when its
// SYN-ACK will not come (in: the frame that tells it, nil at the
// capture's end): a fallback, as the client's bytes say, for a reason
// the SYN-ACK held (no option: the server is not SMC-capable; with it,
// no CLC after SMC options), which the capture does not hold.
func (t *Tracker) noSYNACKFallback(c *Conn, in *input) {
	if c.Outcome != OutcomePending || len(c.CLCTypes) > 0 {
		c.noCLCEarly = nil
		return
	}
	e := c.noCLCEarly
	c.noCLCEarly = nil
	c.Outcome = OutcomeFallback
	c.Fallback = Fallback{Cause: CauseUncaptured, By: e.By, Stage: StageSYN, Frame: e.Frame, Time: e.Time}
	if in != nil {
		t.raise(&c.expert, expert.Fallback, in)
	} else {
		c.expert.add(expert.Fallback, e.Frame, e.Time.UnixNano(), "")
	}
}

// damagedSMCOption reports whether s, a SYN or SYN-ACK shown without the
// SMC option, carried it (capture.Frame.SMCOptionDamaged).
func damagedSMCOption(s *tcpIn) bool { return s.frame != nil && s.frame.SMCOptionDamaged() }

// noCLCUndone: a CLC message of type typ in direction d (whole, or
// malformed with its header read) after the stream's first bytes made c
// a fallback for want of CLC: a server accepts or declines only a
// Proposal it read, and a client confirms only an Accept, so those bytes
// the capture shows as not CLC are not what the peer got (damaged in the
// capture). The handshake goes on from this message.
func (c *Conn) noCLCUndone(typ decode.CLCType, d Dir) {
	if c.Outcome == OutcomeFallback && c.Fallback.Cause == CauseNoCLC &&
		(typ != decode.CLCTypeProposal && d == DirS2C || typ == decode.CLCTypeConfirm && d == DirC2S) {
		c.Outcome, c.Fallback = OutcomePending, Fallback{}
		c.expert.drop(expert.Fallback)
		c.expert.drop(expert.OptionEchoed)
	}
}

// malformedCopy: a CDC of c's, found by its token on c's link group, where
// c's handshake failed on a malformed CLC message whose checksum the
// capture could not judge, says that message was a damaged copy: Linux
// sends no CDC on a connection whose handshake failed (the receiver of a
// malformed CLC message ends it with EPROTO, smc_clc_wait_msg in
// net/smc/smc_clc.c). The handshake goes on as one whose bytes the
// capture holds damaged (sumsFilled).
func (t *Tracker) malformedCopy(c *Conn, in *input) {
	if !c.failedMalformed || !c.malformedUnjudged || c.Outcome != OutcomePending {
		return
	}
	c.handshakeWentOn()
	if !c.clcUncaptured {
		c.clcUncaptured = true
		t.awaitServerHalf(c, in)
	}
	if c.link != nil && !c.AwaitingLink {
		// Placed on its link by the Confirm's copy (placeClientHalf):
		// the CDC says the handshake set it up.
		c.Outcome = OutcomeSMCR
	}
}

// handshakeWentOn: c's CDCs, or its first link's CONFIRM_LINK, prove its
// handshake set it up, whatever failure it was given: a malformed CLC
// message it failed on was the capture's damaged copy.
func (c *Conn) handshakeWentOn() {
	if !c.failedMalformed {
		c.Failure = ""
		return
	}
	if c.Outcome == OutcomeFailed {
		// Failed when TCP closed (failPending), shown its link or CDC
		// only later (a request kept out of sequence).
		c.Outcome = OutcomeSMCR
		c.expert.drop(expert.HandshakeFailed)
	}
	c.clcDamaged = true
	c.malformedWasCopy("a damaged copy: the handshake went on, its link or CDCs say")
}

// malformedWasCopy: the malformed CLC message c failed on was the
// capture's damaged copy after all (why says what told it): no failure,
// and its smc.malformed detail, where it is that message's, says why.
func (c *Conn) malformedWasCopy(why string) {
	if m := c.expert.find(expert.Malformed); m != nil && c.malformedOwn {
		m.text += " (" + why + ")"
	}
	if at := c.stepTime(c.malformedType, c.malformedDir); at != nil && at.IsZero() {
		// The step its header names was read then: a copy sent again,
		// read whole, would have set its time.
		*at = c.malformedAt
	}
	c.malformedType = 0
	c.Failure, c.failedMalformed, c.malformedUnjudged, c.malformedSum, c.malformedOwn = "", false, false, "", false
}

// stepTime is where c keeps the time of the handshake step a CLC message
// of type typ from direction d is: nil for a type its sender does not
// send (the header's type damaged) or one that is no step.
func (c *Conn) stepTime(typ decode.CLCType, d Dir) *time.Time {
	switch {
	case typ == decode.CLCTypeProposal && d == DirC2S:
		return &c.TProposal
	case typ == decode.CLCTypeAccept && d == DirS2C:
		return &c.TAccept
	case typ == decode.CLCTypeConfirm && d == DirC2S:
		return &c.TConfirm
	}
	return nil
}

// newStep reports whether in carries a CLC message of a type c's
// handshake has not shown, whole: a step the handshake took after a
// reset (whatever its segment's flags, the damage may be there too)
// says the reset was a damaged copy's, from either end: Linux ends the
// handshake of a reset socket (smc_clc_wait_msg fails, net/smc/smc_clc.c)
// and its peer sent no step for a reset it sent.
func newStep(c *Conn, in *input) bool {
	for i := range in.clcN {
		if m := &in.clc[i]; !m.malformed && !m.inside && !m.uncaptured && !slices.Contains(c.CLCTypes, uint8(m.typ)) {
			return true
		}
	}
	return false
}

// resetUndo is what a reset whose checksum failed as held, nothing of its
// connection judged yet, changed (Conn.resetUnsure): its flags may be the
// capture's damage.
type resetUndo struct {
	dir             Dir
	seq             uint32
	frame           int
	rst             bool
	finFrame        int
	finNS           int64
	tClose          time.Time
	outcome         Outcome
	failure         string
	failedMalformed bool
	failedLink      bool
	awaiting        bool
	failed          bool // smc.handshake.failed was raised before it
}

// resetUndone: a segment its sender sent after the reset c.resetUnsure
// took (its sequence number the reset's or past it), or a new step of the
// handshake from either end (newStep), in, in direction d, says that
// reset was a damaged copy's flags: Linux sends nothing on a connection
// after its reset (tcp_send_active_reset, and tcp_done after it). The
// connection is as it was before it.
func (t *Tracker) resetUndone(c *Conn, d Dir, in *input) {
	u := c.resetUnsure
	c.resetUnsure = nil
	f := &c.Flow[u.dir]
	f.RST, f.finFrame, f.finNS = u.rst, u.finFrame, u.finNS
	c.TClose, c.Outcome, c.Failure, c.failedMalformed, c.failedLink, c.AwaitingLink =
		u.tClose, u.outcome, u.failure, u.failedMalformed, u.failedLink, u.awaiting
	if !u.failed {
		c.expert.drop(expert.HandshakeFailed)
	}
	if c.Flow[DirC2S].CDCs+c.Flow[DirS2C].CDCs > 0 {
		// CDCs of its own since, which proved it up, still do.
		connUp(c)
	}
	if t.recording(c) {
		what := "sent after"
		if d != u.dir {
			what = "a step of the handshake after"
		}
		t.note(c, in, d, "TCP", fmt.Sprintf("%s the RST of frame %d: that reset was a damaged copy's flags", what, u.frame))
	}
}
