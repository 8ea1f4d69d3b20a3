package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/reassembly"

	"github.com/smcscope/smcscope/decode"
)

// CLC messages travel in the TCP stream right after the handshake of an SMC
// connection. Only those streams are reassembled: a segment reaches the
// gopacket assembler when its connection's SYN carried the SMC option, or
// (captures that start mid-connection) when its payload starts with a CLC
// eyecatcher. A stream is dropped after Confirm or Decline, at its first
// non-CLC byte (the rest is application data), at a RST, or when it stalls,
// and the assembler is made to let go of it at once (closeAsm), so memory
// depends on the number of handshakes in flight, not on the traffic: flows
// are recycled, and at most maxCLCFlows are held at once. What judging a
// connection's checksums needs is kept past its handshake (after), under
// 200 bytes each with its key, for at most maxAfter connections.

// clcIdle is how long a handshake may stall (capture time) before its
// stream is forgotten; Linux gives up after 6 s per message.
const clcIdle = 30 * time.Second

// maxCLCFlows bounds the handshakes followed at once, so that a capture of
// SMC SYNs that never go on cannot grow the reader: beyond it the least
// recently seen are dropped, as if stalled. Linux queues at most a few
// hundred handshakes per listener (the accept backlog, smc_tcp_listen_work
// in net/smc/af_smc.c); this is far more than a capture holds in flight.
const maxCLCFlows = 4096

// clcPagesPerConn bounds what a broken or hostile stream can make the
// assembler queue while it waits for a gap: a CLC handshake is a few
// hundred bytes.
const clcPagesPerConn = 16

type flowKey [2]gopacket.Flow

// clcFlow is the pre-filter's view of one TCP connection, and the stream
// the assembler feeds.
type clcFlow struct {
	stream   clcStream
	lastSeen time.Time
	key      flowKey // under which flows holds it
	// smcSYN: followed from a SYN or SYN-ACK with the SMC option (not
	// mid-stream from an eyecatcher).
	smcSYN bool
	// sumHistory: what judging its segments' checksums needs (checkSum),
	// kept past the handshake (clcAssembler.after).
	sumHistory
	// synBad[d]: direction d's SYN failed its checksum, and the
	// acknowledgement number its SYN-ACK would carry (segment: a SYN-ACK
	// that carries another shows the SYN's sequence number damaged).
	synBad [2]struct {
		ack uint32
		on  bool
	}
	// synAck[d]: the acknowledgement number the peer's segments carry
	// for direction d's SYN-ACK (its sequence number + 1), on while that
	// SYN-ACK's checksum did not verify and the peer's first segment
	// whose checksum does has not come (segment: one that acknowledges
	// another shows the SYN-ACK's sequence number damaged).
	synAck [2]struct {
		ack uint32
		on  bool
	}
	// damaged[d]: the sequence number and length of direction d's last
	// segment whose checksum failed (checkSum), 0 length for none: its
	// whole copy, sent again, is decoded where the stream took the
	// damaged one's bytes already (wholeAgain).
	damaged [2]struct {
		seq uint32
		n   int
	}
	// cut[d]: the same for direction d's last segment the snap length
	// (or a mirror that truncates, ERSPAN's T bit) cut, n its length on
	// the wire: the segment whole, a copy by another way to the capture
	// point that comes after the cut one, is decoded so too.
	cut [2]struct {
		seq uint32
		n   int
	}
	// asmNet is key[0] under a type unique to this connection: the assembler
	// keys its connections by flow, so a new connection on the same
	// 4-tuple (port reuse) starts afresh even where the assembler still
	// holds the old one (keep).
	asmNet gopacket.Flow
	// inMap: flows holds it (segments still come to it). inAsm: the
	// assembler holds its stream (from New until ReassemblyComplete). It
	// is recycled when neither does.
	inMap, inAsm bool
	// prev and next link the flows in flows, least recently seen first.
	prev, next *clcFlow
}

// clcAssembler owns the reassembly state of one Reader.
type clcAssembler struct {
	asm   *reassembly.Assembler
	flows map[flowKey]*clcFlow
	// done holds the connections whose handshake ended, their
	// checksums still judged (after).
	done      map[afterKey]*afterFlow
	lastAfter lastAfter
	afterFree []*afterFlow // forgotten, to serve again (forget)
	senders   ipSenders    // whose IPv4 headers verified (sumHistory.judgeIP)
	ctx       asmContext
	frame     *Frame   // frame being assembled; receives completed messages
	cur       *clcFlow // flow being assembled; New attaches its stream
	gen       int64    // connections seen, for clcFlow.asmNet
	arena     []byte   // message bytes of the current frame
	swept     time.Time
	// held lists the flows in flows, least recently seen first (a
	// sentinel: held.next is the oldest). free holds recycled ones: a
	// capture of short connections then allocates nothing per connection.
	held clcFlow
	free []*clcFlow
	// closing: closeAsm is feeding the assembler the RSTs that end a
	// stream (clcStream.Accept places them); rst is that segment.
	closing bool
	rst     layers.TCP
	rstHdr  [20]byte
	// keep is the reference path for tests: no flow is recycled and no
	// stream is closed before the end of the capture.
	keep bool
	// probe and scratch try a message's bytes at another length
	// (wholeWithin).
	probe   decode.CLC
	scratch []byte
	// padded holds the segment being assembled, its captured bytes then
	// zeros for those the snap length cut (padFrom on, padN of them).
	padded        []byte
	padFrom, padN int
	// skipGap: the segment being assembled comes after bytes its
	// receiver acknowledged and the capture missed (clcStream.Accept),
	// so the assembler takes it now, past the gap, rather than queue it
	// for bytes no copy of which will come. bareAt, where bare, is the
	// sequence number of that segment when it carries no bytes (an ACK
	// or FIN): bytes queued at or past it are none its sender sent
	// before it (clcStream.ReassembledSG).
	skipGap bool
	bare    bool
	bareAt  uint32
}

type asmContext struct{ ci gopacket.CaptureInfo }

func (c *asmContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

func newCLCAssembler() *clcAssembler {
	a := &clcAssembler{flows: make(map[flowKey]*clcFlow), done: make(map[afterKey]*afterFlow)}
	a.held.prev, a.held.next = &a.held, &a.held
	a.asm = reassembly.NewAssembler(reassembly.NewStreamPool(a))
	a.asm.MaxBufferedPagesPerConnection = clcPagesPerConn
	a.asm.MaxBufferedPagesTotal = 4096
	return a
}

// New implements reassembly.StreamFactory: the stream is the current
// flow's, started afresh.
func (a *clcAssembler) New(netFlow, tcpFlow gopacket.Flow, tcp *layers.TCP, ac reassembly.AssemblerContext) reassembly.Stream {
	fl := a.cur
	if fl == nil { // not from segment: a stream of no flow, never recycled
		fl = &clcFlow{}
	}
	fl.stream = clcStream{a: a, fl: fl, smcSYN: fl.smcSYN}
	fl.inAsm = true
	return &fl.stream
}

func (a *clcAssembler) newFlow(k flowKey) *clcFlow {
	if len(a.flows) >= maxCLCFlows {
		a.evict()
	}
	a.gen++
	src, dst := k[0].Endpoints()
	fl := reuse(&a.free)
	*fl = clcFlow{key: k, asmNet: gopacket.NewFlow(gopacket.EndpointType(-a.gen), src.Raw(), dst.Raw()), inMap: true}
	a.flows[k] = fl
	a.link(fl)
	return fl
}

// reuse takes a recycled object from free, or a new one where there is
// none.
func reuse[T any](free *[]*T) *T {
	if n := len(*free); n > 0 {
		x := (*free)[n-1]
		*free = (*free)[:n-1]
		return x
	}
	return new(T)
}

// link puts fl at the recent end of the held list.
func (a *clcAssembler) link(fl *clcFlow) {
	fl.prev, fl.next = a.held.prev, &a.held
	fl.prev.next, a.held.prev = fl, fl
}

func (a *clcAssembler) unlink(fl *clcFlow) {
	fl.prev.next, fl.next.prev = fl.next, fl.prev
	fl.prev, fl.next = nil, nil
}

// touch moves fl to the recent end of the held list.
func (a *clcAssembler) touch(fl *clcFlow) {
	if a.held.prev != fl {
		a.unlink(fl)
		a.link(fl)
	}
}

// release recycles fl once neither flows nor the assembler holds it.
func (a *clcAssembler) release(fl *clcFlow) {
	if fl.inMap || fl.inAsm || a.keep {
		return
	}
	fl.stream = clcStream{}
	if len(a.free) < 256 {
		a.free = append(a.free, fl)
	}
}

func (a *clcAssembler) lookup(k flowKey) *clcFlow {
	if fl, ok := a.flows[k]; ok {
		return fl
	}
	return a.flows[flowKey{k[0].Reverse(), k[1].Reverse()}]
}

// drop forgets fl: later segments of its connection are not reassembled
// (unless a SYN or an eyecatcher starts a flow anew), and the assembler
// lets go of its stream.
func (a *clcAssembler) drop(fl *clcFlow) {
	if !fl.inMap {
		return
	}
	delete(a.flows, fl.key)
	a.unlink(fl)
	fl.inMap = false
	if fl.inAsm && !a.keep {
		a.closeAsm(fl)
	}
	a.release(fl)
}

// closeAsm ends fl's stream in the assembler, which otherwise keeps a
// connection until it sees both FINs in sequence or is flushed (a pass
// over all its connections): a RST at the next expected sequence number of
// each direction closes that half, and with both closed the assembler
// drops the connection and calls ReassemblyComplete. The stream is done
// first, so that nothing reaches it any more.
func (a *clcAssembler) closeAsm(fl *clcFlow) {
	fl.stream.done = true
	ports := fl.key[1]
	asmNet := fl.asmNet
	a.closing = true
	for range 2 {
		if !fl.inAsm {
			break
		}
		// A TCP header with the flow's ports, decoded so that the
		// segment's TransportFlow is right; Accept sets its sequence.
		src, dst := ports.Endpoints()
		h := &a.rstHdr
		copy(h[0:2], src.Raw())
		copy(h[2:4], dst.Raw())
		h[12], h[13] = 5<<4, 0x04 // data offset 5 words, RST
		if err := a.rst.DecodeFromBytes(h[:], gopacket.NilDecodeFeedback); err == nil {
			a.asm.AssembleWithContext(asmNet, &a.rst, &a.ctx)
		}
		ports, asmNet = ports.Reverse(), asmNet.Reverse()
	}
	a.closing = false
}

// segment feeds f's TCP segment to the assembler if its connection is (or
// may be) an SMC handshake; completed messages land in f.clcRaw.
func (a *clcAssembler) segment(f *Frame) {
	t := f.TCP
	net := f.NetworkFlow()
	k := flowKey{net, t.TransportFlow()}
	fl := a.lookup(k)
	if sd := fl.synDamaged(f); sd >= 0 && f.SMCOption {
		// The SYN's sequence number was damaged (its checksum failed,
		// and this SYN-ACK acknowledges another): the stream the SYN
		// began would take the client's bytes for old ones or wait on a
		// gap. It begins again here, the client's half at its first
		// segment, whose checksum is judged as the SYN's failing says.
		fl = a.restart(fl, k, sd)
		fl.sumOK[1] = true
	}
	if sd := fl.synAckDamaged(f); sd >= 0 {
		// The SYN-ACK's sequence number was damaged (its checksum did
		// not verify, and the client's first segment whose checksum
		// does acknowledges another): the server's half would take its
		// first bytes for old ones. Both halves begin again here, the
		// server's at its first segment.
		fl = a.restart(fl, k, sd)
	}
	if fl == nil && len(a.done) > 0 {
		a.after(f)
	}
	switch {
	case fl != nil:
		a.touch(fl)
	case t.SYN && (f.SMCOption || f.SMCOptionDamaged()):
		fl = a.newFlow(k)
		fl.smcSYN = true
	case len(t.Payload) >= 4:
		if _, fr := decode.CLCFrame(t.Payload); fr == decode.CLCNotCLC {
			return
		}
		fl = a.newFlow(k)
	default:
		return
	}
	ts := f.CI.Timestamp
	fl.lastSeen = ts
	f.SMCFlow = true
	asmNet := fl.asmNet
	d := 0
	if net != fl.key[0] { // the network flow of the first segment seen
		asmNet, d = asmNet.Reverse(), 1
	}
	fl.checkSum(f, d, &a.senders)
	a.frame, a.cur = f, fl
	a.arena = a.arena[:0]
	a.wholeAgain(fl, f, d)
	if fl.stream.done {
		// Kept past the cut Confirm or Decline that ended the handshake
		// for that segment whole alone (clcStream.awaitWhole): its
		// direction's next segment is it or shows it will not come.
		if w := fl.stream.awaitWhole; w == 0 || t.RST || int(w-1) == d {
			if !t.RST {
				a.remember(fl)
			}
			a.drop(fl)
		}
		a.frame, a.cur = nil, nil
		return
	}
	a.ctx.ci = f.CI
	payload := t.Payload
	if wire := f.TCPWireLen(); wire > len(payload) {
		// The snap length cut the segment: its stream goes on past the
		// bytes it did not keep, as zeros the stream knows for a hole.
		fl.cut[d].seq, fl.cut[d].n = t.Seq, wire
		a.padded = slices.Grow(append(a.padded[:0], payload...), wire-len(payload))[:wire]
		clear(a.padded[len(payload):])
		a.padFrom, a.padN = len(payload), wire-len(payload)
		t.Payload = a.padded
	}
	rst := t.RST
	if rst && f.TCPSum.Damaged() {
		// A damaged copy's RST flag may be the damage (an ACK's flags):
		// it does not end the stream (the tracker does not take it
		// either).
		t.RST = false
	}
	a.asm.AssembleWithContext(asmNet, t, &a.ctx)
	t.RST = rst
	if a.skipGap {
		a.asm.MaxBufferedPagesPerConnection, a.skipGap, a.bare = clcPagesPerConn, false, false
	}
	t.Payload, a.padN = payload, 0
	a.frame, a.cur = nil, nil
	switch {
	case t.RST && !f.TCPSum.Damaged():
		a.drop(fl)
	case fl.stream.done && fl.stream.endCut && fl.cut[d].n != 0:
		// The snap length cut the message that ended the handshake: the
		// segment whole may come after it by another way (wholeAgain).
		fl.stream.awaitWhole = uint8(d + 1)
	case fl.stream.done:
		a.remember(fl)
		a.drop(fl)
	}
	a.sweep(ts)
}

// checkSum verifies the TCP checksum of f, a segment of fl in direction
// d, and says in f.TCPSum what it found where that says something
// (sumHistory.judge, judgeIP); of a SYN, it keeps the MSS it announced,
// and whether its checksum or its SYN-ACK's failed. The segment is read
// all the same: what the capture holds is what a hand-edited capture
// means, and a damaged copy's message is malformed or followed as
// before; the finding says which segment to distrust.
func (fl *clcFlow) checkSum(f *Frame, d int, senders *ipSenders) {
	t := f.TCP
	if t.SYN {
		for _, o := range t.Options {
			if o.OptionType == layers.TCPOptionKindMSS && len(o.OptionData) == 2 {
				fl.mss[d] = binary.BigEndian.Uint16(o.OptionData)
			}
		}
	}
	if !fl.smcSYN {
		// Its TCP checksums are not judged (the capture point's
		// offload is not ruled out); its IPv4 headers' are, as their
		// sender's were.
		fl.judgeIP(f, d, senders)
		return
	}
	s, ok := tcpSum(f)
	if t.SYN && t.ACK {
		fl.synAck[d].ack, fl.synAck[d].on = t.Seq+1, !ok || !s.OK
	}
	switch {
	case ok && t.SYN && !t.ACK && !s.OK:
		fl.synBad[d].ack, fl.synBad[d].on = t.Seq+1, true
	case fl.judge(f, d, s, ok) && len(t.Payload) > 0:
		fl.damaged[d].seq, fl.damaged[d].n = t.Seq, len(t.Payload)
	}
	fl.judgeIP(f, d, senders)
}

// wholeAgain decodes the CLC messages of f, a segment of fl in direction
// d whose checksum verifies, where it is the copy of the direction's
// damaged segment (the same sequence number and length): its receiver
// dropped the damaged one and read this, but the stream took the damaged
// one's bytes and takes this for a retransmission. Only whole messages
// that start the segment are decoded (a CLC message is sent in one
// segment, smc_clc_send_* in net/smc/smc_clc.c).
//
// A segment whole whose cut copy the stream took already (a mirror that
// truncates its copies and brings them to a capture point that sees the
// segment too, the copy first) is decoded so as well.
func (a *clcAssembler) wholeAgain(fl *clcFlow, f *Frame, d int) {
	dm, ct := &fl.damaged[d], &fl.cut[d]
	n, seq := len(f.TCP.Payload), f.TCP.Seq
	switch {
	case dm.n != 0 && f.TCPSum.Checked && f.TCPSum.OK && seq == dm.seq && n == dm.n:
		dm.n = 0
	case ct.n != 0 && !(f.TCPSum.Checked && !f.TCPSum.OK) && seq == ct.seq && n == ct.n && f.TCPWireLen() == n:
		ct.n = 0
	default:
		return
	}
	for p := f.TCP.Payload; len(p) > 0; {
		l, fr := decode.CLCFrame(p)
		if fr != decode.CLCFramed || l > len(p) {
			return
		}
		var none clcSwallow
		if decode.ProposalOffersAlibaba(p[:l]) {
			// The stream took the cut copy's Proposal, whose offer the
			// cut hid: the messages after it are ANCK's as well.
			fl.stream.anck = true
		}
		a.emit(p[:l], &none, fl.stream.anck)
		p = p[l:]
	}
}

// sweep forgets stalled handshakes, in capture time, at most once per
// clcIdle so that the per-frame cost stays a comparison.
func (a *clcAssembler) sweep(now time.Time) {
	if now.Sub(a.swept) < clcIdle {
		return
	}
	a.swept = now
	old := now.Add(-clcIdle)
	for fl := a.held.next; fl != &a.held; {
		next := fl.next
		if fl.lastSeen.Before(old) {
			a.drop(fl)
		}
		fl = next
	}
}

// evict makes room when maxCLCFlows handshakes are followed: the least
// recently seen quarter is dropped, as if stalled.
func (a *clcAssembler) evict() {
	for range maxCLCFlows / 4 {
		if a.held.next == &a.held {
			break
		}
		a.drop(a.held.next)
	}
}

// flushAll ends every stream at the end of the capture.
func (a *clcAssembler) flushAll() {
	a.asm.FlushAll()
	for a.held.next != &a.held {
		a.drop(a.held.next)
	}
}

// emit hands one complete message to the current frame. The bytes are
// copied because the assembler reuses its buffers. A message that starts
// inside the claimed length of a malformed message before it (in) is
// noted as such, on its own frame.
func (a *clcAssembler) emit(msg []byte, in *clcSwallow, anck bool) {
	inside := in.left > 0
	if inside {
		if a.frame != nil {
			a.frame.CLCErr = append(a.frame.CLCErr, &SwallowedError{Msg: decode.CLCType(msg[4]), By: in.typ,
				Frame: in.frame, Length: in.length, From: in.at, To: in.at + len(msg) - 1})
		}
		in.left = max(in.left-len(msg), 0)
		in.at += len(msg)
	}
	if a.frame == nil { // flushed at end of capture: no frame to carry it
		return
	}
	start := len(a.arena)
	if cap(a.arena)-start < len(msg) {
		// A new backing array: earlier messages of this frame keep the old
		// one, so their slices stay valid.
		a.arena = make([]byte, 0, max(2*cap(a.arena), len(msg), 1024))
		start = 0
	}
	a.arena = append(a.arena, msg...)
	a.frame.clcRaw = append(a.frame.clcRaw, a.arena[start:start+len(msg):start+len(msg)])
	a.frame.clcRawInside = append(a.frame.clcRawInside, inside)
	a.frame.clcRawANCK = append(a.frame.clcRawANCK, anck)
}

// wholeWithin looks, in b (the start of a CLC message whose length field
// says more than b holds, or which does not decode at that length), for
// the whole message its contents make: the shortest n that ends in a
// trailer eyecatcher and at which b decodes as a message of its type with
// length n (for a Proposal, the length Linux checks its contents against,
// smc_clc_msg_prop_valid in net/smc/smc_clc.c). It returns 0 when there is
// none: the message is not all there yet, or is damaged otherwise. Only
// such messages come here (a handful per handshake), and candidates are
// few (an eyecatcher must end them).
func (a *clcAssembler) wholeWithin(b []byte) int {
	for n := decode.CLCMinLength; n <= len(b); n++ {
		t := b[n-4 : n]
		if t[0] != 0xE2 || t[1] != 0xD4 || t[2] != 0xC3 || (t[3] != 0xD9 && t[3] != 0xC4) {
			continue
		}
		a.scratch = append(a.scratch[:0], b[:n]...)
		binary.BigEndian.PutUint16(a.scratch[5:7], uint16(n))
		if a.probe.DecodeFromBytes(a.scratch, gopacket.NilDecodeFeedback) == nil {
			return n
		}
	}
	return 0
}

// swallowing reports a message whose length field claims more than the
// whole message msg its contents make, on the frame that completed msg.
func (a *clcAssembler) swallowing(msg []byte, length int) {
	if a.frame == nil {
		return
	}
	name := "CLC " + decode.CLCType(msg[4]).String()
	a.frame.CLCErr = append(a.frame.CLCErr, &decode.Error{Layer: name, Field: "length", Offset: 5, Err: decode.ErrBadLength,
		Detail: fmt.Sprintf("length %d, but a whole %s ends at %d (its trailer at %d): the length takes in the next %d bytes of the stream",
			length, name, len(msg), len(msg)-4, length-len(msg))})
}

// ErrMended is wrapped by the notes, in the CLCErr of a frame, of a CLC
// message a field of which the capture damaged, read as sent: a note, not
// an error of the message.
var ErrMended = errors.New("damaged in the capture's copy")

// ErrLengthMended notes a message whose length field the capture damaged
// (lengthMended).
var ErrLengthMended = fmt.Errorf("length %w", ErrMended)

// ErrEyecatcherMended notes a message one byte of whose leading
// eyecatcher the capture damaged (eyecatcherMended).
var ErrEyecatcherMended = fmt.Errorf("eyecatcher %w", ErrMended)

// ErrDiagnosisMended notes a Decline one byte of whose diagnosis the
// capture damaged (diagnosisMended).
var ErrDiagnosisMended = fmt.Errorf("diagnosis %w", ErrMended)

// diagnosisMended returns the diagnosis a Decline (msg, at offset at of
// its segment's payload) was sent with, where the capture damaged one
// byte of it: the code held is no code a kernel sends (decode's table
// names none), the segment's checksum fails (sum), and changing exactly
// one of its four bytes by what the checksums differ by (one byte at an
// even offset from the TCP header's start is a 16-bit word's high byte;
// the header's length is a multiple of four) gives exactly one code with
// a name. A byte damaged elsewhere leaves the code as held.
func diagnosisMended(msg []byte, at int, sum TCPSumStatus) (decode.DeclineCode, bool) {
	const diag = 16 // struct smc_clc_msg_decline: the header, peer ID, then peer_diagnosis
	if len(msg) < diag+4 || !sum.Checked || sum.OK || decode.DeclineCode(binary.BigEndian.Uint32(msg[diag:])).Known() {
		return 0, false
	}
	delta := sum.delta()
	var found decode.DeclineCode
	n := 0
	for j := range 4 {
		v, k := sentFor(delta, at+diag+j, msg[diag+j])
		for _, sent := range v[:k] {
			b := [4]byte(msg[diag : diag+4])
			b[j] = sent
			if c := decode.DeclineCode(binary.BigEndian.Uint32(b[:])); c.Known() {
				found = c
				n++
			}
		}
	}
	return found, n == 1
}

// diagnosisNote writes code, the diagnosis diagnosisMended found a
// Decline msg was sent with, into msg, with its note (less: what else
// the checksums' difference was taken for).
func (a *clcAssembler) diagnosisNote(msg []byte, code decode.DeclineCode, less string) {
	held := binary.BigEndian.Uint32(msg[16:])
	binary.BigEndian.PutUint32(msg[16:], uint32(code))
	a.noteMended(msg, "diagnosis", 16, ErrDiagnosisMended,
		fmt.Sprintf("diagnosis %#08x in a segment whose checksum fails is one byte off %#08x %s by what the carried and computed checksums differ%s: read as that",
			held, uint32(code), code, less))
}

// diagnosisAfter mends the diagnosis of msg, a Decline at offset at of
// its segment's payload whose eyecatcher was held as heldEye (one byte
// off: eyecatcherMended), as diagnosisMended does, with what the
// checksums differ by less what that byte accounts for: two bytes
// damaged, each read as sent.
func (a *clcAssembler) diagnosisAfter(heldEye, msg []byte, at int) {
	sum := a.frame.TCPSum
	if !sum.Checked || sum.OK {
		return
	}
	delta := sum.delta()
	for j := range 4 {
		delta = (delta + 0xffff - byteShare(at+j, heldEye[j], msg[j])) % 0xffff
	}
	if delta == 0 {
		return // the eyecatcher's byte is all the damage
	}
	sum.Want = uint16((uint32(sum.Got) + 0xffff - delta) % 0xffff)
	if code, ok := diagnosisMended(msg, at, sum); ok {
		a.diagnosisNote(msg, code, " less the eyecatcher's byte")
	}
}

// eyecatcherMended looks, in b (bytes of a damaged copy that frame no CLC
// message), for a whole message whose leading eyecatcher is one byte off:
// its length field within b, and b's first bytes up to it decoding as a
// message of its type with the eyecatcher restored, its trailer an
// eyecatcher. It returns the message's length, 0 for none, and
// leaves the message as sent in a.scratch.
func (a *clcAssembler) eyecatcherMended(b []byte) int {
	if len(b) < decode.CLCMinLength {
		return 0
	}
	n := int(binary.BigEndian.Uint16(b[5:7]))
	if n < decode.CLCMinLength || n > len(b) {
		return 0
	}
	if t := [4]byte(b[n-4 : n]); t != decode.EyecatcherSMCR && t != decode.EyecatcherSMCD {
		return 0 // (a Decline's trailer is not checked by its decoder)
	}
	for _, e := range [...][4]byte{decode.EyecatcherSMCR, decode.EyecatcherSMCD} {
		off := 0
		for i := range e {
			if b[i] != e[i] {
				off++
			}
		}
		if off != 1 {
			continue
		}
		a.scratch = append(append(a.scratch[:0], e[:]...), b[4:n]...)
		if a.probe.DecodeFromBytes(a.scratch, gopacket.NilDecodeFeedback) == nil {
			return n
		}
	}
	return 0
}

// noteMended notes msg, a message as sent read from a damaged copy whose
// field (at offset) the capture damaged: err says which, detail how.
func (a *clcAssembler) noteMended(msg []byte, field string, offset int, err error, detail string) {
	if a.frame == nil {
		return
	}
	name := "CLC " + decode.CLCType(msg[4]).String()
	a.frame.CLCErr = append(a.frame.CLCErr, &decode.Error{Layer: name, Field: field, Offset: offset, Err: err, Detail: detail})
}

// lengthMended notes msg, a whole message in a damaged copy whose length
// field says length, read with its own length.
func (a *clcAssembler) lengthMended(msg []byte, length int) {
	name := "CLC " + decode.CLCType(msg[4]).String()
	a.noteMended(msg, "length", 5, ErrLengthMended,
		fmt.Sprintf("length %d in a segment whose checksum fails, which ends in a whole %s of %d bytes (its trailer at %d): read as %d",
			length, name, len(msg), len(msg)-4, len(msg)))
}

// ErrSwallowed is wrapped by a SwallowedError.
var ErrSwallowed = errors.New("inside an earlier CLC message")

// SwallowedError notes, in the CLCErr of its frame, a CLC message that
// lies inside the bytes the length field of an earlier message of its
// direction claims: the message is decoded (it is in the frame's CLC,
// Frame.CLCInside says which), but a receiver that reads the earlier
// message's length (smc_clc_wait_msg in net/smc/smc_clc.c reads as many
// bytes as it says) takes it in as part of that message, so it is no step
// of the handshake. The earlier message's frame has the length error.
type SwallowedError struct {
	Msg, By  decode.CLCType // this message and the swallowing one
	Frame    int            // the swallowing message's frame
	Length   int            // its length field
	From, To int            // this message's bytes, as offsets in the swallowing one
}

func (e *SwallowedError) Error() string {
	return fmt.Sprintf("CLC %s: lies inside the CLC %s of frame %d (its bytes %d-%d of the %d its length says): a receiver reads it as part of that message",
		e.Msg, e.By, e.Frame, e.From, e.To, e.Length)
}

func (e *SwallowedError) Unwrap() error { return ErrSwallowed }

// clcStream is one TCP connection's pair of half-streams.
type clcStream struct {
	a       *clcAssembler
	fl      *clcFlow
	pending [2][]byte // partial message per direction
	started [2]bool
	done    bool
	smcSYN  bool // see clcFlow.smcSYN
	// anck: the Proposal offered Alibaba's vendor options, so this
	// handshake's messages are ANCK's (decode.CLC.ANCK).
	anck bool
	// endCut: the Confirm or Decline that ended the handshake (done) was
	// cut by the snap length; awaitWhole: 1 + the direction (as
	// clcAssembler.segment counts them) whose segment whole, after its
	// cut copy, is still awaited for it (wholeAgain), 0 for none.
	endCut     bool
	awaitWhole uint8
	// inside per direction: the stream bytes that the length field of a
	// malformed message claims beyond its real end (swallowing).
	inside [2]clcSwallow
	// next per direction: the TCP sequence number of the next byte
	// ReassembledSG gets; holes: the bytes segments cut by the snap length
	// did not hold, which segment fills with zeros so that the stream goes
	// on (clcHole).
	next  [2]uint32
	holes [2][]clcHole
	// acked per direction, where ackSeen: the highest acknowledgement
	// number the other direction's segments carried.
	acked   [2]uint32
	ackSeen [2]bool
	// gap per direction: the stream went past bytes the capture missed
	// since the last message it framed, so the bytes after them need not
	// start a message: bytes that are not CLC there say nothing of the
	// handshake (the missed bytes may have held its messages).
	gap [2]bool
	// over per direction: bytes that are not CLC came past such a gap
	// (the handshake is over, how the capture cannot tell): no more of
	// that direction is followed, the other's may still say.
	over [2]bool
}

// clcHole is bytes of a stream the capture did not keep: the end of a
// segment its snap length cut, from sequence number seq, n bytes.
type clcHole struct {
	seq uint32
	n   uint32
}

// clcSwallow follows the bytes that a message's length field claims past
// the whole message its contents make (a Proposal whose length takes in
// the Confirm after it): the messages found there are framed and decoded
// as they are, and each is noted as lying inside the swallowing one.
type clcSwallow struct {
	left   int // claimed bytes still to come
	at     int // offset of the next byte in the swallowing message
	length int // its length field
	frame  int // the frame that carries it
	typ    decode.CLCType
}

func dirIndex(d reassembly.TCPFlowDirection) int {
	if d == reassembly.TCPDirClientToServer {
		return 0
	}
	return 1
}

// Accept implements reassembly.Stream. A half seen without its SYN is
// started at its first segment, so mid-connection captures still cut
// messages that begin in that segment.
func (s *clcStream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir reassembly.TCPFlowDirection, nextSeq reassembly.Sequence, start *bool, ac reassembly.AssemblerContext) bool {
	if s.a.closing {
		// closeAsm's RST: in sequence, so that it ends the half at once
		// (a half never started starts with it).
		if nextSeq < 0 {
			*start = true
		} else {
			tcp.Seq = uint32(nextSeq)
		}
		return true
	}
	if s.done {
		return false
	}
	damaged := s.a.frame != nil && tcp == s.a.frame.TCP && s.a.frame.TCPSum.Damaged()
	if !damaged && s.a.frame != nil && tcp == s.a.frame.TCP && len(tcp.Payload) > 0 && nextSeq >= 0 {
		if d := int32(tcp.Seq - uint32(nextSeq)); d > clcAhead || d < -clcAhead {
			// Further from where the stream goes on than a handshake's
			// messages reach, its checksum failing as held though none
			// of the connection's was judged yet: its sequence number
			// is the likeliest damage.
			sum := s.a.frame.TCPSumAnyway()
			damaged = sum.Damaged()
		}
	}
	if damaged && len(tcp.Payload) > 0 && nextSeq >= 0 && tcp.Seq != uint32(nextSeq) {
		// A damaged copy (its checksum fails) away from where its
		// stream goes on: its sequence number may be the damage, and
		// the stream would take its bytes for others or wait on a gap
		// its receiver never saw. Left out, as a copy it never read;
		// one whole message it holds is the frame's to show (the
		// tracker judges whether it is the step its stream waits for).
		if n, fr := decode.CLCFrame(tcp.Payload); fr == decode.CLCFramed && n == len(tcp.Payload) &&
			s.a.probe.DecodeFromBytes(tcp.Payload, gopacket.NilDecodeFeedback) == nil {
			s.a.emit(tcp.Payload, &clcSwallow{}, s.anck)
		}
		return false
	}
	i := dirIndex(dir)
	if damaged && len(tcp.Payload) > 0 && len(tcp.Payload) < decode.CLCMinLength && len(s.pending[i]) == 0 && s.started[i] {
		if _, f := decode.CLCFrame(tcp.Payload); f == decode.CLCNotCLC {
			// A damaged copy whose few bytes, where a message would
			// begin, are no CLC: its header length damaged (an ACK's
			// header read as bytes), or bytes its receiver dropped.
			// Taken, they would stand for the stream's next bytes and
			// shift the message sent at their place; left out, the
			// segment that carries those bytes is read in its place, or
			// the peer's ACK of them makes them missed.
			return false
		}
	}
	if !s.started[i] {
		s.started[i] = true
		if !tcp.SYN {
			*start = true
		}
		s.next[i] = tcp.Seq
		if tcp.SYN {
			s.next[i]++
		}
	}
	if tcp.ACK && !damaged {
		if o := 1 - i; !s.ackSeen[o] || int32(tcp.Ack-s.acked[o]) > 0 {
			s.acked[o], s.ackSeen[o] = tcp.Ack, true
		}
	}
	if nextSeq >= 0 && int32(tcp.Seq-uint32(nextSeq)) > 0 &&
		(s.ackSeen[i] && int32(s.acked[i]-tcp.Seq) >= 0 || startsConfirm(tcp.Payload)) {
		// The bytes before this segment the capture missed, and the
		// receiver acknowledged them, or the segment is a Confirm (the
		// client sends it for the Accept, which the server sends for
		// the Proposal: the bytes before it reached the server, the
		// ACK saying so may come after it): the sender will not send
		// them again. The assembler, made to queue at most one page
		// for this segment, hands it on at once past the gap (a skip):
		// a Confirm after a Proposal and Accept the capture missed is
		// still the Confirm, read with its own frame.
		s.a.asm.MaxBufferedPagesPerConnection, s.a.skipGap = 1, true
		s.a.bare, s.a.bareAt = len(tcp.Payload) == 0 && !tcp.SYN, tcp.Seq
	}
	if a := s.a; a.padN > 0 && a.frame != nil && tcp == a.frame.TCP {
		seq := tcp.Seq + uint32(a.padFrom)
		if tcp.SYN {
			seq++
		}
		// Holes the stream has gone past are forgotten; with more than a
		// handshake has, the stream stops being followed rather than
		// read zeros as a message's bytes.
		from := s.next[i] - uint32(len(s.pending[i]))
		s.holes[i] = slices.DeleteFunc(s.holes[i], func(h clcHole) bool { return int32(h.seq+h.n-from) <= 0 })
		if len(s.holes[i]) == maxCLCHoles {
			s.done = true
		} else {
			s.holes[i] = append(s.holes[i], clcHole{seq: seq, n: uint32(a.padN)})
		}
	}
	return true
}

// clcAhead is how far from the next byte of a half-stream a handshake's
// bytes can lie: its sender's CLC messages, at most three of the largest
// length a receiver reads (decode.CLCMaxLength).
const clcAhead = 3 * decode.CLCMaxLength

// maxCLCHoles bounds the holes a direction of a handshake remembers: it has
// a few messages, each in a segment or two.
const maxCLCHoles = 8

// holeIn returns where, from seq on, the first hole of direction i that
// overlaps n bytes starts (its offset from seq), or -1.
func (s *clcStream) holeIn(i int, seq uint32, n int) int {
	at := -1
	for _, h := range s.holes[i] {
		start, end := int(int32(h.seq-seq)), int(int32(h.seq-seq))+int(h.n)
		if end <= 0 || start >= n {
			continue
		}
		if off := max(start, 0); at < 0 || off < at {
			at = off
		}
	}
	return at
}

// ReassembledSG implements reassembly.Stream.
func (s *clcStream) ReassembledSG(sg reassembly.ScatterGather, ac reassembly.AssemblerContext) {
	if s.done {
		return
	}
	n, _ := sg.Lengths()
	dir, _, end, skip := sg.Info()
	i := dirIndex(dir)
	if s.over[i] {
		return
	}
	data := sg.Fetch(n)
	if skip != 0 { // bytes lost: a message spanning the gap is broken
		s.pending[i] = s.pending[i][:0]
		if skip > 0 { // -1: the half's first bytes, at the sequence Accept noted
			s.next[i] += uint32(skip)
			s.gap[i] = true
		}
		if s.a.bare && skip > 0 && int32(s.next[i]-s.a.bareAt) >= 0 {
			// The skip a segment with no bytes asked for reached bytes
			// queued at or past its own sequence number, captured before
			// it: its sender sends an ACK or FIN at the next byte it has
			// not sent, so they are a copy whose sequence number was
			// damaged, no bytes of the stream.
			s.next[i] += uint32(n)
			return
		}
	}
	// seq is the sequence number of data[0], pending bytes included;
	// segStart that of the segment's first byte.
	segStart := s.next[i]
	seq := s.next[i] - uint32(len(s.pending[i]))
	s.next[i] += uint32(n)
	if len(s.pending[i]) > 0 {
		s.pending[i] = append(s.pending[i], data...)
		data = s.pending[i]
	}
	for len(data) > 0 && !s.done {
		if len(s.holes[i]) > 0 {
			if h := s.holeIn(i, seq, len(data)); h >= 0 {
				l, fr := decode.CLCFrame(data[:min(h, len(data))])
				if h < decode.CLCHeaderLength || fr != decode.CLCFramed {
					// The message's header is not in the capture: the
					// stream cannot be framed past it.
					s.done = true
					break
				}
				if h < l {
					if l > len(data) {
						break // its end is still to come
					}
					// The snap length cut the message: what the capture
					// holds of it is decoded as far as it goes
					// (decode.CLC.DecodeCut), the stream goes on after it.
					s.a.emit(data[:h], &s.inside[i], s.anck)
					if typ := decode.CLCType(data[4]); typ == decode.CLCTypeConfirm || typ == decode.CLCTypeDecline {
						s.done, s.endCut = true, true
					}
					data, seq = data[l:], seq+uint32(l)
					continue
				}
			}
		}
		l, fr := decode.CLCFrame(data)
		if fr == decode.CLCBadLength && !s.smcSYN {
			// Followed mid-stream on the strength of 4 bytes: with a length
			// no message has, they were not CLC after all.
			fr = decode.CLCNotCLC
		}
		if (fr == decode.CLCBadLength || fr == decode.CLCFramed && l > len(data)) && s.a.frame != nil && s.a.frame.TCPSum.Damaged() {
			if n := s.a.wholeWithin(data); n == len(data) {
				// A damaged copy whose message's length claims more than
				// the segment, yet the segment ends in a whole message of
				// its type (its trailer eyecatcher, its contents decoding
				// at that length): the length is the damage, what the
				// receiver read is this message as it was sent.
				msg := append([]byte(nil), data...)
				binary.BigEndian.PutUint16(msg[5:7], uint16(n))
				s.a.lengthMended(data, l)
				s.took(i, msg)
				data, seq = data[n:], seq+uint32(n)
				continue
			}
		}
		if fr == decode.CLCNotCLC && s.a.frame != nil && s.a.frame.TCPSum.Damaged() {
			if n := s.a.eyecatcherMended(data); n > 0 {
				// A damaged copy whose bytes begin a whole message of its
				// type but for one byte of the eyecatcher: what the
				// receiver read is the message as it was sent.
				msg := append([]byte(nil), s.a.scratch...)
				s.a.noteMended(msg, "eyecatcher", 0, ErrEyecatcherMended,
					fmt.Sprintf("eyecatcher % x in a segment whose checksum fails, one byte off the one its whole %s of %d bytes ends in: read as % x",
						data[:4], "CLC "+decode.CLCType(msg[4]).String(), n, msg[:4]))
				if at := int32(seq - segStart); at >= 0 && decode.CLCType(msg[4]) == decode.CLCTypeDecline {
					// The diagnosis may be damaged too: what the
					// checksums differ by less the eyecatcher's byte.
					s.a.diagnosisAfter(data[:4], msg, int(at))
				}
				s.took(i, msg)
				data, seq = data[n:], seq+uint32(n)
				continue
			}
		}
		if (fr == decode.CLCNotCLC || fr == decode.CLCBadLength || fr == decode.CLCNeedMore || l > len(data)) && s.a.frame != nil && s.a.frame.TCPSum.Damaged() {
			// A damaged copy's bytes (its checksum fails) that frame no
			// message within it: its receiver read another copy, or none, so they
			// neither end the handshake nor fail it. They are passed
			// over; the next segment starts a message or the data (a
			// CLC message is sent in one segment, smc_clc_send_* in
			// net/smc/smc_clc.c, so the damaged one held whole ones).
			s.pending[i] = s.pending[i][:0]
			return
		}
		if fr == decode.CLCNotCLC { // application data: the handshake is over
			if s.gap[i] && !s.over[1-i] {
				s.over[i], s.pending[i] = true, nil
				return
			}
			s.done = true
			if s.a.frame != nil && !s.gap[i] {
				s.a.frame.NotCLC = true
			}
			return
		}
		if fr == decode.CLCBadLength {
			// After SMC SYNs, an eyecatcher then a length no message has:
			// Linux's receiver fails the handshake here (smc_clc_wait_msg),
			// and the stream cannot be framed further.
			s.a.malformed(data)
			s.done = true
			break
		}
		if fr == decode.CLCFramed && (l > len(data) || s.a.probe.DecodeFromBytes(data[:l], gopacket.NilDecodeFeedback) != nil) {
			if n := s.a.wholeWithin(data[:min(l, len(data))]); n > 0 {
				// The length claims more than the whole message its
				// contents make: resume framing at the message's real end,
				// where the sender's next message starts.
				s.a.swallowing(data[:n], l)
				if s.a.frame == nil || !s.a.frame.TCPSum.Damaged() {
					// (A damaged copy's length is the damage's: its
					// receiver read another copy, or none, so the
					// messages after it are not read inside it.)
					s.inside[i] = clcSwallow{left: l - n, at: n, length: l, typ: decode.CLCType(data[4])}
					if s.a.frame != nil {
						s.inside[i].frame = s.a.frame.Number
					}
				}
				data, seq = data[n:], seq+uint32(n)
				continue
			}
		}
		if fr == decode.CLCNeedMore || l > len(data) {
			break
		}
		if at := int32(seq - segStart); at >= 0 && decode.CLCType(data[4]) == decode.CLCTypeDecline && s.a.frame != nil {
			if code, ok := diagnosisMended(data[:l], int(at), s.a.frame.TCPSum); ok {
				// The receiver read the code as it was sent: the one
				// byte the checksums say changed is the damage.
				msg := append([]byte(nil), data[:l]...)
				s.a.diagnosisNote(msg, code, "")
				s.took(i, msg)
				data, seq = data[l:], seq+uint32(l)
				continue
			}
		}
		s.took(i, data[:l])
		data, seq = data[l:], seq+uint32(l)
	}
	switch {
	case s.done:
		s.pending[i] = nil
	case end && len(data) > 0:
		// FIN or RST in sequence after part of a message: a handshake cut
		// short is worth seeing, on the frame that ended it. What the
		// capture did not keep of it is no part of it.
		if h := s.holeIn(i, seq, len(data)); h >= 0 {
			if _, fr := decode.CLCFrame(data[:h]); h >= decode.CLCHeaderLength && fr == decode.CLCFramed {
				s.a.emit(data[:h], &s.inside[i], s.anck)
			}
		} else {
			s.a.cut(data)
		}
		s.pending[i] = nil
	default:
		// Keep the partial tail; copy first because data may alias pending.
		rest := append([]byte(nil), data...)
		s.pending[i] = append(s.pending[i][:0], rest...)
	}
}

// took hands msg, a whole message of direction i read in its place, to
// the frame: a Proposal offering ANCK makes the stream ANCK's, and a
// Confirm or Decline ends it.
func (s *clcStream) took(i int, msg []byte) {
	if decode.ProposalOffersAlibaba(msg) {
		s.anck = true
	}
	s.a.emit(msg, &s.inside[i], s.anck)
	s.gap[i] = false
	if typ := decode.CLCType(msg[4]); typ == decode.CLCTypeConfirm || typ == decode.CLCTypeDecline {
		s.done = true
	}
}

// cut reports an incomplete message at the end of its stream.
func (a *clcAssembler) cut(p []byte) {
	if a.frame == nil {
		return
	}
	want := "?"
	if len(p) >= 7 {
		want = strconv.Itoa(int(p[5])<<8 | int(p[6]))
	}
	a.frame.CLCErr = append(a.frame.CLCErr, &decode.Error{Layer: "CLC", Field: "length", Offset: len(p),
		Err: decode.ErrTruncated, Detail: "stream ended after " + strconv.Itoa(len(p)) + " of " + want + " bytes"})
}

// malformed reports a message whose length field cannot be right.
func (a *clcAssembler) malformed(p []byte) {
	if a.frame != nil {
		a.frame.CLCErr = append(a.frame.CLCErr, decode.CLCBadLengthError(p))
	}
}

// ReassemblyComplete implements reassembly.Stream.
func (s *clcStream) ReassemblyComplete(ac reassembly.AssemblerContext) bool {
	s.done = true
	s.pending = [2][]byte{}
	// The assembler drops the connection (true), so it lets go of the
	// stream: the flow is recycled unless segments still come to it.
	fl := s.fl // New made s its flow's stream
	fl.inAsm = false
	if !s.a.closing { // closeAsm's caller recycles it
		s.a.release(fl)
	}
	return true
}

// startsConfirm reports whether p starts with a CLC Confirm: a message
// decode.CLCFrame frames, of the Confirm's type (struct smc_clc_msg_hdr,
// net/smc/smc_clc.h).
func startsConfirm(p []byte) bool {
	_, f := decode.CLCFrame(p)
	return f == decode.CLCFramed && decode.CLCType(p[4]) == decode.CLCTypeConfirm
}

// restart begins the stream of fl, whose direction sd (its index in fl)
// sent a SYN or SYN-ACK whose sequence number was damaged, again at the
// segment of the other direction, the new flow's first (key k): the
// MSS each SYN announced and whether each direction's checksums verified
// carry over (checkSum).
func (a *clcAssembler) restart(fl *clcFlow, k flowKey, sd int) *clcFlow {
	mss, ipOK, sumOK := fl.mss, fl.ipSumOK, fl.sumOK
	a.drop(fl)
	fl = a.newFlow(k)
	fl.smcSYN = true
	fl.mss, fl.ipSumOK, fl.sumOK = [2]uint16{mss[1-sd], mss[sd]}, [2]bool{ipOK[1-sd], ipOK[sd]}, [2]bool{sumOK[1-sd], sumOK[sd]}
	return fl
}

// synAckDamaged returns the direction of fl's SYN-ACK whose checksum did
// not verify where f, the peer's first segment after it with an ACK and
// a checksum that verifies, acknowledges another sequence number than
// that SYN-ACK's, else -1 (and for a nil fl). The first such segment
// decides: the SYN-ACK is left to be judged no further.
func (fl *clcFlow) synAckDamaged(f *Frame) int {
	if fl == nil || f.TCP.SYN || !f.TCP.ACK {
		return -1
	}
	d := 0
	if f.NetworkFlow() != fl.key[0] {
		d = 1
	}
	b := &fl.synAck[1-d]
	if !b.on {
		return -1
	}
	if s, ok := tcpSum(f); !ok || !s.OK {
		return -1
	}
	b.on = false
	if f.TCP.Ack != b.ack {
		return 1 - d
	}
	return -1
}

// synDamaged returns the direction of fl's SYN whose checksum failed
// where f is a SYN-ACK of fl that acknowledges another sequence number
// than that SYN's, else -1 (and for a nil fl).
func (fl *clcFlow) synDamaged(f *Frame) int {
	if fl == nil || !f.TCP.SYN || !f.TCP.ACK {
		return -1
	}
	d := 0
	if f.NetworkFlow() != fl.key[0] {
		d = 1
	}
	if b := &fl.synBad[1-d]; b.on && f.TCP.Ack != b.ack {
		return 1 - d
	}
	return -1
}
