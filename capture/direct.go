package capture

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/numfmt"
)

// The direct path reads the -T fields columns of the commonest SMC-R frame
// straight from its bytes: an RC packet of RoCEv2 over plain Ethernet and
// IPv4 (no VLAN, no IP options, no padding, not cut) carrying a CDC
// message, RDMA WRITE data or an Acknowledge. Those are nearly all the
// frames of a capture of SMC-R traffic, and every header of theirs sits at
// a fixed offset, so a column is a load, a mask and a decimal: no layer
// decoded, no record built. Every other frame (TCP and CLC, LLC, NAKs,
// anything odd or damaged) takes the general path (Decoder and
// Frame.Fields), so that output and errors stay exactly what it gives;
// TestDirectMatchesRecord holds the two paths to the same text on every
// capture, TestDirectMutations and FuzzDirectFields on damaged frames.

// Offsets of the headers in a frame the direct path takes: Ethernet II,
// IPv4 without options (RFC 791), UDP, then the BTH (IBTA vol. 1 §9.2)
// and the header after it.
const (
	dIP   = 14
	dUDP  = dIP + 20
	dBTH  = dUDP + 8
	dNext = dBTH + bthHeaderLen
	// bthHeaderLen is the BTH of an RC packet (no RDETH/XRCETH).
	bthHeaderLen = 12
	// dMin is the shortest such frame: the headers and the 4-byte ICRC.
	dMin = dNext + 4
)

// DirectPlan is the compiled form of a list of fields for the direct path
// (CompileDirect): for each column, where its value sits in a frame the
// path takes, or that the frame has no value for it.
type DirectPlan struct {
	cols []directCol
	// The last frame number and its text (appendNumber).
	num  int
	numW uint64
	numN int
}

type directSrc uint8

const (
	srcAbsent directSrc = iota // never present in a direct frame
	srcNumber                  // frame.number
	srcLen                     // frame.len
	srcCapLen                  // frame.cap_len
	srcBytes                   // read at a fixed place
)

// directOp is how a column is read: the common shapes (a number of 1 to 4
// bytes at a fixed offset, under a mask) by a case of their own, the rest
// by the general code.
type directOp uint8

const (
	opGeneral directOp = iota
	opU8
	opU16
	opU24
	opU32
)

type directCol struct {
	id decode.FieldID
	op directOp
	// need: the column has a value when the frame's layers (Frame.direct)
	// have one of these bits (0: never).
	need    uint32
	src     directSrc
	kind    decode.Kind
	owner   decode.Owner
	off     int  // from the frame start, or from its end when fromEnd
	fromEnd bool // the ICRC trailer
	size    int
	le      bool
	mask    uint64
	shift   uint8
	via     func(uint64) uint64
}

// directAlways are the layers of a direct frame: always the first five,
// and one of RETH, AETH, CDC by opcode. Every other owner's fields are
// absent from such a frame.
const directAlways = 1<<decode.OwnerEthernet | 1<<decode.OwnerIP | 1<<decode.OwnerUDP |
	1<<decode.OwnerBTH | 1<<decode.OwnerICRC

// directLayerOff is where each layer of a direct frame starts.
func directLayerOff(o decode.Owner) (off int, fromEnd, ok bool) {
	switch o {
	case decode.OwnerEthernet:
		return 0, false, true
	case decode.OwnerIP:
		return dIP, false, true
	case decode.OwnerUDP:
		return dUDP, false, true
	case decode.OwnerBTH:
		return dBTH, false, true
	case decode.OwnerRETH, decode.OwnerAETH, decode.OwnerCDC:
		return dNext, false, true
	case decode.OwnerICRC:
		return -4, true, true
	}
	return 0, false, false
}

// CompileDirect compiles the fields ids (the columns of -T fields) for the
// direct path. It reports false when some column cannot be read that way:
// a field with no fixed place (computed ones, frame.time_epoch, the
// tracker's), the recomputed ICRC verdict, or a kind the path does not
// format; the consumer then reads every frame the general way.
func CompileDirect(ids []decode.FieldID) (*DirectPlan, bool) {
	p := &DirectPlan{cols: make([]directCol, len(ids))}
	for i, id := range ids {
		c, ok := compileDirectCol(decode.Def(id))
		if !ok {
			return nil, false
		}
		switch c.src {
		case srcAbsent:
		case srcBytes:
			c.need = 1 << c.owner
		default:
			c.need = ^uint32(0)
		}
		p.cols[i] = c
	}
	return p, true
}

func compileDirectCol(d decode.FieldDef) (directCol, bool) {
	c := directCol{id: d.ID, kind: d.Kind, owner: d.Owner}
	switch d.Owner {
	case decode.OwnerFrame:
		switch d.ID {
		case fFrameNumber:
			c.src = srcNumber
		case fFrameLen:
			c.src = srcLen
		case fFrameCapLen:
			c.src = srcCapLen
		case fFrameCut, fFrameError: // a direct frame is neither cut nor in error
			c.src = srcAbsent
		default:
			return c, false
		}
		return c, true
	case decode.OwnerTunnel, decode.OwnerVLAN, decode.OwnerTCP, decode.OwnerGRH, decode.OwnerRDETH, decode.OwnerXRCETH,
		decode.OwnerImmDt, decode.OwnerIETH, decode.OwnerDETH, decode.OwnerCLC, decode.OwnerLLC:
		return c, true // srcAbsent: not a layer of a direct frame
	}
	base, fromEnd, ok := directLayerOff(d.Owner)
	if !ok {
		return c, false // the ICRC verdict, the tracker's fields
	}
	variant := 0
	if d.Owner == decode.OwnerIP {
		variant = 4
	}
	// One place, one value: a field that repeats (a stride, or a second
	// place for the layout: FieldDef.Locate's occurrences) goes the
	// general way.
	var pl decode.Place
	found := 0
	for _, p := range d.Places {
		if p.Applies(variant) {
			pl = p
			found++
		}
	}
	if found != 1 || pl.Stride > 0 || pl.Off < 0 || pl.HostOrder || pl.Size > 8 {
		return c, false
	}
	switch d.Kind {
	case decode.KindUint, decode.KindBool:
	case decode.KindAddr:
		if pl.Size != 4 || pl.Mask != 0 || pl.Value != nil {
			return c, false
		}
	case decode.KindMAC:
		if pl.Size != 6 || pl.Mask != 0 || pl.Value != nil {
			return c, false
		}
	default:
		return c, false
	}
	c.src = srcBytes
	c.off, c.fromEnd = base+pl.Off, fromEnd
	c.size, c.le, c.mask, c.via = pl.Size, pl.LittleEndian, pl.Mask, pl.Value
	if c.mask != 0 {
		c.shift = uint8(bits.TrailingZeros64(c.mask))
	}
	if d.Kind == decode.KindUint && !fromEnd && !c.le && c.via == nil && c.size <= 4 {
		c.op = opU8 + directOp(c.size-1)
		if c.mask == 0 {
			c.mask = 1<<(8*c.size) - 1
		}
	}
	return c, true
}

// SetDirect makes Next read the frames the direct path takes without
// decoding them (nil: never, the default): such a frame has Direct set,
// no layer, no record, and only p.AppendColumns reads its columns. Only a
// consumer that reads nothing else of a frame than Number, CI, Data,
// SMCRelevant and those columns may set it: -T fields without a filter,
// a tracker or -w.
func (r *Reader) SetDirect(p *DirectPlan) { r.direct = p }

// SetDirectRecords makes the record of a frame the direct path reads
// (Frame.Fields) hold the values of the plan's columns (DirectPlan.
// AppendRecord) instead of nothing: for a display filter whose fields
// the plan compiled and that reads nothing else of a frame but its bytes.
func (r *Reader) SetDirectRecords(on bool) { r.directRecords = on }

// Direct reports whether Next takes frames by the direct path (SetDirect).
func (r *Reader) Direct() bool { return r.direct != nil }

// Direct reports that the direct path read the frame (Reader.SetDirect).
func (f *Frame) Direct() bool { return f.direct != 0 }

// directLayers is the layers (bits of decode.Owner) of a frame of data
// and original length length if the direct path takes it, 0 if not. The
// tests are those the general path's decoders make for this stack: any
// frame they could decode otherwise, or fail, is left to them. They read
// the frame's bytes alone: Reader.readLean makes readDirect's choice
// without a Frame.
func directLayers(data []byte, length int) uint32 {
	n := len(data)
	if n < dMin || length != n {
		return 0
	}
	b := (*[dMin]byte)(data) // the headers, indexed without bounds checks
	be := binary.BigEndian
	// Ethernet II carrying IPv4; a 20-byte header whose total length is
	// the rest of the frame (no options, no padding, no FCS); not a
	// fragment (MF or an offset would stop the chain at the IP layer);
	// UDP to the RoCEv2 port, its length the rest of the datagram.
	if be.Uint16(b[12:]) != uint16(layers.EthernetTypeIPv4) || b[dIP] != 0x45 ||
		int(be.Uint16(b[dIP+2:])) != n-dIP || be.Uint16(b[dIP+6:])&0x3FFF != 0 ||
		b[dIP+9] != uint8(layers.IPProtocolUDP) ||
		be.Uint16(b[dUDP+2:]) != uint16(decode.UDPPortRoCEv2) || int(be.Uint16(b[dUDP+4:])) != n-dUDP {
		return 0
	}
	// The BTH's payload ends before the pad bytes and the ICRC.
	end := n - 4 - int(b[dBTH+1]>>4&3)
	present := uint32(directAlways)
	switch op := decode.BTHOpcode(b[dBTH]); op {
	case decode.OpSendFirst, decode.OpSendOnly:
		// Offered to the SMC classifier: a CDC message (struct
		// smc_cdc_msg, 44 bytes, type 0xFE) is taken; an LLC message, or
		// data that is neither, goes the general way (an unclassified
		// SEND on an SMC-R queue pair is a malformed message there).
		if end-dNext != 44 || b[dNext] != decode.CDCType || b[dNext+1] != 44 {
			return 0
		}
		present |= 1 << decode.OwnerCDC
	case decode.OpSendMiddle, decode.OpSendLast, decode.OpWriteMiddle, decode.OpWriteLast:
		if end < dNext {
			return 0
		}
	case decode.OpWriteFirst, decode.OpWriteOnly:
		if end < dNext+16 { // RETH
			return 0
		}
		present |= 1 << decode.OwnerRETH
	case decode.OpAcknowledge:
		// AETH; a syndrome of the reserved type is a decode error.
		if end < dNext+4 || decode.AETHSyndrome(b[dNext]).Type() == decode.AETHReserved {
			return 0
		}
		present |= 1 << decode.OwnerAETH
	default:
		return 0
	}
	return present
}

// directCDCDst is the queue pair a CDC the direct path takes (data) is
// sent to: what smcQPs.roce learns of it.
func directCDCDst(data []byte) qpKey {
	b := (*[dMin]byte)(data)
	k := qpKey{qpn: uint32(b[dBTH+5])<<16 | uint32(b[dBTH+6])<<8 | uint32(b[dBTH+7])}
	keyIPv4(&k, b[dIP+16:dIP+20])
	return k
}

// readDirect takes f (Number, CI, Data set) by the direct path if it is
// one of the frames the path reads (directLayers), and reports whether it
// did.
func (r *Reader) readDirect(f *Frame) bool {
	present, credits := r.lean.present, r.lean.credits
	switch {
	case present != 0:
		// Read before by the Batch's Reader: its queue pair is added
		// again only if that taught the Reader something.
		if !r.lean.known {
			r.qps.addFlags(directCDCDst(f.Data), 0)
		}
	default:
		present = directLayers(f.Data, f.CI.Length)
		if present == 0 {
			return false
		}
		credits = r.learnCDC(f.Data, present)
	}
	return r.takeDirect(f, present, credits)
}

// learnCDC learns of a frame the direct path takes (data, its layers
// present) what smcQPs.roce learns of every CDC: its destination is an
// SMC-R queue pair. It reports whether that queue pair has ANCK's
// credits.
func (r *Reader) learnCDC(data []byte, present uint32) (credits bool) {
	return present&(1<<decode.OwnerCDC) != 0 && r.depth == DepthAll &&
		r.qps.addFlags(directCDCDst(data), 0)&qpCredits != 0
}

// takeDirect takes f, one of the frames the path reads (its layers
// present), by the direct path, and hands it to the direct feed if any;
// credits: a CDC on a queue pair of ANCK's credits. It reports false
// where f is left to the general path.
func (r *Reader) takeDirect(f *Frame, present uint32, credits bool) bool {
	if f.direct == 0 { // a direct frame leaves nothing else to reset
		f.reset()
		f.LinkType = layers.LinkTypeEthernet
	}
	f.direct = present
	f.recSet = false // the record of the direct frame before, if any
	f.plan = nil
	if r.directRecords {
		f.plan = r.direct
	}
	// A CDC with ANCK's credits is left to the general path, which marks
	// it (smcQPs.roce) for the consumer.
	if r.directFeed != nil && (credits || !r.feedDirect(f)) {
		return false // decodeFrame decodes it the general way
	}
	return true
}

// SetDirectFeed makes the direct path (with or without a plan) hand every
// frame it takes to feed (the tracker's fast path, or a consumer that
// reads no more) before it is returned, with the layers a follower of RC
// traffic and the text line read filled as the general path fills them
// (the BTH, RETH, AETH and CDC whole; of the IPv4 header only the
// addresses; no Ethernet or UDP layer, no field record) and the ICRC
// checked unless SetFieldDemand left it out. When feed reports false,
// having changed nothing, the frame is decoded the general way instead,
// is not Direct, and is returned whole for the consumer to feed it the
// general way. nil turns it off. ReadBatch hands it the frames it reads
// for a visit (the visit sees them Direct, already fed).
func (r *Reader) SetDirectFeed(feed func(*Frame) bool) { r.directFeed = feed }

// feedDirect fills f's layers for directFeed (f was just taken by the
// direct path) and calls it.
func (r *Reader) feedDirect(f *Frame) bool {
	d := f.Data
	ip := &r.directIP
	ip.SrcIP, ip.DstIP = d[dIP+12:dIP+16:dIP+16], d[dIP+16:dIP+20:dIP+20]
	f.IPv4 = ip
	rl := &r.dec.roce
	nf := gopacket.NilDecodeFeedback
	// The ICRC first: it reads the packet from its start to its trailer,
	// which the BTH's decoder then finds in the cache (read first, the
	// trailer of a large WRITE is a load from a line, often a page, not
	// yet touched).
	var want uint32
	var icrcErr error
	if !r.noICRC && !r.icrcMatched && !r.lazyICRC {
		want, icrcErr = rl.icrc.RoCEv2(d[dIP:])
		if icrcErr != nil && !errors.Is(icrcErr, decode.ErrBadICRC) {
			return false
		}
	}
	// readDirect's tests are those of these decoders: none fails.
	if rl.bth.DecodeFromBytes(d[dBTH:], nf) != nil {
		return false
	}
	f.BTH = &rl.bth
	f.RETH, f.AETH, f.CDC = nil, nil, nil
	switch p := rl.bth.Payload; {
	case f.direct&(1<<decode.OwnerCDC) != 0:
		if rl.cdc.DecodeFromBytes(p, nf) != nil {
			return false
		}
		f.CDC = &rl.cdc
	case f.direct&(1<<decode.OwnerRETH) != 0:
		if rl.reth.DecodeFromBytes(p, nf) != nil {
			return false
		}
		f.RETH = &rl.reth
	case f.direct&(1<<decode.OwnerAETH) != 0:
		if rl.aeth.DecodeFromBytes(p, nf) != nil {
			return false
		}
		f.AETH = &rl.aeth
	}
	// As roceLayers.checkICRC: the frame is whole (readDirect).
	f.ICRC, f.icrcDue = ICRCStatus{}, false
	switch {
	case r.noICRC:
	case r.icrcMatched: // the Batch's Reader found it matching
		f.ICRC = ICRCStatus{Checked: true, OK: true, Got: rl.bth.ICRC, Want: rl.bth.ICRC}
	case r.lazyICRC:
		f.icrcDue = true
	default:
		f.ICRC = ICRCStatus{Checked: true, OK: icrcErr == nil, Got: rl.bth.ICRC, Want: want}
		if f.ICRC.OK && !decode.IPv4Header20SumOK((*[20]byte)(d[dIP:])) {
			f.ICRC.ipSumBad(d[dIP:])
		}
	}
	if !r.directFeed(f) {
		r.SettleICRC(f)
		r.declinedICRC = f.ICRC
		return false
	}
	return true
}

// SetLazyICRC makes the direct path leave the ICRC of the frames it takes
// unchecked until SettleICRC: a consumer that reads it of some frames only
// (those a display filter selects) skips the CRC of the others, which is
// most of the cost of such a frame. A tracker fed by the direct path
// (SetDirectFeed) reads it of every frame: not for such a Reader.
func (r *Reader) SetLazyICRC(on bool) { r.lazyICRC = on }

// SettleICRC checks the ICRC of f, the frame just read, where SetLazyICRC
// left it unchecked (f.ICRC is then as it would have been); of any other
// frame it does nothing.
func (r *Reader) SettleICRC(f *Frame) {
	if !f.icrcDue {
		return
	}
	f.icrcDue = false
	// A frame the direct path takes has lengths that agree (directLayers):
	// the check gives a verdict.
	want, err := r.dec.roce.icrc.RoCEv2(f.Data[dIP:])
	f.ICRC = ICRCStatus{Checked: true, OK: err == nil, Got: f.BTH.ICRC, Want: want}
	if f.ICRC.OK && !decode.IPv4Header20SumOK((*[20]byte)(f.Data[dIP:])) {
		f.ICRC.ipSumBad(f.Data[dIP:])
	}
}

// Whole decodes f, the frame just read, as the general path does if the
// direct path took it (every layer, the ICRC checked unless
// SetFieldDemand left it out, the record of every field on first use) and
// reports whether it did; any other frame is left as it is. A consumer
// that matched the direct path's frames on their few values
// (SetDirectRecords) decodes whole the ones it selected, to print them
// with every field (-V, JSON). What the direct path learned of the frame
// is what the general path learns of it: nothing is learned twice.
func (r *Reader) Whole(f *Frame) bool {
	if f.direct == 0 {
		return false
	}
	r.decodeWhole(f, r.noICRC)
	r.checkLengths(f)
	if f.BTH != nil && r.depth == DepthAll {
		r.qps.roce(&r.dec.roce, f)
	}
	return true
}

// AppendColumns appends the -T fields line of f, a frame the direct path
// read, without its newline: each column's value as decode.Value.Append
// formats it (nothing when f has none), quoted with quote unless it is 0
// or the value absent, the columns separated by sep. A column has at most
// one value in such a frame, so -E occurrence and aggregator play no part.
func (p *DirectPlan) AppendColumns(dst []byte, f *Frame, sep string, quote byte) []byte {
	return p.appendColumns(dst, f.Data, f.direct, f.Number, f.CI.Length, f.CI.CaptureLength, sep, quote)
}

// appendColumns is AppendColumns of the frame data, number number, of
// layers present (directLayers) and lengths length and caplen.
func (p *DirectPlan) appendColumns(dst, data []byte, present uint32, number, length, caplen int, sep string, quote byte) []byte {
	// Room for the longest line first: the numbers are then written
	// eight bytes at a time without a capacity check.
	if room := p.LineRoom(sep); cap(dst)-len(dst) < room {
		dst = slices.Grow(dst, room)
	}
	var ok bool
	for i := range p.cols {
		c := &p.cols[i]
		if i > 0 {
			if len(sep) == 1 {
				dst = append(dst, sep[0])
			} else {
				dst = append(dst, sep...)
			}
		}
		if present&c.need == 0 {
			continue
		}
		if quote != 0 {
			dst = append(dst, quote)
		}
		var x uint64
		switch c.src {
		case srcNumber:
			if dst, ok = p.appendNumber(dst, number); ok {
				goto next
			}
			x = uint64(number)
		case srcLen:
			x = uint64(length)
		case srcCapLen:
			x = uint64(caplen)
		default:
			switch c.op {
			case opU8:
				x = uint64(data[c.off]) & c.mask >> c.shift
				goto number
			case opU16:
				b := data[c.off : c.off+2]
				x = (uint64(b[0])<<8 | uint64(b[1])) & c.mask >> c.shift
				goto number
			case opU24:
				b := data[c.off : c.off+3]
				x = (uint64(b[0])<<16 | uint64(b[1])<<8 | uint64(b[2])) & c.mask >> c.shift
				goto number
			case opU32:
				x = uint64(binary.BigEndian.Uint32(data[c.off:c.off+4])) & c.mask >> c.shift
				goto number
			}
			switch c.kind {
			case decode.KindAddr:
				dst = numfmt.AppendIPv4(dst, [4]byte(c.bytes(data)))
				goto next
			case decode.KindMAC:
				v := decode.Value{B: c.bytes(data)}
				dst = v.Append(dst, decode.KindMAC)
				goto next
			}
			x = c.read(data)
			if c.kind == decode.KindBool && x != 0 {
				x = 1
			}
		}
	number:
		if x < 1e8 {
			// Every number of the common columns (opcodes, QPNs, PSNs,
			// frame numbers): one store of eight bytes, of which the
			// digits are kept.
			w, n := numfmt.Word8(x)
			l := len(dst)
			binary.LittleEndian.PutUint64(dst[l:l+8], w)
			dst = dst[:l+n]
		} else {
			dst = numfmt.AppendUint(dst, x)
		}
	next:
		if quote != 0 {
			dst = append(dst, quote)
		}
	}
	return dst
}

// bytes returns the bytes column c reads in data, the bytes of a frame
// the direct path read.
func (c *directCol) bytes(data []byte) []byte {
	off := c.off
	if c.fromEnd {
		off += len(data)
	}
	return data[off : off+c.size]
}

// read returns the number column c reads in data (a frame the direct
// path read that has the column's layer), as the field's decoder gives
// it; a flag is any nonzero value.
func (c *directCol) read(data []byte) uint64 {
	var x uint64
	switch b := c.bytes(data); {
	case c.le:
		for i := len(b) - 1; i >= 0; i-- {
			x = x<<8 | uint64(b[i])
		}
	case c.size == 1:
		x = uint64(b[0])
	case c.size == 2:
		x = uint64(b[0])<<8 | uint64(b[1])
	case c.size == 3:
		x = uint64(b[0])<<16 | uint64(b[1])<<8 | uint64(b[2])
	case c.size == 4:
		x = uint64(binary.BigEndian.Uint32(b))
	default:
		for _, v := range b {
			x = x<<8 | uint64(v)
		}
	}
	if c.mask != 0 {
		x = x & c.mask >> c.shift
	}
	if c.via != nil {
		x = c.via(x)
	}
	return x
}

// AppendRecord adds to r the values of p's columns that f, a frame the
// direct path read, has, as its decoders would add them: the record of a
// display filter that reads no other field (Reader.SetDirectRecords).
func (p *DirectPlan) AppendRecord(r *decode.Record, f *Frame) {
	for i := range p.cols {
		c := &p.cols[i]
		if f.direct&c.need == 0 {
			continue
		}
		switch c.src {
		case srcNumber:
			r.AddUint(c.id, uint64(f.Number))
		case srcLen:
			r.AddUint(c.id, uint64(f.CI.Length))
		case srcCapLen:
			r.AddUint(c.id, uint64(f.CI.CaptureLength))
		default:
			switch c.kind {
			case decode.KindAddr:
				r.AddAddr(c.id, netip.AddrFrom4([4]byte(c.bytes(f.Data))))
			case decode.KindMAC:
				r.AddBytes(c.id, c.bytes(f.Data))
			case decode.KindBool:
				r.AddBool(c.id, c.read(f.Data) != 0)
			default:
				r.AddUint(c.id, c.read(f.Data))
			}
		}
	}
}

// LineRoom is the room that AppendColumns needs at most for one line
// with separator sep (quoted values, and the newline a caller adds).
func (p *DirectPlan) LineRoom(sep string) int {
	return len(p.cols)*(directMaxText+2+len(sep)) + 1
}

// AppendDirect reads frames for as long as the direct path takes them,
// appending each one's line (AppendColumns and a newline) to dst, until
// limit lines (none when limit <= 0) or until dst has no room left for
// another (LineRoom). It returns the lines appended and the first frame
// read that the direct path did not take, for the caller to handle the
// general way (nil when it stopped for the limit or for room), or Next's
// error. A run of frames costs one call: most frames of a capture of
// SMC-R traffic take this path, and the calls per frame were a part of
// their cost.
func (r *Reader) AppendDirect(dst []byte, sep string, quote byte, limit int) ([]byte, int, *Frame, error) {
	p := r.direct
	room := p.LineRoom(sep)
	lines := 0
	for (limit <= 0 || lines < limit) && cap(dst)-len(dst) >= room {
		if r.bufferedDirect() {
			n := lines
			if dst, lines = r.appendBuffered(dst, sep, quote, limit, lines, room); lines > n {
				continue // the loop's test; the record that stopped it is Next's
			}
		}
		if lines > 0 && r.nextWaits() {
			// From a pipe: the lines are the caller's to write out (and
			// OnWait's to flush) before the read waits on the writer.
			break
		}
		f, err := r.Next()
		if err != nil {
			return dst, lines, nil, err
		}
		if !f.Direct() {
			return dst, lines, f, nil
		}
		dst = append(p.AppendColumns(dst, f, sep, quote), '\n')
		lines++
	}
	return dst, lines, nil, nil
}

// FeedBuffered hands the direct feed (SetDirectFeed) the frames the stream
// buffer holds whole, for as long as the direct path takes them, as Next
// would have read them, and reports how many: for a consumer that does
// nothing else with such a frame (-q with tracker views), a loop with no
// call per frame but the feed's. A frame it does not take is Next's.
func (r *Reader) FeedBuffered() int {
	if r.directFeed == nil || r.direct != nil || !r.bufferedDirect() {
		return 0
	}
	_, n := r.appendBuffered(nil, "", 0, 0, 0, 0)
	return n
}

// bufferedDirect reports whether appendBuffered may read r's next frames:
// those nextBuffered may read (bufferedStream), for no consumer but the
// plan's columns and the direct feed.
func (r *Reader) bufferedDirect() bool { return r.bufferedStream() && !r.directRecords }

// bufferedStream reports whether nextBuffered may read r's next frame: a
// classic pcap stream (read by read(2) into its buffer) of Ethernet
// frames past its first frame, numbered by r.
func (r *Reader) bufferedStream() bool {
	p := r.pf
	return p != nil && p.br != nil && r.err == nil && r.frame.Number > 0 && r.numbers == nil &&
		r.dec.linkType == layers.LinkTypeEthernet
}

// appendBuffered is AppendDirect's loop over the records that r's stream
// buffer holds whole, for as long as the direct path takes them: each
// record's lengths and the frame's headers are looked at where they lie,
// and its line appended (lines counts them, up to limit when limit > 0,
// while dst has room for one more; FeedBuffered's loop has no plan and
// appends none), with no call to read, and no Frame filled or time made
// unless for the direct feed (takeBuffered). It learns of a CDC what
// readDirect learns; the frames it passed are the Reader's as if Next had
// read them (their numbers, the record offsets). The first record it
// cannot take (not whole in the buffer, its header implausible, not a
// direct frame, one the feed declines) is left for Next.
// Through read and decodeFrame, these steps cost a quarter of -T fields'
// time on one CPU.
func (r *Reader) appendBuffered(dst []byte, sep string, quote byte, limit, lines, room int) ([]byte, int) {
	p, plan := r.pf, r.direct
	view, _ := p.br.Peek(p.br.Buffered())
	learn := r.depth == DepthAll
	number := r.frame.Number
	pos, last := 0, -1
	for (limit <= 0 || lines < limit) && cap(dst)-len(dst) >= room {
		// The record's checks are readLean's, written out: shared by
		// a function, which does not inline, they cost a call per frame
		// (3 % of -T fields, perf stat -r 10).
		rest := view[pos:]
		if len(rest) < pcapRecordLen {
			break
		}
		h := (*[pcapRecordLen]byte)(rest)
		caplen, length := p.u32(h[8:12]), p.u32(h[12:16])
		if !p.plausibleOf(caplen, length, p.u32(h[4:8])) {
			break
		}
		n := pcapRecordLen + int(caplen)
		if len(rest) < n {
			break
		}
		data := rest[pcapRecordLen:n:n]
		present := directLayers(data, int(length))
		if present == 0 {
			break
		}
		if r.directFeed != nil {
			if !r.takeBuffered(h, data, present, number+1) {
				break
			}
		} else if present&(1<<decode.OwnerCDC) != 0 && learn {
			r.qps.addFlags(directCDCDst(data), 0) // as readDirect
		}
		number++
		if plan != nil {
			dst = append(plan.appendColumns(dst, data, present, number, int(length), int(caplen), sep, quote), '\n')
		}
		lines++
		last = pos
		pos += n
	}
	if pos > 0 {
		p.br.Discard(pos)
		r.frame.Number = number
		r.last = r.offset + int64(last)
		r.offset += int64(pos)
	}
	return dst, lines
}

// nextBuffered is Next for a frame of the direct path that the stream
// buffer holds whole (appendBuffered's tests, for one record): read where
// it lies and taken as readDirect takes it, with none of read's and
// decodeFrame's steps for any file and frame. It reports false, nothing
// read, where Next's own way is needed.
func (r *Reader) nextBuffered() bool {
	if !r.bufferedStream() {
		return false
	}
	p := r.pf
	// What the buffer holds, with no read: a record not whole there is
	// read's.
	view, _ := p.br.Peek(p.br.Buffered())
	h, data, length, ok := p.wholeRecord(view)
	if !ok {
		return false
	}
	present := directLayers(data, length)
	if present == 0 || !r.takeBuffered(h, data, present, r.frame.Number+1) {
		return false
	}
	n := pcapRecordLen + len(data)
	p.br.Discard(n) // only advances: data stays valid until the next read
	r.skip = nil
	r.last = r.offset
	r.offset += int64(n)
	return true
}

// takeBuffered takes the frame of record header h and data, frame number
// number, which appendBuffered or nextBuffered found whole in the stream
// buffer, by the direct path (takeDirect), with Frame filled as read
// fills it. It reports false, the frame left to Next's general steps,
// where readDirect would leave it to the general path.
func (r *Reader) takeBuffered(h *[pcapRecordLen]byte, data []byte, present uint32, number int) bool {
	f, p := &r.frame, r.pf
	// As takeHeader, whose plausibility test wholeRecord made (a call of
	// it per frame cost -q -z smc,conns 4 %); a direct frame's lengths
	// agree (directLayers).
	sec, ns := int64(p.u32(h[0:4])), int64(p.u32(h[4:8])*p.nanoFactor)
	f.CI.Timestamp, p.ns = time.Unix(sec, ns).UTC(), sec*1e9+ns
	f.CI.CaptureLength, f.CI.Length = len(data), len(data)
	f.ns, f.digits, f.shown = p.ns, p.digits, p.digits
	f.Data = data
	old := f.Number
	f.Number = number
	if !r.takeDirect(f, present, r.learnCDC(data, present)) {
		f.Number = old
		return false
	}
	return true
}

// directMaxText is the longest text of a column's value: 20 decimal
// digits; a MAC address (17), an IPv4 address (15).
const directMaxText = 20

// appendNumber appends frame number n, dst having room for 8 more bytes.
// Frame numbers mostly come one after the other: the text of the previous
// one is counted up in its last digit, unless that is a 9. It reports
// false for a number of more than 8 digits.
func (p *DirectPlan) appendNumber(dst []byte, n int) ([]byte, bool) {
	if n == p.num+1 && p.numN > 0 && byte(p.numW>>(8*(p.numN-1))) != '9' {
		p.numW += 1 << (8 * (p.numN - 1))
	} else if n >= 0 && n < 1e8 {
		p.numW, p.numN = numfmt.Word8(uint64(n))
	} else {
		p.numN = 0
		return dst, false
	}
	p.num = n
	l := len(dst)
	binary.LittleEndian.PutUint64(dst[l:l+8], p.numW)
	return dst[:l+p.numN], true
}
