package track

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"net/netip"
	"slices"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
)

// ANCK's dump device copies each CDC its host sends or takes once
// (smc_dump_cdc_msg, ANCK net/smc/smc_stats.c) into a frame nothing checks:
// no ICRC, IPv4 and UDP checksums left 0 (smc_dump_fill_skb_header). A
// byte the capture's copy damaged is followed as the sender's unless the
// CDCs around it show it wrong. What a sender may do bounds them: it
// numbers its CDCs one by one (smc_cdc_msg_send, net/smc/smc_cdc.c); its
// cursor counts stay below the RMBE's size (smc_curs_add,
// net/smc/smc_cdc.h); it writes at most the room the last consumer cursor
// it got left and announces what it wrote in its next CDC
// (smc_tx_rdma_writes, then smc_cdc_msg_send in net/smc/smc_tx.c), so its
// producer cursor moves at most an RMBE a CDC; a receiver consumes at most
// what was written, which is at most an RMBE past the consumer cursor it
// last sent. A CDC outside those bounds is a damaged copy, unless it is
// within them from the CDC before the last: then the last was the damaged
// one, and what it added is taken back.

// dumpLast is what a direction's last followed dump CDC changed.
type dumpLast struct {
	frame              int // 0: none (or taken back)
	ns                 int64
	seqFrom            uint16 // the sequence number before it
	skipped            int    // the numbers it skipped, counted as not captured
	prod, cons         Cursor // the cursors before it
	produced, consumed uint64 // what it added to Bytes and Consumed
	okP, okC           bool   // whether it added them
	haveProd, haveCons bool   // whether the cursors before it were known
	// Flow.unsizedWraps and unsizedDelta before it.
	unsizedWraps uint64
	unsizedDelta int64
	// The close flags it was the first of its direction to carry.
	setAbort, setClosed, setDone bool
}

// dumpBefore is what direction f of c is before a dump CDC: dumpLast
// without the CDC's own part (keepDump).
func (f *Flow) dumpBefore(c *Conn) dumpLast {
	haveProd, haveCons := f.cursorsKnown(c)
	return dumpLast{seqFrom: f.LastSeq, prod: f.Prod, cons: f.Cons, haveProd: haveProd, haveCons: haveCons,
		unsizedWraps: f.unsizedWraps, unsizedDelta: f.unsizedDelta}
}

// cursorsKnown reports whether f's cursors are known: seen, or the zero
// cursors a connection known from its handshake starts from (cdcConn
// counts from them).
func (f *Flow) cursorsKnown(c *Conn) (prod, cons bool) {
	return f.haveProd || !c.Inferred, f.haveCons || !c.Inferred
}

// keepDump records dump CDC m, followed from before: what it changed
// (dumpLast), and what it said (dumpRecent).
func (f *Flow) keepDump(before dumpLast, m *cdcIn, in *input, produced, consumed uint64, okP, okC bool) {
	before.frame, before.ns = in.number, in.ns
	before.produced, before.consumed, before.okP, before.okC = produced, consumed, okP, okC
	before.setAbort = m.connFlags&cdcAbort != 0 && !f.Aborted
	before.setClosed = m.connFlags&cdcConnClosed != 0 && !f.Closed
	before.setDone = m.connFlags&cdcDoneWriting != 0 && !f.DoneWriting
	f.dumpLast = before
	recordDump(f, m)
}

// flagsDamaged reports producer flags that no sender sets on dump CDC m,
// the next of direction f by dd (1: the direction's last CDC was the one
// before it). A sender sets urgent-data-present only with
// urgent-data-pending, which it clears with both once that CDC is sent,
// and only with the write that ends the urgent data (smc_tx_sendmsg,
// smc_tx_rdma_writes and smcr_tx_sndbuf_nonempty, net/smc/smc_tx.c); it
// sets write-blocked only as a write fills the peer's RMBE: the CDC that
// first carries it moves the producer cursor (smc_tx_rdma_writes). The
// flags' reserved bits (struct smc_cdc_producer_flags and
// smc_cdc_conn_state_flags, net/smc/smc.h) no sender sets. A failover
// validation message repeats the sequence number of the last CDC whose
// send completed (smcr_cdc_msg_send_validation, net/smc/smc_cdc.c): one
// numbered past the direction's last is no such message.
func flagsDamaged(f *Flow, m *cdcIn, dd int16) bool {
	const (
		prodKnown = cdcWriteBlocked | cdcUrgentPending | cdcUrgentPresent | cdcConsUpdReq | cdcFailover
		connKnown = cdcDoneWriting | cdcConnClosed | cdcAbort
	)
	if m.prodFlags&^prodKnown != 0 || m.connFlags&^connKnown != 0 {
		return true
	}
	if m.prodFlags&cdcFailover != 0 && dd >= 1 {
		return true
	}
	if m.prodFlags&cdcUrgentPresent != 0 && m.prodFlags&cdcUrgentPending == 0 {
		return true
	}
	still := dd == 1 && f.haveProd && m.prod == f.Prod // the last CDC's producer cursor
	if still && m.prodFlags&cdcUrgentPresent != 0 {
		return true
	}
	return still && m.prodFlags&cdcWriteBlocked != 0 && f.wbSince == 0
}

// dumpDamaged judges dump CDC m of direction d, its sequence number dd
// past the direction's last (0: not known), and reports whether it is a
// damaged copy, not to be followed. Where the last CDC was the damaged
// one, it takes that back and sets dd from the CDC before it.
func (t *Tracker) dumpDamaged(c *Conn, d Dir, f *Flow, m *cdcIn, dd *int16, in *input) bool {
	last := &f.dumpLast
	size, peer := c.rmbeSize(d), c.rmbeSize(d.Reverse())
	damaged := size != 0 && m.prod.Count >= size || peer != 0 && m.cons.Count >= peer || flagsDamaged(f, m, *dd)
	seqBack, prodBack, consBack := false, false, false
	back := int16(0)
	if f.haveSeq && !m.noSeq && *dd <= 0 {
		// Behind the last: the last skipped ahead wrongly, or this one
		// is damaged.
		back = seqDiff(m.seq, last.seqFrom)
		seqBack = last.frame != 0 && last.skipped > 0 && back > 0 && int(back) <= last.skipped
		damaged = damaged || !seqBack
	}
	n := *dd
	if seqBack {
		n = back
	}
	// A CDC that fits neither the last nor the one before may fit the
	// CDC rejected just before it: two in a row that agree with each
	// other and not with what was followed say that what was followed
	// is wrong (a damaged first CDC, which nothing before could show):
	// the cursor is followed from the rejected CDC's on, what lies
	// between not counted.
	rej := &f.dumpRejected
	rn := seqDiff(m.seq, rej.seq)
	fromRej := rej.ok && (m.noSeq || rn > 0 && rn <= maxDumpJump)
	prodRej, consRej := false, false
	haveProd, haveCons := f.cursorsKnown(c)
	if !damaged && haveProd && !fitsRMBE(m.prod, f.Prod, size, n) {
		prodBack = last.frame != 0 && last.haveProd && fitsRMBE(m.prod, last.prod, size, n+1)
		prodRej = !prodBack && fromRej && fitsRMBE(m.prod, rej.prod, size, rn)
		damaged = !prodBack && !prodRej
	}
	if !damaged && haveCons && !fitsRMBE(m.cons, f.Cons, peer, n) {
		consBack = last.frame != 0 && last.haveCons && fitsRMBE(m.cons, last.cons, peer, n+1)
		consRej = !consBack && fromRej && fitsRMBE(m.cons, rej.cons, peer, rn)
		damaged = !consBack && !consRej
	}
	if damaged {
		if *dd == 1 {
			// Its number is the next: the CDC was sent and captured,
			// only its cursors are unreadable.
			f.LastSeq = m.seq
		}
		*rej = dumpSaid{seq: m.seq, prod: m.prod, cons: m.cons, ok: true}
		f.DumpDamaged++
		t.raise(&c.expert, expert.DumpDamaged, in)
		if t.recording(c) {
			t.note(c, in, d, "CDC (dump device)", fmt.Sprintf("seq %d prod %d/%d cons %d/%d after seq %d prod %d/%d cons %d/%d: no sender moves so, a damaged copy, not followed",
				m.seq, m.prod.Wrap, m.prod.Count, m.cons.Wrap, m.cons.Count, f.LastSeq, f.Prod.Wrap, f.Prod.Count, f.Cons.Wrap, f.Cons.Count))
		}
		return true
	}
	rej.ok = false
	if prodRej {
		f.Prod, f.unsizedWraps, f.unsizedDelta = rej.prod, 0, 0
	}
	if consRej {
		f.Cons = rej.cons
	}
	if (prodRej || consRej) && last.frame != 0 {
		// The damaged one was the CDC followed last, not the rejected.
		c.expert.unmark(expert.DumpDamaged)
		c.expert.add(expert.DumpDamaged, last.frame, last.ns, "")
		last.frame = 0
	}
	if last.frame == 0 {
		return false
	}
	// A side that aborted sends nothing more (smc_conn_kill,
	// net/smc/smc_core.c), one that closed or finished writing writes
	// nothing more (smc_close_final after the send buffer drained,
	// net/smc/smc_close.c): a CDC after the flag, or one whose producer
	// cursor moved after it, says the flag was damaged.
	prev := f.Prod // the producer cursor before this CDC
	if prodBack {
		prev = last.prod
	}
	flagsBack := last.setAbort || (last.setClosed || last.setDone) && m.prod != prev
	if !seqBack && !prodBack && !consBack && !flagsBack {
		return false
	}
	if flagsBack {
		if last.setAbort {
			f.Aborted = false
			c.expert.unmark(expert.ConnAbort)
		}
		f.Closed = f.Closed && !last.setClosed
		f.DoneWriting = f.DoneWriting && !last.setDone
		if !c.Closed() {
			c.TClose = time.Time{}
		}
	}
	if seqBack {
		f.SeqNotCaptured -= last.skipped
		c.expert.unmark(expert.NotCaptured)
		// The damaged copy was one of the CDCs sent after the number
		// before it: its number is taken as the next.
		f.LastSeq, *dd = last.seqFrom, back
		if back > 1 {
			f.LastSeq, *dd = last.seqFrom+1, back-1
		}
	}
	if prodBack {
		if last.okP {
			f.Bytes -= last.produced
		}
		f.Prod = last.prod
		f.unsizedWraps, f.unsizedDelta = last.unsizedWraps, last.unsizedDelta
	}
	if consBack {
		if last.okC {
			f.Consumed -= last.consumed
		}
		f.Cons = last.cons
	}
	f.DumpDamaged++
	c.expert.add(expert.DumpDamaged, last.frame, last.ns, "")
	if t.recording(c) {
		t.note(c, in, d, "CDC (dump device)", fmt.Sprintf("seq %d: frame %d was a damaged copy, what it said is taken back", m.seq, last.frame))
	}
	last.frame = 0
	return false
}

// fitsRMBE reports whether a sender may move cursor prev to cur in dd
// CDCs (0 or less: one) over an RMBE of size bytes: forward, by at most an
// RMBE a CDC; where the size is not known (0), forward within the same
// pass or by at most a wrap a CDC.
func fitsRMBE(cur, prev Cursor, size uint32, dd int16) bool {
	if size == 0 {
		dw := uint16(cur.Wrap - prev.Wrap)
		return dw == 0 && cur.Count >= prev.Count || dw != 0 && int(dw) <= int(max(dd, 1))
	}
	n, ok := cur.Sub(prev, size)
	return ok && n <= uint64(max(dd, 1))*uint64(size)
}

// dumpRecent is what a direction's last followed dump CDCs said, to know
// the other host's copy of one (dumpCopy).
type dumpRecent struct {
	cdc [64]dumpSaid
	n   int // CDCs recorded; the last is cdc[(n-1)%len(cdc)]
}

// dumpSaid is what one dump CDC said.
type dumpSaid struct {
	seq        uint16
	flags      uint16 // producer flags, connection flags
	prod, cons Cursor
	ok         bool // set (Flow.dumpRejected holds one)
}

// maxDumpJump bounds how many sequence numbers on a CDC may come after
// the rejected one it is followed from: the capture may have missed some
// between them.
const maxDumpJump = 64

func said(m *cdcIn) dumpSaid {
	return dumpSaid{seq: m.seq, flags: uint16(m.prodFlags)<<8 | uint16(m.connFlags), prod: m.prod, cons: m.cons, ok: true}
}

// dumpCopy reports whether m, a dump CDC of direction d whose sequence
// number is not past the direction's last, says what one of the
// direction's last 64 CDCs said: the copy the other host's dump device
// made of it (each host dumps the CDCs it sends and the ones it takes),
// as far from it as the hosts' clocks are apart, other CDCs between, where
// dumpDup looks for a copy right after its original. A CDC is never the
// same twice (its sequence number moves); a damaged copy differs
// somewhere; a connection that takes its 4-tuple again is another
// connection, its own CDCs recorded anew.
func dumpCopy(f *Flow, m *cdcIn) bool {
	r := f.dumpRecent
	if r == nil || m.noSeq || !f.haveSeq || seqDiff(m.seq, f.LastSeq) > 0 {
		return false
	}
	w := said(m)
	for i := range min(r.n, len(r.cdc)) {
		if r.cdc[i] == w {
			return true
		}
	}
	return false
}

// recordDump keeps m among its direction's recent dump CDCs.
func recordDump(f *Flow, m *cdcIn) {
	if f.dumpRecent == nil {
		f.dumpRecent = new(dumpRecent)
	}
	r := f.dumpRecent
	r.cdc[r.n%len(r.cdc)] = said(m)
	r.n++
}

// dumpTwin is a dump device data frame captureDup took for a copy of the
// one before it (dumpDup): the same bytes microseconds apart.
type dumpTwin struct {
	ends      [2]netip.AddrPort // from, to
	data      []byte
	crc       uint32 // of data
	number    int
	otherPath bool
}

// dumpEnds returns the sender and receiver of f, a dump device frame:
// its connection's endpoints, as its UDP header gives them.
func dumpEnds(f *capture.Frame) [2]netip.AddrPort {
	src, dst := ipAddrs(f)
	return [2]netip.AddrPort{netip.AddrPortFrom(src, uint16(f.UDP.SrcPort)), netip.AddrPortFrom(dst, uint16(f.UDP.DstPort))}
}

// ends returns the sender and receiver of direction d of c.
func (c *Conn) ends(d Dir) [2]netip.AddrPort {
	if d == DirS2C {
		return [2]netip.AddrPort{c.Server, c.Client}
	}
	return [2]netip.AddrPort{c.Client, c.Server}
}

// maxDumpTwins bounds Tracker.dumpTwins: the pieces of one CDC's data.
const maxDumpTwins = 64

// copiedCDC follows f, a dumped CDC captureDup took for the capture's
// copy, as copiedPieces does.
func (t *Tracker) copiedCDC(f *capture.Frame) {
	e := dumpEnds(f)
	c := t.byTuple[makeTCPKey(e[0], e[1])]
	if c == nil {
		return
	}
	d := DirC2S
	if e[0] != c.Client {
		d = DirS2C
	}
	t.copiedPieces(c, d, f.CDC.Seq, f.UnixNano())
}

// keepTwin remembers f, a dump device data frame taken for a copy, until
// its direction's next CDC (dumpPieces).
func (t *Tracker) keepTwin(f *capture.Frame, otherPath bool) {
	if len(t.dumpTwins) == maxDumpTwins {
		t.dumpTwins = slices.Delete(t.dumpTwins, 0, 1)
	}
	t.dumpTwins = append(t.dumpTwins, dumpTwin{ends: dumpEnds(f), data: bytes.Clone(f.Dump.Payload),
		crc: crc32.ChecksumIEEE(f.Dump.Payload), number: f.Number, otherPath: otherPath})
}

// dumpPieces settles the data frames of direction d of c taken for copies
// since its last CDC by in, the next (dumped before it, its data: the
// receiver dumps what the CDC makes valid in pieces of at most
// SMC_DUMP_MAX_DATA_LEN bytes, smc_dump_raw_data, ANCK net/smc/smc_stats.c):
// as many of them as the bytes its producer cursor moved need beyond the
// pieces followed were pieces of the same bytes, not copies (a transfer
// of zeros dumps identical pieces); the rest were copies.
func (t *Tracker) dumpPieces(c *Conn, d Dir, in *input) {
	f := &c.Flow[d]
	var need uint64
	if f.haveProd || !c.Inferred {
		need, _ = in.roce.cdc.prod.Sub(f.Prod, c.rmbeSize(d))
	}
	ends := c.ends(d)
	t.dumpTwins = slices.DeleteFunc(t.dumpTwins, func(w dumpTwin) bool {
		if w.ends != ends {
			return false
		}
		data := w.data
		if n := uint64(len(data)); n > 0 && f.pieces.since+n <= need {
			f.followPiece(data, w.number)
			t.stats.CaptureDups--
			if w.otherPath {
				t.stats.CaptureDupsOtherPath--
			}
			t.expert.unmark(expert.CaptureDuplicate)
			t.stats.ConnAttached++
			c.Frames++
			if t.opts.Stream != nil {
				t.placeDump(c, d, data, w.number)
			}
		}
		return true
	})
}

// dumpPieces is what a connection direction's dump device data frames
// since its last dumped CDC hold, and what those before that CDC held:
// the byte count and a sum of each piece's CRC (the order the capture
// holds them in does not count), and the frames followed since.
type dumpPieces struct {
	since, prevLen uint64
	sum, prevSum   uint32
	frames         []int
}

// maxPieceFrames bounds dumpPieces.frames: the pieces of one CDC's data.
const maxPieceFrames = 64

// followPiece counts data, a data frame's bytes followed for the flow.
func (f *Flow) followPiece(data []byte, number int) {
	p := &f.pieces
	p.since += uint64(len(data))
	p.sum += crc32.ChecksumIEEE(data)
	if len(p.frames) < maxPieceFrames {
		p.frames = append(p.frames, number)
	}
}

// cdc closes the pieces of a dumped CDC.
func (p *dumpPieces) cdc() {
	p.prevSum, p.prevLen, p.sum, p.since, p.frames = p.sum, p.since, 0, 0, p.frames[:0]
}

// copiedPieces follows in, a copy of direction d's last dumped CDC (the
// capture holds the dump device twice, tcpdump -i any beside the device):
// the data frames followed since that CDC, the same bytes as its own
// pieces, were their copies too, which came after it (each frame and
// its copy microseconds apart, the CDC between): they are counted so and
// taken out of the stream.
func (t *Tracker) copiedPieces(c *Conn, d Dir, seq uint16, ns int64) {
	f := &c.Flow[d]
	p := &f.pieces
	if p.since == 0 || seq != f.LastSeq || len(p.frames) == maxPieceFrames {
		return
	}
	// The pieces' copies taken for copies already (keepTwin) count too.
	ends := c.ends(d)
	n, sum := p.since, p.sum
	for _, w := range t.dumpTwins {
		if w.ends == ends {
			n += uint64(len(w.data))
			sum += w.crc
		}
	}
	if n != p.prevLen || sum != p.prevSum {
		return
	}
	t.dumpTwins = slices.DeleteFunc(t.dumpTwins, func(w dumpTwin) bool { return w.ends == ends })
	for _, n := range p.frames {
		t.stats.ConnAttached--
		t.stats.CaptureDups++
		c.Frames--
		t.expert.add(expert.CaptureDuplicate, n, ns, "")
	}
	if s := c.stream; s != nil {
		ds := &s.dir[d]
		ds.dumped -= min(ds.dumped, p.since)
		ds.segs = slices.DeleteFunc(ds.segs, func(x rmbeSeg) bool { return slices.Contains(p.frames, x.frame) })
	}
	p.since, p.sum, p.frames = 0, 0, p.frames[:0]
}
