package track

import (
	"bytes"
	"slices"
	"time"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// Stream reassembly: what the application of each SMC-R connection wrote,
// per direction, from the RDMA WRITEs that place it into the receiver's
// RMBE and the CDCs that release it.
//
// The sender writes its bytes into the peer's RMBE at the place its
// producer cursor has reached, wrapping at the RMBE's end (two WRITEs
// then, smc_tx_rdma_writes in net/smc/smc_tx.c: dst_off is the producer
// cursor's count, the address the peer's RMB address plus tx_off plus
// dst_off), and then sends a CDC whose producer cursor says up to where
// the bytes are valid (smc_cdc_msg_send). The receiver's application reads
// them only then. So a WRITE's bytes are kept at their RMBE offset (remote
// VA minus the RMBE's start: the RMB address of the CLC Accept/Confirm,
// CONFIRM_RKEY or ADD_LINK of the link the WRITE came on, plus
// (rmbe_idx-1) * rmbe_size, smcr_conn_save_peer_info in net/smc/af_smc.c)
// until the direction's next CDC moves the producer cursor over them; the
// bytes it moved over are the stream's next bytes, in order. A place written
// twice before its release (the same bytes sent again on another link after
// a failover, smc_switch_cursor in net/smc/smc_core.c) holds the last
// WRITE's bytes, as the RMBE does.
//
// The tracker follows a link direction's requests as its responder takes
// them (inSequence: once each, in PSN order, a retransmitted copy only when
// the responder takes it), so each WRITE packet is placed once, in the
// order the RMBE received it. Bytes a CDC releases that no captured WRITE
// placed are a gap of that length, with its cause: the link's responder
// took requests the capture never showed (roce.rc.not_captured), the
// WRITE's RMB address is unknown (the capture joined mid-stream), or no
// WRITE of them was seen at all. Only what is written and not yet released
// is kept: at most one RMBE per connection direction.

// StreamSink receives the application bytes of every SMC-R connection as
// the tracker releases them (Options.Stream): per connection and
// direction in stream order, each direction's gaps marked, and the
// direction's end.
type StreamSink interface {
	// StreamChunk is called during Feed (or EndCapture). The chunk and
	// everything it points to, the connection included, are valid only
	// during the call: a sink copies what it keeps.
	StreamChunk(ch *StreamChunk)
}

// StreamChunk is a piece of one direction of a connection's stream: bytes
// (Data), a gap (Gap bytes the capture does not hold, or an unknown number
// of them), or the direction's end.
type StreamChunk struct {
	Conn *Conn
	Dir  Dir
	// Offset is the stream offset of the chunk's first byte: bytes the
	// application wrote in this direction before it. For a connection the
	// capture joined mid-stream it counts from the first byte the capture
	// could place (a GapBefore chunk comes first).
	Offset uint64
	Data   []byte
	// Gap is the length of a gap (Data nil, Cause set); 0 with Cause set
	// is a gap of unknown length.
	Gap   uint64
	Cause GapCause
	// End: the sender shut down writing, closed or aborted (a CDC with
	// peer_done_writing, peer_conn_closed or peer_conn_abort).
	End bool
	// Frame and Time are the CDC's that released the bytes (or ended).
	Frame int
	Time  time.Time
	// Writes are the frames of the WRITE packets whose bytes are in Data,
	// in stream order.
	Writes []int
}

// GapCause says why a stream lacks bytes.
type GapCause uint8

const (
	GapNone GapCause = iota
	// GapNotCaptured: the link's responder took request packets the
	// capture never showed (RC.NotCaptured): the WRITE was among them.
	GapNotCaptured
	// GapNoAddress: a WRITE of the connection came with an rkey whose RMB
	// address no CLC or LLC message told (learned from traffic).
	GapNoAddress
	// GapNoWrite: a CDC released bytes that no WRITE the capture showed
	// placed, and the capture shows no reason.
	GapNoWrite
	// GapBefore: the capture joined the connection mid-stream; what the
	// application wrote before is not in it (length unknown).
	GapBefore
	// GapCursor: the producer cursor could not be followed (it went back,
	// or wrapped in an RMBE of unknown size): how many bytes are lost is
	// unknown.
	GapCursor
	// GapNotDumped: a connection seen through ANCK's dump device, whose
	// host dumps the data it receives (smc_cdc_msg_recv_action) but not,
	// as far as its public source shows, the data it sends: the CDC says
	// how much was written, no frame holds it.
	GapNotDumped
	// GapDumpMissed: the dump device showed this direction's data before,
	// and a CDC released bytes no data frame of the capture holds: the
	// capture missed the frame.
	GapDumpMissed
	// GapSnapCut: a WRITE the snap length cut placed only what the
	// capture kept of it.
	GapSnapCut
)

var gapNames = [...]string{"", "not captured", "RMB address unknown", "no WRITE seen", "before the capture", "cursor not followed", "not dumped (sent data)", "dump data frame not in the capture", "cut by the snap length"}

func (g GapCause) String() string {
	if int(g) < len(gapNames) {
		return gapNames[g]
	}
	return "gap?"
}

// connStream is a connection's reassembly state, one per direction.
type connStream struct {
	dir [2]dirStream
}

// dirStream is one direction's: the bytes written into the receiver's
// RMBE and not yet released, by RMBE offset.
type dirStream struct {
	started bool
	ended   bool
	noAddr  bool   // a WRITE since the last release could not be placed (GapNoAddress)
	cut     bool   // a WRITE since the last release was cut by the snap length (GapSnapCut)
	dumped  uint64 // bytes of dump device data frames placed since the direction's last CDC
	// dumpSeen: a dump device data frame of this direction was seen: the
	// host dumps it, so bytes without one were missed by the capture.
	dumpSeen bool
	off      uint64 // stream offset of the next byte released
	segs     []rmbeSeg
	// The chunk being released (scratch, reused).
	buf    []byte
	writes []int
	spare  []rmbeSeg // take's second list of kept WRITEs, swapped with segs
}

// rmbeSeg is bytes one WRITE packet placed at RMBE offset at.
type rmbeSeg struct {
	at    uint32
	data  []byte
	frame int
}

func (s rmbeSeg) end() uint32 { return s.at + uint32(len(s.data)) }

// streamWrite is the multi-packet WRITE in progress on a link direction
// (FIRST, MIDDLE..., LAST): where its first packet went and the path MTU
// its packets carry. Every packet before the LAST carries exactly the path
// MTU (IBA Vol. 1, 9.7.2), so a packet's place follows from its PSN, also
// when the capture missed the ones before it.
type streamWrite struct {
	ok   bool
	at   uint64
	psn  uint32
	pmtu uint32
	size uint32
}

// streamOf returns c's reassembly state, made at its first use.
func (c *Conn) streamOf() *connStream {
	if c.stream == nil {
		c.stream = &connStream{}
	}
	return c.stream
}

// placeWrite finds where an accepted WRITE packet (FIRST or ONLY) of c
// puts its bytes in the receiver's RMBE, for the frame's smc.stream
// fields and, with Options.Stream, keeps them there.
func (t *Tracker) placeWrite(rc *RC, c *Conn, d Dir, ref rmbRef, in *input) {
	r := &in.roce
	// Only a FIRST starts a WRITE whose packets follow: an ONLY leaves sw
	// as it was (fastRoCE follows ONLYs and does not touch it either);
	// MIDDLE and LAST read it only after a FIRST (RC.curWrite).
	if r.opcode == opWriteFirst {
		rc.sw = streamWrite{}
	}
	size := c.rmbeSize(d)
	if ref.va == 0 || size == 0 || r.va < ref.va {
		// No RMB address (learned from traffic) or outside the RMBE
		// (Flow.WritesOutside): nothing is placed.
		if t.opts.Stream != nil && (ref.va == 0 || size == 0) {
			c.streamOf().dir[d].noAddr = true
		}
		return
	}
	at := r.va - ref.va
	if r.opcode == opWriteFirst {
		rc.sw = streamWrite{ok: true, at: at, psn: r.psn, pmtu: r.dataLen, size: size}
	}
	t.cur.rmbeAt, t.cur.placed = at, true
	if t.opts.Stream != nil {
		s := &c.streamOf().dir[d]
		s.place(at, r.data, size, in.number)
		s.cut = s.cut || r.dataCut
	}
}

// placeDump keeps the bytes of an ANCK dump device's data frame where
// they lie in the receiver's RMBE. The receiver dumps what a CDC makes
// valid, from the producer cursor before it on, just before it dumps the
// CDC itself (smc_cdc_msg_recv_action: smc_dump_raw_data(conn,
// prod_old.count, diff_prod, true), net/smc/smc_cdc.c of ANCK), in pieces
// that do not wrap: each piece follows the cursor and the pieces before it.
// The CDC then releases them as it would a WRITE's, so an SMC-D or SMC-R
// connection seen through the dump device has the same stream.
func (t *Tracker) placeDump(c *Conn, d Dir, data []byte, number int) {
	s := &c.streamOf().dir[d]
	size := c.rmbeSize(d)
	if size == 0 {
		s.noAddr = true
		return
	}
	s.dumpSeen = true
	at := (uint64(c.Flow[d].Prod.Count) + s.dumped) % uint64(size)
	s.place(at, data, size, number)
	s.dumped += uint64(len(data))
}

// placeWriteNext is placeWrite for a MIDDLE or LAST packet of the WRITE
// in progress on rc.
func (t *Tracker) placeWriteNext(rc *RC, c *Conn, d Dir, in *input) {
	w := rc.sw
	if !w.ok {
		return
	}
	k := psnDiff(in.roce.psn, w.psn)
	if k <= 0 {
		return
	}
	at := w.at + uint64(k)*uint64(w.pmtu)
	t.cur.rmbeAt, t.cur.placed = at, true
	if t.opts.Stream != nil {
		s := &c.streamOf().dir[d]
		s.place(at, in.roce.data, w.size, in.number)
		s.cut = s.cut || in.roce.dataCut
	}
}

// place keeps data written at RMBE offset at (of an RMBE of size bytes),
// over whatever was written there before and not released.
func (s *dirStream) place(at uint64, data []byte, size uint32, frame int) {
	if at >= uint64(size) || len(data) == 0 {
		return
	}
	if at+uint64(len(data)) > uint64(size) {
		data = data[:uint64(size)-at]
	}
	n := rmbeSeg{at: uint32(at), data: bytes.Clone(data), frame: frame}
	i, _ := slices.BinarySearchFunc(s.segs, n.at, func(x rmbeSeg, at uint32) int {
		switch {
		case x.at < at:
			return -1
		case x.at > at:
			return 1
		}
		return 0
	})
	overlaps := i > 0 && s.segs[i-1].end() > n.at || i < len(s.segs) && s.segs[i].at < n.end()
	if !overlaps {
		s.segs = slices.Insert(s.segs, i, n)
		return
	}
	// The new bytes replace the old ones where they overlap.
	out := make([]rmbeSeg, 0, len(s.segs)+2)
	for _, x := range s.segs {
		if x.end() <= n.at || x.at >= n.end() {
			out = append(out, x)
			continue
		}
		if x.at < n.at {
			out = append(out, rmbeSeg{at: x.at, data: x.data[:n.at-x.at], frame: x.frame})
		}
		if x.end() > n.end() {
			out = append(out, rmbeSeg{at: n.end(), data: x.data[n.end()-x.at:], frame: x.frame})
		}
	}
	i, _ = slices.BinarySearchFunc(out, n.at, func(x rmbeSeg, at uint32) int { return int(int64(x.at) - int64(at)) })
	s.segs = slices.Insert(out, i, n)
}

// streamCDC releases what a CDC of direction d of c (accepted, not a
// failover validation) makes valid: the bytes between the producer cursor
// before (f.Prod, still the old one) and the CDC's, produced of them when
// okP. missed says that the capture missed requests of this direction's
// link since its last CDC.
func (t *Tracker) streamCDC(c *Conn, d Dir, f *Flow, produced uint64, okP, missed bool, in *input) {
	s := &c.streamOf().dir[d]
	m := &in.roce.cdc
	em := streamEmit{t: t, c: c, d: d, s: s, in: in}
	switch {
	case !f.haveProd && c.Inferred:
		// The first CDC of a connection joined mid-stream: the stream
		// starts at its producer cursor; what came before is not known.
		if !s.started {
			em.gap(0, GapBefore)
		}
		s.segs = s.segs[:0]
	case !okP:
		em.gap(0, GapCursor)
		s.segs = s.segs[:0]
	case produced > 0:
		cause := GapNoWrite
		switch {
		case s.cut:
			// The bytes a WRITE carried past the snap length, most
			// likely among those missing.
			cause = GapSnapCut
		case missed:
			cause = GapNotCaptured
		case s.noAddr:
			cause = GapNoAddress
		case in.isDump && s.dumpSeen:
			cause = GapDumpMissed
		case in.isDump:
			cause = GapNotDumped
		}
		em.release(f.Prod.Count, produced, c.rmbeSize(d), cause)
	}
	s.started, s.noAddr, s.cut, s.dumped = true, false, false, 0
	if m.connFlags&(cdcDoneWriting|cdcConnClosed|cdcAbort) != 0 && !s.ended {
		s.ended = true
		t.opts.Stream.StreamChunk(&StreamChunk{Conn: c, Dir: d, Offset: s.off, End: true, Frame: in.number, Time: in.ts()})
		s.segs = nil // nothing written after this is read
	}
}

// streamEmit hands one CDC's released bytes to the sink.
type streamEmit struct {
	t  *Tracker
	c  *Conn
	d  Dir
	s  *dirStream
	in *input
}

// release takes n bytes from RMBE offset from on (wrapping at size), in
// order, out of the kept WRITEs; what none of them holds is a gap.
func (e *streamEmit) release(from uint32, n uint64, size uint32, cause GapCause) {
	if size == 0 {
		e.gap(n, GapNoAddress)
		return
	}
	if n > uint64(size) {
		// More than an RMBE at once: a CDC the capture missed released the
		// first of them, and later WRITEs overwrote their places.
		lost := n - uint64(size)
		e.gap(lost, cause)
		from = uint32((uint64(from) + lost) % uint64(size))
		n = uint64(size)
	}
	pos := from % size
	for n > 0 {
		piece := min(n, uint64(size-pos))
		e.take(pos, uint32(piece), cause)
		n -= piece
		pos = uint32((uint64(pos) + piece) % uint64(size))
	}
	e.flush()
}

// take releases [pos, pos+n) of the RMBE (not wrapping).
func (e *streamEmit) take(pos, n uint32, cause GapCause) {
	s := e.s
	end := pos + n
	cur := pos
	// A WRITE around the whole range leaves two pieces: the kept ones go
	// to a second list, not over the first.
	out := s.spare[:0]
	for _, x := range s.segs {
		if x.end() <= pos || x.at >= end {
			out = append(out, x)
			continue
		}
		if x.at > cur {
			e.gap(uint64(x.at-cur), cause)
			cur = x.at
		}
		lo, hi := max(x.at, cur), min(x.end(), end)
		if hi > lo {
			s.buf = append(s.buf, x.data[lo-x.at:hi-x.at]...)
			if k := len(s.writes); k == 0 || s.writes[k-1] != x.frame {
				s.writes = append(s.writes, x.frame)
			}
			cur = hi
		}
		// What lies before the released range stays (an older place not
		// released yet cannot be: the range follows the cursor), and so
		// does what lies after it.
		if x.at < pos {
			out = append(out, rmbeSeg{at: x.at, data: x.data[:pos-x.at], frame: x.frame})
		}
		if x.end() > end {
			out = append(out, rmbeSeg{at: end, data: x.data[end-x.at:], frame: x.frame})
		}
	}
	clear(s.segs)
	s.spare, s.segs = s.segs[:0], out
	if cur < end {
		e.gap(uint64(end-cur), cause)
	}
}

// gap hands a gap of n bytes (0: unknown) to the sink, after the bytes
// before it.
func (e *streamEmit) gap(n uint64, cause GapCause) {
	e.flush()
	s := e.s
	e.t.opts.Stream.StreamChunk(&StreamChunk{Conn: e.c, Dir: e.d, Offset: s.off, Gap: n, Cause: cause, Frame: e.in.number, Time: e.in.ts()})
	s.off += n
}

// flush hands the bytes gathered so far to the sink.
func (e *streamEmit) flush() {
	s := e.s
	if len(s.buf) == 0 {
		return
	}
	e.t.opts.Stream.StreamChunk(&StreamChunk{Conn: e.c, Dir: e.d, Offset: s.off, Data: s.buf, Frame: e.in.number, Time: e.in.ts(), Writes: s.writes})
	s.off += uint64(len(s.buf))
	s.buf, s.writes = s.buf[:0], s.writes[:0]
}

// OnLink reports whether the frame fed last was tied to an SMC-R link:
// its RoCE transport (a request, response or acknowledgement of the link's
// queue pairs), which an export of the connections as TCP leaves out.
func (t *Tracker) OnLink() bool {
	if !t.opts.Unshared {
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	// fastRoCE follows only frames of a known link.
	return t.fastCur.frame != 0 || t.cur.hasLink
}

// fastPlaced is placeWrite for a WRITE ONLY that fastRoCE followed: where
// its bytes went in the receiver's RMBE.
func fastPlaced(a *attribution, f *capture.Frame) (bool, uint64) {
	if a.conn == nil || f.BTH == nil {
		return false, 0
	}
	switch uint8(f.BTH.Opcode) {
	case opWriteOnly, opWriteFirst:
		// As placeWrite: nothing is placed in an RMBE of unknown size.
		if f.RETH == nil || a.conn.rmbeSize(a.dir) == 0 {
			return false, 0
		}
		ref := a.link.rkeys[a.dir][f.RETH.RKey]
		if ref.va == 0 || f.RETH.VA < ref.va {
			return false, 0
		}
		return true, f.RETH.VA - ref.va
	case opWriteMiddle, opWriteLast:
		// placeWriteNext, from the WRITE First fastRoCE kept.
		w := a.link.RC[a.dir].sw
		if k := psnDiff(f.BTH.PSN, w.psn); w.ok && k > 0 {
			return true, w.at + uint64(k)*uint64(w.pmtu)
		}
	}
	return false, 0
}

// appendStream adds the smc.stream fields of a WRITE packet placed at
// RMBE offset a.rmbeAt: its bytes follow those the producer cursor
// released so far (Flow.Bytes) by their distance from the cursor's place
// in the RMBE, which the sender writes on from (smc_tx_rdma_writes).
func appendStream(r *decode.Record, c *Conn, a *attribution, f *capture.Frame) {
	fl := &c.Flow[a.dir]
	size := uint64(c.rmbeSize(a.dir))
	pc := uint64(fl.Prod.Count)
	if size == 0 || pc >= size || a.rmbeAt >= size || c.Inferred && !fl.haveProd || f.BTH == nil {
		return
	}
	// The length is the packet's on the wire, as tcp.len is a
	// segment's; the bytes are what the capture kept of them.
	r.AddUint(fStreamOffset, fl.Bytes+(a.rmbeAt+size-pc)%size)
	r.AddUint(fStreamLen, uint64(f.BTH.DataWireLen()))
	r.AddBytes(fStream, f.BTH.Data())
}

// placeUncut places the bytes of in, a WRITE packet whole whose cut copy
// was followed before it (feedRoCEOfCut), where the cut copy placed what
// it kept: unless a CDC released them already, the stream holds the
// packet's bytes, not the capture's cut.
func (t *Tracker) placeUncut(l *Link, d Dir, in *input) {
	r := &in.roce
	rc := &l.RC[d]
	c := rc.connOf(r.psn)
	if c == nil {
		return // the cut copy named no RMB (its RETH cut), or no connection
	}
	size := c.rmbeSize(d)
	var at uint64
	switch r.opcode {
	case opWriteFirst, opWriteOnly, opWriteOnlyImm:
		ref, ok := l.rkeys[d][r.rkey]
		if !ok || ref.conn != c || ref.va == 0 || size == 0 || r.va < ref.va {
			return
		}
		at = r.va - ref.va
	default:
		w := rc.sw
		k := psnDiff(r.psn, w.psn)
		if !w.ok || k <= 0 {
			return
		}
		at = w.at + uint64(k)*uint64(w.pmtu)
	}
	c.streamOf().dir[d].place(at, r.data, size, in.number)
}
