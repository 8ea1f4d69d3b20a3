package track

import (
	"encoding/binary"
	"math"
	"math/bits"

	"github.com/smcscope/smcscope/capture"
)

// The steady stream of an SMC-R link is ACKs, RDMA WRITEs and CDCs on a
// link and connection the tracker knows. Copying each such frame into an
// input (fill) and dispatching it through feed, roce, ack, write and cdc
// cost the tracker a third of what decoding the frame costs; fastRoCE
// follows these frames straight from the decoded layers, in one function
// with few branches on the frame's kind (they alternate in no pattern a
// branch predictor learns, with a decoder's worth of branches in between).
// Anything else takes the general path, which stays the reference: a
// change to what roce, ack, write, cdc or touchConn do for such a frame
// must be made here too. TestFastPathSame (every capture of the
// repository), TestFastPathSameMutated (damaged copies) and FuzzFastPath
// feed frames both ways and compare the trackers' fields, counters and
// whole state.

// hotLink is the link of the last RoCE frame fastRoCE followed, with the
// IPv4 addresses and DestQP of its directions: a link's two directions
// carry most frames in a row, and comparing a packet's addresses with
// these costs less than building its key and scanning qpCache. The
// addresses are kept as the packet's bytes load (wire order read as little
// endian, which needs no byte swap); a direction not seen yet has DestQP
// noQPN, which no BTH carries (its field is 24 bits). rc points at the
// link's two directions. Like qpCache it is cleared whenever byQP changes.
type hotLink struct {
	link     *Link
	src, dst [2]uint32
	qpn      [2]uint32
	rc       [2]*RC
	// Per direction, the connection of the last CDC fastRoCE followed and
	// the RMB of the last WRITE, with what their checks read that only
	// feed changes: a CDC with the same token, or a WRITE with the same
	// rkey, skips the map lookup and those checks. feed forgets them
	// before each frame it handles.
	cdc   [2]hotCDC
	write [2]hotWrite
}

// dir is the direction of the hot link a frame with this source address
// (as hotLink keeps it) and DestQP is on, if it is on that link: the one
// whose both are not the frame's is the other. Computed, not branched
// on; the DestQP tells the directions of a link within one host apart.
func (h *hotLink) dir(src, qpn uint32) Dir {
	x := uint64(src^h.src[0]) | uint64(qpn^h.qpn[0])
	return Dir((x | -x) >> 63)
}

// noQPN marks a direction of the hot link not seen yet.
const noQPN = ^uint32(0)

// hotCDC is a connection whose CDCs fastRoCE may follow: in its link
// group's token table under token, placed by its handshake, its cursors
// known, not closed, with RMBEs of size (this direction's) and peer.
type hotCDC struct {
	conn       *Conn
	token      uint32
	size, peer uint32
}

// hotWrite is an rkey of the link's table whose connection has frames,
// with the bounds of its RMB (rmbRef: a WRITE that ends outside [lo, hi)
// is counted; 0 and the largest address when its VA or size is unknown).
type hotWrite struct {
	conn   *Conn
	lo, hi uint64
	rkey   uint32
	// va and rmbe are the RMB's address (0: unknown) and the RMBE's
	// size (c.rmbeSize), where a WRITE First places its data (placeWrite).
	va   uint64
	rmbe uint32
}

// forgetConns drops the cached connections, before feed changes what
// they were checked against.
func (h *hotLink) forgetConns() {
	h.cdc = [2]hotCDC{}
	h.write = [2]hotWrite{}
}

// clearQPCache forgets the cached wire keys, after a change of byQP.
func (t *Tracker) clearQPCache() {
	t.qpCache = [4]qpCacheEntry{}
	t.hot = hotLink{}
}

// What fastRoCE reports: it handled the frame, the frame is not one it
// handles, or it lacked a cache entry that warm can fill (the frame may
// be one it handles once that is done).
type fastResult uint8

const (
	fastDone fastResult = iota
	fastNo
	missLink  // the frame's link direction is not the hot link's
	missCDC   // the CDC's token is not its direction's hot connection
	missWrite // the WRITE's rkey is not its direction's hot one
)

// fastRoCE handles f when it is an ACK (no NAK or RNR NAK; attributed to
// the connection of the request it answers, or to the link alone), an
// RDMA WRITE Only whose rkey is known, or a CDC without flags (struct
// smc_cdc_msg, net/smc/smc_cdc.h) that continues its connection's
// sequence and cursors, in PSN order, on a direction of the hot link,
// while no sweep is due and no timeline is recorded. It then changes the
// tracker exactly as fill and feed would have and reports fastDone; for
// any other frame it changes nothing. It calls no function, so that the
// values it holds stay in registers: a call would make Go spill them on
// every frame (its ABI has no callee-saved registers). The lookups a
// cache miss needs are warm's.
func (t *Tracker) fastRoCE(f *capture.Frame) fastResult {
	// A decoded frame has one transport (capture's decodeChain): with a
	// BTH and IPv4 it has neither TCP, which fill would follow instead,
	// nor a GRH, whose GIDs would key its queue pair.
	b, ip := f.BTH, f.IPv4
	// A bad ICRC or length is a finding (roce.icrc.bad, roce.length.bad):
	// the general path raises it.
	// So is the damage of the file read past before it (smc.capture.damaged).
	if b == nil || ip == nil || len(ip.SrcIP) != 4 || len(ip.DstIP) != 4 || f.ICRC.Checked && !f.ICRC.OK || f.LengthBad || f.RecordErr != nil {
		return fastNo
	}
	// A frame on which feed may sweep (every 1024th), and every frame
	// while a timeline is recorded, takes the general path.
	if t.stats.Frames+1 >= t.fastUntil {
		return fastNo
	}
	// A step back in time is a finding of feed's (expert.TimeBackwards),
	// and the clock's reading there is feed's.
	ns, ok := t.clock.usual(f.Number, f.UnixNano())
	if !ok {
		return fastNo
	}
	h := &t.hot
	src, dst := binary.LittleEndian.Uint32(ip.SrcIP), binary.LittleEndian.Uint32(ip.DstIP)
	d := h.dir(src, b.DestQP)
	// One test for the three.
	if (h.src[d]^src)|(h.dst[d]^dst)|(h.qpn[d]^b.DestQP) != 0 {
		return missLink
	}
	l, rc := h.link, h.rc[d]
	var (
		c        *Conn
		cdc      bool
		produced uint64
	)
	if op := uint8(b.Opcode); op == opAck {
		// ack: the connection of the request acknowledged, found among
		// the other direction's last two requests first (connOf).
		a := f.AETH
		r := h.rc[d^1]
		// An ACK may end the other direction's run out of sequence, or
		// say that the capture missed requests (an ACK at or past the
		// PSN the other direction expects: ack). 24-bit PSNs: the
		// difference is at or past 0 when its bit 23 is clear.
		if a == nil || (uint8(a.Syndrome)>>5)&3 != 0 || !r.ahead.idle() || r.havePSN && (b.PSN-r.nextPSN)&0x800000 == 0 || r.gapsPending() || len(r.sumUnsure) != 0 || len(r.goBack.late) != 0 {
			return fastNo
		}
		n := r.nRecent
		e1, e2 := &r.recent[(n-1)%uint(len(r.recent))], &r.recent[(n-2)%uint(len(r.recent))]
		// One of the two matches (the product of the PSN differences is
		// 0: PSNs are 24 bits) and both are the same connection: that is
		// the answer, whichever matched.
		if n >= 2 && uint64(e1.psn^b.PSN)*uint64(e2.psn^b.PSN) == 0 && e1.conn == e2.conn {
			c = e1.conn
		} else {
			c = r.ackedConn(b.PSN)
		}
		if c != nil && c.FirstFrame == 0 {
			return fastNo
		}
		r.goBack.ackSeen(b.PSN, a.MSN)
		rc.Acks++
	} else {
		// A request in PSN order (roce), on which the link carries no LLC
		// and no malformed SEND. Both cases below are requests: a CDC
		// is decoded only from an RC SEND First or Only (decode's
		// bthNext, capture's decodeSMC).
		// A run out of sequence (inSequence) is the general path's.
		// A link still confirming is made up by its first data (content).
		// The request after a pass of duplicates ends the pass (goBack).
		if !rc.havePSN || b.PSN != rc.nextPSN || !rc.ahead.idle() || rc.damaged || rc.goBack.passing || f.LLC != nil || f.SMCMalformed || l.State == LinkConfirming {
			return fastNo
		}
		switch m := f.CDC; {
		case m != nil:
			// cdc, for a connection placed by its handshake, with no
			// failover, flags, pending WRITEs, gap or repeat in its
			// sequence, cursor it cannot follow or close to note.
			// A CDC with ANCK's credits moves the link's credits (credits.go).
			if m.ProdFlags != 0 || m.ConnFlags != 0 || len(rc.pend) != 0 || m.ANCK {
				return fastNo
			}
			hc := &h.cdc[d]
			if hc.conn == nil || hc.token != m.Token {
				return missCDC
			}
			c = hc.conn
			fl := &c.Flow[d]
			if seqDiff(m.Seq, fl.LastSeq) != 1 {
				return fastNo
			}
			prod := Cursor{m.Prod.Wrap, m.Prod.Count}
			cons := Cursor{m.Cons.Wrap, m.Cons.Count}
			// A cursor at or past its RMBE, or a CDC that fills the
			// peer's RMBE (full, written out: no call here), is a
			// finding or may start one: the general path follows it.
			pc := &c.Flow[d^1].Cons
			if prod.Count >= hc.size || cons.Count >= hc.peer ||
				prod.Wrap != pc.Wrap && prod.Count >= pc.Count {
				return fastNo
			}
			var consumed uint64
			okP, okC := false, false
			produced, okP = prod.Sub(fl.Prod, hc.size)
			consumed, okC = cons.Sub(fl.Cons, hc.peer)
			if !okP || !okC {
				return fastNo
			}
			rc.Sends++
			rc.CDCs++
			t.stats.CDC++
			fl.CDCs++
			fl.LastSeq = m.Seq
			fl.lastCDCPSN, fl.lastCDCPkts = b.PSN, rc.Packets+1 // (counted below, as before cdc on the general path)
			fl.Bytes += produced
			fl.Consumed += consumed
			fl.Prod, fl.Cons = prod, cons
			fl.sinceCDC = 0
			cdc = true
		case (op == opWriteOnly || op == opWriteFirst) && f.RETH != nil:
			// write, of a WRITE whose rkey names its connection.
			w := f.RETH
			hw := &h.write[d]
			if hw.conn == nil || hw.rkey != w.RKey {
				return missWrite
			}
			c = hw.conn
			rc.WritePkts++
			t.stats.Writes++
			if rc.curWrite != nil {
				rc.curWrite = nil
			}
			rc.curPending = false
			fl := &c.Flow[d]
			fl.Writes++
			fl.WriteBytes += uint64(w.DMALen)
			fl.sinceCDC += uint64(w.DMALen)
			if w.VA < hw.lo || w.VA+uint64(w.DMALen) > hw.hi {
				fl.WritesOutside++
			}
			if op == opWriteFirst {
				// The message's later packets follow it (write's
				// curWrite), placed after it in the RMBE (placeWrite's
				// sw; its data is what follows the RETH).
				rc.curWrite, rc.curLen = c, w.DMALen
				rc.lastFirst = spanOf(c, b.PSN, w.DMALen, uint32(b.DataWireLen()))
				rc.sw = streamWrite{}
				if hw.va != 0 && hw.rmbe != 0 && w.VA >= hw.va {
					rc.sw = streamWrite{ok: true, at: w.VA - hw.va, psn: b.PSN, pmtu: uint32(b.DataWireLen()), size: hw.rmbe}
				}
			}
		case (op == opWriteMiddle || op == opWriteLast) && rc.curWrite != nil:
			// write, of a later packet of the WRITE in progress.
			c = rc.curWrite
			rc.WritePkts++
			if op == opWriteLast {
				rc.curWrite = nil
			}
		default:
			return fastNo
		}
		rc.nextPSN = (b.PSN + 1) & 0xFFFFFF
		rc.shown(b.PSN)
		rc.Packets++
		rc.lastPSN, rc.lastFrame = b.PSN, f.Number
		rc.remember(b.PSN, c)
	}
	// What feed, roce and touchConn do for every such frame: the
	// attribution (its pointers written only when they change), the
	// counters, the link's and connection's last frame.
	n := f.Number
	t.lastNS = max(t.lastNS, ns)
	fa := &t.fastCur
	fa.frame, fa.dir, fa.cdcBytes, fa.cdc = n, d, produced, cdc
	if fa.link != l {
		fa.link = l
	}
	if fa.conn != c {
		fa.conn = c
	}
	t.stats.Frames++
	t.stats.RoCE++
	l.LastFrame, l.lastNS = n, ns
	if c == nil {
		t.stats.LinkOnly++
		return fastDone
	}
	c.LastFrame, c.lastNS = n, ns
	c.Frames++
	t.stats.ConnAttached++
	return fastDone
}

// fastAttribution is the attribution of a frame fastRoCE handled, for
// AppendFields: only what differs between such frames (they all have a
// link, and no retransmission, PSN gap or unattached CDC), which saves
// fastRoCE five stores a frame over writing cur.
type fastAttribution struct {
	frame    int
	link     *Link
	conn     *Conn // nil: the link alone (an ACK of no request known)
	cdcBytes uint64
	dir      Dir
	cdc      bool
}

// attribution is fa as feed would have recorded it.
func (fa *fastAttribution) attribution() attribution {
	return attribution{
		frame: fa.frame, conn: fa.conn, link: fa.link,
		hasConn: fa.conn != nil, hasLink: true, dir: fa.dir,
		cdcBytes: fa.cdcBytes, hasCDC: fa.cdc,
	}
}

// feedMiss handles a frame fastRoCE did not take (why: r): when it lacked
// a cache entry, warm fills that and fastRoCE tries again (a frame may
// miss the hot link, then its connection); else, and when warm finds no
// entry, the general path.
func (t *Tracker) feedMiss(f *capture.Frame, r fastResult) {
	// At most the link and then the connection miss; the bound only
	// guards against a frame missing the same entry again.
	for range 3 {
		if r == fastNo || !t.warm(f, r) {
			break
		}
		if r = t.fastRoCE(f); r == fastDone {
			return
		}
	}
	t.feedFrame(f)
}

// warm fills the cache entry whose miss r reports for f, and reports
// whether it found one: the frame's link direction in qpCache (which
// makes its link the hot one), the connection of the CDC's token or the
// RMB of the WRITE's rkey in that direction.
func (t *Tracker) warm(f *capture.Frame, r fastResult) bool {
	ip, b := f.IPv4, f.BTH
	if r == missLink {
		k := qpKey{src: addrOfIP(ip.SrcIP), dst: addrOfIP(ip.DstIP), qpn: uint64(b.DestQP)}
		l, _ := t.scanQPCache(&k)
		return l != nil
	}
	// The frame passed the hot-link test, in direction d.
	h := &t.hot
	l, d := h.link, h.dir(binary.LittleEndian.Uint32(ip.SrcIP), b.DestQP)
	if r == missCDC {
		return t.hotCDC(l, d, f.CDC.Token)
	}
	w := f.RETH
	ref, ok := l.rkeys[d][w.RKey]
	if !ok || ref.conn.FirstFrame == 0 || ref.conn.writesNoMore(d, f.Number) {
		return false
	}
	hw := hotWrite{conn: ref.conn, lo: 0, hi: math.MaxUint64, rkey: w.RKey, va: ref.va, rmbe: ref.conn.rmbeSize(d)}
	if ref.va != 0 && ref.size != 0 {
		hw.lo, hw.hi = ref.va, ref.va+uint64(ref.size)
	}
	h.write[d] = hw
	return true
}

// hotCDC looks up token in l's group for direction d and caches its
// connection in t.hot when fastRoCE may follow its CDCs: placed by its
// handshake (not inferred, not waiting for its link), its sequence and
// cursors known, both RMBE sizes known, not closed, no write-blocked
// episode open and no RMBE full.
func (t *Tracker) hotCDC(l *Link, d Dir, token uint32) bool {
	c := l.lgr.tokens[d][token]
	if c == nil || c.FirstFrame == 0 || c.Inferred || c.halfPlaced || c.link == nil || c.AwaitingLink || c.TFirstCDC.IsZero() {
		return false
	}
	fl := &c.Flow[d]
	size, peer := c.rmbeSize(d), c.rmbeSize(d^1)
	if !fl.haveSeq || !fl.haveProd || !fl.haveCons || fl.uncaptured || size == 0 || peer == 0 || (c.TClose.IsZero() && c.Closed()) {
		return false
	}
	// An open write-blocked episode ends, and a full RMBE empties, on a
	// CDC the general path must see (cdc, stall).
	if fl.wbSince != 0 || c.Flow[0].fullSince != 0 || c.Flow[1].fullSince != 0 {
		return false
	}
	t.hot.cdc[d] = hotCDC{conn: c, token: token, size: size, peer: peer}
	return true
}

// scanQPCache finds k, an IPv4 packet's key, in qpCache (without looking
// further: lookupQP does that on the general path), and makes its link the
// hot one.
func (t *Tracker) scanQPCache(k *qpKey) (*Link, Dir) {
	ref, ok := t.cachedQP(k)
	if !ok {
		return nil, 0
	}
	l, d := ref.link, ref.dir
	h := &t.hot
	if h.link != l {
		*h = hotLink{link: l, qpn: [2]uint32{noQPN, noQPN}, rc: [2]*RC{&l.RC[0], &l.RC[1]}}
	}
	h.src[d], h.dst[d] = bits.ReverseBytes32(uint32(k.src.lo)), bits.ReverseBytes32(uint32(k.dst.lo))
	h.qpn[d] = uint32(k.qpn)
	return l, d
}
