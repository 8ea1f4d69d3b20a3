package track

import (
	"encoding/binary"

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
// IPv4 addresses and DestQP (plus one: 0 is a direction not seen yet, as
// a DestQP has 24 bits) of its directions: a link's two directions carry
// most frames in a row, and comparing a packet's addresses with these
// costs less than building its key and scanning qpCache. Like qpCache it
// is cleared whenever byQP changes.
type hotLink struct {
	link     *Link
	src, dst [2]uint32
	qpn1     [2]uint32
	// Per direction, the connection of the last CDC fastRoCE followed and
	// the RMB of the last WRITE, with what their checks read that only
	// feed changes: a CDC with the same token, or a WRITE with the same
	// rkey, skips the map lookup and those checks. feed forgets them
	// before each frame it handles.
	cdc   [2]hotCDC
	write [2]hotWrite
}

// hotCDC is a connection whose CDCs fastRoCE may follow: in its link
// group's token table under token, placed by its handshake, its cursors
// known, not closed, with RMBEs of size (this direction's) and peer.
type hotCDC struct {
	conn       *Conn
	token      uint32
	size, peer uint32
}

// hotWrite is an rkey of the link's table whose connection has frames.
type hotWrite struct {
	ref  rmbRef
	rkey uint32
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

// fastRoCE handles f when it is an ACK (no NAK or RNR NAK; attributed to
// the connection of the request it answers, or to the link alone), an
// RDMA WRITE Only whose rkey is known, or a CDC without flags (struct
// smc_cdc_msg, net/smc/smc_cdc.h) that continues its connection's
// sequence and cursors, in PSN order, on a link direction found through
// the hot-link cache, while no sweep is due and no timeline is recorded. It then changes the tracker exactly as
// fill and feed would have, and reports true; for any other frame it
// reports false having changed nothing but its caches.
func (t *Tracker) fastRoCE(f *capture.Frame) bool {
	b, ip := f.BTH, f.IPv4
	if b == nil || ip == nil || f.TCP != nil || f.GRH != nil || len(ip.SrcIP) != 4 || len(ip.DstIP) != 4 {
		return false
	}
	// A frame on which feed may sweep (every 1024th), and every frame
	// while a timeline is recorded, takes the general path.
	if t.stats.Frames+1 >= t.fastUntil {
		return false
	}
	src, dst := binary.BigEndian.Uint32(ip.SrcIP), binary.BigEndian.Uint32(ip.DstIP)
	// The hot link's direction whose source address is not the frame's
	// is the other one: computed, not branched on.
	h := &t.hot
	x := uint64(src ^ h.src[0])
	d := Dir((x | -x) >> 63)
	l := h.link
	// One test for the three. A DestQP beyond 24 bits (no decoder makes
	// one) never matches: it is cached unmasked.
	if (h.src[d]^src)|(h.dst[d]^dst)|(h.qpn1[d]^(b.DestQP&0xFFFFFF+1)) != 0 {
		k := qpKey{
			src: addr{0, 0xffff<<32 | uint64(src)},
			dst: addr{0, 0xffff<<32 | uint64(dst)},
			qpn: uint64(b.DestQP),
		}
		if l, d = t.scanQPCache(&k); l == nil {
			return false
		}
	}
	rc := &l.RC[d]
	var (
		c        *Conn
		cdc      bool
		produced uint64
	)
	if op := uint8(b.Opcode); op == opAck {
		// ack: the connection of the request acknowledged, found among
		// the other direction's last two requests first (connOf).
		a := f.AETH
		if a == nil || (uint8(a.Syndrome)>>5)&3 != 0 {
			return false
		}
		r := &l.RC[d^1]
		n := r.nRecent
		e1, e2 := &r.recent[(n-1)%uint(len(r.recent))], &r.recent[(n-2)%uint(len(r.recent))]
		// One of the two matches (the product of the PSN differences is
		// 0: PSNs are 24 bits) and both are the same connection: that is
		// the answer, whichever matched.
		if n >= 2 && uint64(e1.psn^b.PSN)*uint64(e2.psn^b.PSN) == 0 && e1.conn == e2.conn {
			c = e1.conn
		} else {
			c = r.connOf(b.PSN)
		}
		if c != nil && c.FirstFrame == 0 {
			return false
		}
		rc.Acks++
	} else {
		// A request in PSN order (roce), on which the link carries no LLC
		// and no malformed SEND.
		if !isRequest(op) || !rc.havePSN || b.PSN != rc.nextPSN || f.LLC != nil || f.SMCMalformed {
			return false
		}
		switch m := f.CDC; {
		case m != nil:
			// cdc, for a connection placed by its handshake, with no
			// failover, flags, pending WRITEs, gap or repeat in its
			// sequence, cursor it cannot follow or close to note.
			if m.ProdFlags != 0 || m.ConnFlags != 0 || len(rc.pend) != 0 {
				return false
			}
			hc := &h.cdc[d]
			if hc.conn == nil || hc.token != m.Token {
				if !t.hotCDC(l, d, m.Token) {
					return false
				}
			}
			c = hc.conn
			fl := &c.Flow[d]
			if seqDiff(m.Seq, fl.LastSeq) != 1 {
				return false
			}
			prod := Cursor{m.Prod.Wrap, m.Prod.Count}
			cons := Cursor{m.Cons.Wrap, m.Cons.Count}
			var consumed uint64
			okP, okC := false, false
			produced, okP = prod.Sub(fl.Prod, hc.size)
			consumed, okC = cons.Sub(fl.Cons, hc.peer)
			if !okP || !okC {
				return false
			}
			rc.Sends++
			rc.CDCs++
			t.stats.CDC++
			fl.CDCs++
			fl.LastSeq = m.Seq
			fl.Bytes += produced
			fl.Consumed += consumed
			fl.Prod, fl.Cons = prod, cons
			fl.sinceCDC = 0
			cdc = true
		case op == opWriteOnly && f.RETH != nil:
			// write, of a WRITE whose rkey names its connection.
			w := f.RETH
			hw := &h.write[d]
			if hw.ref.conn == nil || hw.rkey != w.RKey {
				ref, ok := l.rkeys[d][w.RKey]
				if !ok || ref.conn.FirstFrame == 0 {
					return false
				}
				*hw = hotWrite{ref: ref, rkey: w.RKey}
			}
			ref := &hw.ref
			c = ref.conn
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
			if ref.va != 0 && ref.size != 0 && (w.VA < ref.va || w.VA+uint64(w.DMALen) > ref.va+uint64(ref.size)) {
				fl.WritesOutside++
			}
		default:
			return false
		}
		rc.nextPSN = (b.PSN + 1) & 0xFFFFFF
		rc.Packets++
		rc.lastPSN = b.PSN
		rc.remember(b.PSN, c)
	}
	// What feed, roce and touchConn do for every such frame: the
	// attribution (written field by field: most stay as they were), the
	// counters, the link's and connection's last frame.
	n, ns := f.Number, f.CI.Timestamp.UnixNano()
	a := &t.cur
	a.frame, a.hasLink, a.dir, a.hasConn = n, true, d, c != nil
	a.cdcBytes, a.hasCDC, a.retrans, a.psnGap, a.unattached = produced, cdc, false, 0, false
	if a.link != l {
		a.link = l
	}
	t.stats.Frames++
	t.stats.RoCE++
	l.LastFrame, l.lastNS = n, ns
	if c == nil {
		t.stats.LinkOnly++
		return true
	}
	if a.conn != c {
		a.conn = c
	}
	c.LastFrame, c.lastNS = n, ns
	c.Frames++
	t.stats.ConnAttached++
	return true
}

// hotCDC looks up token in l's group for direction d and caches its
// connection in t.hot when fastRoCE may follow its CDCs: placed by its
// handshake (not inferred, not waiting for its link), its sequence and
// cursors known, both RMBE sizes known, not closed.
func (t *Tracker) hotCDC(l *Link, d Dir, token uint32) bool {
	c := l.lgr.tokens[d][token]
	if c == nil || c.FirstFrame == 0 || c.Inferred || c.halfPlaced || c.link == nil || c.AwaitingLink || c.TFirstCDC.IsZero() {
		return false
	}
	fl := &c.Flow[d]
	size, peer := c.rmbeSize(d), c.rmbeSize(d^1)
	if !fl.haveSeq || !fl.haveProd || !fl.haveCons || size == 0 || (c.TClose.IsZero() && c.Closed()) {
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
		*h = hotLink{link: l}
	}
	h.src[d], h.dst[d], h.qpn1[d] = uint32(k.src.lo), uint32(k.dst.lo), uint32(k.qpn)+1
	return l, d
}
