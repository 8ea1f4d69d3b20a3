package capture

import (
	"cmp"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// Decoding in parallel. A frame's decode depends on what the frames before
// it taught the Reader: the CLC streams reassembled so far, the queue pairs
// known to be SMC-R links, what the dump device's frames showed of its
// header, the numbering. ReadBatch reads a run of frames in capture order
// and does, for each, only the part that carries that state forward: the
// commonest SMC-R frames (those the direct path takes, Reader.SetDirect)
// cost a look at their headers, other frames a decode without the ICRC, the
// TCP ones their CLC reassembly too, whose result the batch keeps. A
// BatchDecoder, on any goroutine, then decodes the batch's frames whole
// from the state the batch starts with, replaying the reassembly's results
// and learning the rest again as the Reader did: its frames are those Next
// would have returned, field for field.

// Batch is a run of consecutive frames read by Reader.ReadBatch, to be
// decoded by a BatchDecoder. Its frames' bytes are a chunk's (a pcap or
// pcapng file read by read(2), chunks.go), or copies when the source
// reuses its buffers; a Batch may be reused for the next ReadBatch once
// its frames are no longer used.
type Batch struct {
	recs []batchRec
	// lean is set when the frames are records of a classic pcap file's
	// chunk: leans then holds them instead of recs, as little as the
	// decoder cannot read again from the chunk. The reader writes a
	// batch's records and a decoder on another CPU reads them: 150 bytes
	// a frame moved between the CPUs' caches cost a decoder more than
	// parsing its record header again.
	lean  *pcapFile
	leans []leanRec
	// chunk is the chunk of a file read in chunks that the frames lie
	// in, held by b until it is reset; own is then lean, the file's
	// settings and that chunk (its own: batches of other chunks are
	// decoded at the same time).
	chunk *chunk
	own   *pcapFile
	// ng is set when the frames are packet blocks of a pcapng file's
	// chunk: leans then holds them too, each with the index (leanRec.lay)
	// of the section's byte order and interfaces it is read with in
	// layouts.
	ng      []byte
	ngBase  int64 // the file offset of ng's first byte
	layouts []*Layout
	// arena holds the copies of frames (and of CLC messages) the source
	// or the reassembly would overwrite.
	arena []byte
	clc   []clcResult
	// The state the first frame is decoded with.
	qps   smcQPs
	dumps []dumpState
	// Err is what ended the reading after the batch's frames: io.EOF at
	// the clean end, a *FileError, or nil when the capture goes on.
	Err error
	// First is the time of the capture's first frame when b holds it
	// (zero otherwise), read with the frame.
	First time.Time
	// skips: the frames read after damage (Reader.skip), by index, in order.
	skips []batchSkip
}

// batchSkip is the i-th frame of a Batch, read after damage err.
type batchSkip struct {
	i   int
	err *SkipError
}

type batchRec struct {
	number        int
	ci            gopacket.CaptureInfo
	data          []byte
	ns            int64
	digits, shown uint8
	lt            layers.LinkType
	off           int64  // RecordOffset
	clc           int32  // index in Batch.clc, -1: the reassembly made nothing of it
	note          string // ifaceAt of an interface of an unsupported link type
	icrcOK        bool   // the reader checked the frame's ICRC: it matches
}

// leanRec is a frame of a lean batch: its number, its record's file
// offset, its CLC result (batchRec.clc) and ICRC verdict
// (batchRec.icrcOK).
type leanRec struct {
	off    int64
	number int
	clc    int32
	icrcOK bool
	lay    uint16 // a pcapng batch's: in Batch.layouts
	lean   leanDirect
}

// leanDirect is what readLean learned of a frame the direct path takes,
// for the decoder not to work it out again: its layers (directLayers; 0
// for a frame readLean left to read) and what its CDC's destination queue
// pair had (smcQPs.addFlags) with the frame.
type leanDirect struct {
	present uint32
	// known: the queue pair was known (its flags unchanged): adding it
	// again teaches nothing. credits: it carries ANCK's credits.
	known, credits bool
}

// dumpState is what one link type's decoder learned of the dump device.
type dumpState struct {
	lt    layers.LinkType
	learn decode.DumpLearner
}

// clcResult is what the CLC reassembly made of one TCP frame: the part of
// a Frame that clcAssembler.segment fills.
type clcResult struct {
	smcFlow, notCLC bool
	sum             TCPSumStatus
	errs            []error
	raw             [][]byte
	inside, anck    []bool
}

func (o *clcResult) apply(f *Frame) {
	f.SMCFlow, f.NotCLC, f.TCPSum = o.smcFlow, o.notCLC, o.sum
	f.CLCErr = append(f.CLCErr, o.errs...)
	f.clcRaw = append(f.clcRaw, o.raw...)
	f.clcRawInside = append(f.clcRawInside, o.inside...)
	f.clcRawANCK = append(f.clcRawANCK, o.anck...)
}

// Len is the number of frames in b.
func (b *Batch) Len() int {
	if b.isLean() {
		return len(b.leans)
	}
	return len(b.recs)
}

// Frame returns the capture's number, the capture information, the bytes
// and the link type of b's i-th frame, as a Frame holding only those (for
// a Writer, or to read a frame's time).
func (b *Batch) Frame(i int) Frame {
	if p := b.lean; p != nil {
		f := Frame{Number: b.leans[i].number, LinkType: p.linkType, digits: p.digits, shown: p.digits}
		f.Data, f.ns = p.recordAt(b.leans[i].off, &f.CI)
		return f
	}
	if b.ng != nil {
		var ng ngFile
		f := Frame{Number: b.leans[i].number}
		f.LinkType, _ = b.ngPacket(&ng, &b.leans[i], &f, true)
		return f
	}
	r := &b.recs[i]
	return Frame{Number: r.number, CI: r.ci, Data: r.data, LinkType: r.lt, ns: r.ns, digits: r.digits, shown: r.shown}
}

func (b *Batch) reset() {
	if b.chunk != nil {
		b.chunk.release()
		b.chunk = nil
	}
	b.recs, b.arena, b.Err = b.recs[:0], b.arena[:0], nil
	b.lean, b.leans = nil, b.leans[:0]
	b.ng, b.ngBase, b.layouts = nil, 0, b.layouts[:0]
	b.First = time.Time{}
	for i := range b.clc {
		o := &b.clc[i]
		*o = clcResult{errs: o.errs[:0], raw: o.raw[:0], inside: o.inside[:0], anck: o.anck[:0]}
	}
	b.clc = b.clc[:0]
	b.dumps = b.dumps[:0]
	b.skips = b.skips[:0]
}

// addLean appends a zero leanRec to b and returns it, to be filled in
// place: a composite literal appended is built on the stack and copied, a
// wide load of narrower stores the CPU cannot forward (half of readLean's
// time).
func (b *Batch) addLean() *leanRec {
	if len(b.leans) < cap(b.leans) {
		b.leans = b.leans[:len(b.leans)+1]
		l := &b.leans[len(b.leans)-1]
		*l = leanRec{}
		return l
	}
	b.leans = append(b.leans, leanRec{})
	return &b.leans[len(b.leans)-1]
}

// Skips is how many of b's first n frames were read after damage, each
// after a place of damage of its own (Reader.DamageOf).
func (b *Batch) Skips(n int) int {
	k := 0
	for _, s := range b.skips {
		if s.i < n {
			k++
		}
	}
	return k
}

// isLean reports whether b's frames are leanRecs (of a pcap or pcapng
// file's chunk).
func (b *Batch) isLean() bool { return b.lean != nil || b.ng != nil }

// layout returns the index in b.layouts of l, the layout of the frame
// just read, added if it is not the last one's.
func (b *Batch) layout(l *Layout) uint16 {
	if n := len(b.layouts); n == 0 || b.layouts[n-1] != l {
		b.layouts = append(b.layouts, l)
	}
	return uint16(len(b.layouts) - 1)
}

// ngPacket reads again the packet block of a lean pcapng batch's frame
// rec into f (CI, Data, its time unless not timed, and digits) and
// returns its link type and the note of its interface (Reader.ifaceAt).
// A block readLeanNg read (rec.lean.present) is an enhanced packet block
// whose framing it checked: its fields are read as they lie. Another is
// read through ng, a reader of the chunk in place. The block was read as
// a packet before, from the same bytes: one that no longer is, is a bug.
func (b *Batch) ngPacket(ng *ngFile, rec *leanRec, f *Frame, timed bool) (layers.LinkType, string) {
	l := b.layouts[rec.lay].ng
	ng.mem, ng.pos, ng.base, ng.big, ng.ifaces, ng.settled, ng.skip = b.ng, rec.off, b.ngBase, l.big, l.ifaces, l.settled, false
	if rec.lean.present != 0 {
		rest := b.ng[rec.off-b.ngBase:]
		h := (*[ngMinEPB]byte)(rest)
		i, caplen := ng.u32(h[8:12]), ng.u32(h[20:24])
		if uint64(i) >= uint64(len(l.ifaces)) || uint64(caplen) > uint64(len(rest)-ngMinEPB) {
			panic("capture: a lean packet block reads otherwise than when it was read")
		}
		ifc := &l.ifaces[i]
		f.ns = 0
		f.CI.Timestamp = time.Time{}
		if timed {
			f.ns = ifc.time(uint64(ng.u32(h[12:16]))<<32 | uint64(ng.u32(h[16:20])))
			f.CI.Timestamp = unixNano(f.ns)
		}
		f.CI.CaptureLength, f.CI.Length = int(caplen), int(ng.u32(h[24:28]))
		f.CI.InterfaceIndex, f.CI.AncillaryData = int(i), ifc.anc
		f.Data, f.digits, f.shown = rest[28:28+caplen:28+caplen], ifc.digits, ifc.shown
		return ifc.linkType, "" // Ethernet
	}
	data, err := ng.readPacket(&f.CI)
	if err != nil || ng.rec != rec.off {
		panic("capture: a packet block reads otherwise than when it was read")
	}
	f.Data, f.ns, f.digits, f.shown = data, ng.ns, ng.digits, ng.shown
	ifc := &ng.ifaces[ng.iface]
	note := ""
	if !SupportedLinkType(ifc.linkType) {
		note = ifc.note()
	}
	return ifc.linkType, note
}

// keep copies p into the arena. Slices of earlier copies stay valid when
// the arena grows: they keep the old array.
func (b *Batch) keep(p []byte) []byte {
	start := len(b.arena)
	if cap(b.arena)-start < len(p) {
		b.arena = make([]byte, 0, max(2*cap(b.arena), len(p), 1<<16))
		start = 0
	}
	b.arena = append(b.arena, p...)
	return b.arena[start : start+len(p) : start+len(p)]
}

// ReadBatch reads up to max frames into b (reset first), carrying the
// Reader's state forward as Next would (see Batch). It stops early at the
// end of the capture or at damage, with b.Err set; frames of b are those
// before it; and, with b.Err nil, at the end of a chunk (chunks.go). Calls
// must not overlap (a chunk's holds are counted by the goroutine reading).
//
// With visit, every frame is decoded whole, as Next decodes it, and
// visit is called with it (and its index in b) before the next is read:
// for a consumer that must see every frame in capture order.
func (r *Reader) ReadBatch(b *Batch, max int, visit func(f *Frame, i int)) {
	b.reset()
	b.qps = r.qps.snapshot()
	b.dumps = r.dumpStates(b.dumps)
	// The batch's frames lie in one chunk, which begins with the first
	// (or the stream reader reads on).
	cf := r.chunked()
	if cf != nil && !cf.chunkHolds() && !cf.nextChunk() {
		cf.toStream()
		cf = nil
	}
	chunked := cf != nil
	switch {
	case !chunked:
	case r.pf == nil:
		b.ng, b.ngBase = r.ng.mem, r.ng.base
		// A layout's index is a leanRec's uint16.
		max = min(max, 1<<16)
	default:
		if b.own == nil {
			b.own = r.pf.settings()
		}
		b.own.mem, b.own.base = r.pf.mem, r.pf.base
		b.lean = b.own
	}
	if chunked {
		b.chunk = cf.current()
		b.chunk.refs++
	}
	f := &r.frame
	fast := visit == nil && r.directFeed == nil &&
		(b.lean != nil && r.pf.linkType == layers.LinkTypeEthernet || b.ng != nil)
	for n := 0; n < max; n++ {
		if r.err != nil {
			b.Err = r.err
			return
		}
		if fast && (b.ng != nil && r.readLeanNg(b) || b.lean != nil && r.readLean(b)) {
			continue
		}
		if chunked && !cf.chunkHolds() {
			return // the next batch starts on the next chunk
		}
		lt, err := r.read(f)
		if err != nil {
			b.Err = err
			return
		}
		if f.Number == 1 {
			b.First = f.CI.Timestamp
		}
		if r.skip != nil {
			b.skips = append(b.skips, batchSkip{n, r.skip})
		}
		data := f.Data
		if !chunked {
			data = b.keep(data)
		}
		// A frame decoded whole for the visit had its ICRC checked as a
		// decoder of the batch would check it: a match is not computed
		// again there (a mismatch is, for the value it shows).
		if b.isLean() {
			rec := batchRec{clc: -1}
			r.carry(f, lt, b, &rec, visit != nil)
			l := b.addLean()
			l.off, l.number, l.clc, l.icrcOK = r.last, f.Number, rec.clc, visit != nil && f.ICRC.OK
			if b.ng != nil {
				l.lay = b.layout(r.Layout())
			}
		} else {
			rec := batchRec{number: f.Number, ci: f.CI, data: data, ns: f.ns, digits: f.digits, shown: f.shown,
				lt: lt, off: r.last, clc: -1}
			r.carry(f, lt, b, &rec, visit != nil)
			rec.icrcOK = visit != nil && f.ICRC.OK
			b.recs = append(b.recs, rec)
		}
		if visit != nil {
			visit(f, n)
		}
	}
}

// readLean reads the next record of a lean batch b into it if it is a
// frame the direct path takes, as read and carry would (they are not
// called: no time, no Frame, only a CDC's destination learned), and
// reports whether it did. Other records, and damage, are left to them.
// This is the reader's whole work for most frames of a capture of SMC-R
// traffic when others decode them: the record header's lengths and the
// frame's headers.
func (r *Reader) readLean(b *Batch) bool {
	if r.frame.Number == 0 {
		return false // read sets the batch's First
	}
	p := r.pf
	off := p.pos
	_, data, length, ok := p.wholeRecord(p.mem[off:])
	if !ok {
		return false // read says what it is
	}
	present := directLayers(data, length)
	if present == 0 {
		return false
	}
	ld := leanDirect{present: present, known: true}
	if present&(1<<decode.OwnerCDC) != 0 && r.depth == DepthAll {
		// As readDirect.
		fl, known := r.qps.addKnown(directCDCDst(data), 0)
		ld.known, ld.credits = known, fl&qpCredits != 0
	}
	p.pos += pcapRecordLen + len(data)
	r.last, r.offset = p.base+int64(off), p.base+int64(p.pos)
	r.frame.Number++
	l := b.addLean()
	l.off, l.number, l.clc, l.lean = r.last, r.frame.Number, -1, ld
	return true
}

// readLeanNg is readLean for a pcapng file's chunk: the next block is read
// into b if it is an enhanced packet block of an Ethernet interface that
// readPacket reads with no question asked (inPlaceEPB), whose frame the
// direct path takes. Another is left where it is, for read.
func (r *Reader) readLeanNg(b *Batch) bool {
	if r.frame.Number == 0 {
		return false // read sets the batch's First
	}
	p := r.ng
	start := p.pos
	var ci gopacket.CaptureInfo
	data := p.inPlaceEPB(&ci, false)
	if data == nil {
		return false
	}
	present := uint32(0)
	if p.ifaces[p.iface].linkType == layers.LinkTypeEthernet {
		present = directLayers(data, ci.Length)
	}
	if present == 0 {
		p.pos = start // read reads it again, and sets what inPlaceEPB set
		return false
	}
	ld := leanDirect{present: present, known: true}
	if present&(1<<decode.OwnerCDC) != 0 && r.depth == DepthAll {
		// As readDirect.
		fl, known := r.qps.addKnown(directCDCDst(data), 0)
		ld.known, ld.credits = known, fl&qpCredits != 0
	}
	r.last = start
	r.frame.Number++
	l := b.addLean()
	l.off, l.number, l.clc, l.lean = start, r.frame.Number, -1, ld
	l.lay = b.layout(r.Layout())
	return true
}

// chunkedFile is a pcap or pcapng file read in chunks (chunks.go).
type chunkedFile interface {
	chunkHolds() bool
	nextChunk() bool
	toStream()
	current() *chunk
}

// chunked returns r's file if it is read in chunks, turning it to that
// if it is one read by read(2) that may be: a file, not a pipe's writer
// to wait for, read as a stream only where chunks cannot be (toStream).
// It returns nil for any other.
func (r *Reader) chunked() chunkedFile {
	size := cmp.Or(r.chunkSize, defaultChunkSize)
	switch p, ng := r.pf, r.ng; {
	case p != nil && p.ck != nil:
		return p
	case ng != nil && ng.ck != nil:
		return ng
	case r.wait != nil || r.numbers != nil || r.err != nil:
	case p != nil && p.src != nil && !p.streamed:
		p.startChunks(r.offset, size)
		return p
	case ng != nil && ng.src != nil && !ng.streamed:
		ng.startChunks(size)
		return ng
	}
	return nil
}

// carry does with f, just read, what later frames depend on (decodeFrame's
// learning), the least it can unless whole: a frame of the direct path's
// kinds teaches only, for a CDC, its destination queue pair; other frames
// are decoded (without the ICRC, which teaches nothing). Whole, f is
// decoded as decodeFrame does.
func (r *Reader) carry(f *Frame, lt layers.LinkType, b *Batch, rec *batchRec, whole bool) {
	if !r.decoderFor(lt) {
		rec.note = r.ifaceAt(f.CI.InterfaceIndex)
		if whole {
			r.decodeFrame(f, lt)
		}
		return
	}
	// Whole, a frame of the direct path's kinds is still taken by it when
	// a consumer follows such frames from their headers (SetDirectFeed):
	// it was handed to it, and is decoded whole only if turned down.
	if (!whole || r.directFeed != nil) && r.skip == nil && r.dec.linkType == layers.LinkTypeEthernet && r.readDirect(f) {
		return
	}
	r.decodeWhole(f, !whole || r.noICRC)
	if whole {
		r.checkLengths(f)
	}
	switch {
	case f.BTH != nil:
		if r.depth == DepthAll {
			r.qps.roce(&r.dec.roce, f)
		}
	case f.TCP != nil:
		n := len(f.CLCErr)
		r.clc.segment(f)
		if f.SMCFlow || f.NotCLC || len(f.CLCErr) > n || len(f.clcRaw) > 0 || f.TCPSum.Checked || f.TCPSum.IPSumBad {
			rec.clc = int32(len(b.clc))
			if len(b.clc) < cap(b.clc) {
				b.clc = b.clc[:len(b.clc)+1] // emptied by reset, its slices' arrays kept
			} else {
				b.clc = append(b.clc, clcResult{})
			}
			o := &b.clc[len(b.clc)-1]
			o.smcFlow, o.notCLC, o.sum = f.SMCFlow, f.NotCLC, f.TCPSum
			o.errs = append(o.errs, f.CLCErr[n:]...)
			for _, m := range f.clcRaw {
				o.raw = append(o.raw, b.keep(m)) // the assembler reuses its buffer
			}
			o.inside = append(o.inside, f.clcRawInside...)
			o.anck = append(o.anck, f.clcRawANCK...)
		}
		if len(f.clcRaw) > 0 {
			decodeCLCs(f, &r.qps)
		}
	}
}

// dumpStates appends what each decoder of r learned of the dump device.
func (r *Reader) dumpStates(dst []dumpState) []dumpState {
	dst = append(dst, dumpState{r.first.linkType, r.first.dumpLearn})
	if r.dec != r.first {
		dst = append(dst, dumpState{r.dec.linkType, r.dec.dumpLearn})
	}
	for lt, d := range r.decs {
		if d != nil && d != r.first && d != r.dec {
			dst = append(dst, dumpState{lt, d.dumpLearn})
		}
	}
	return dst
}

// BatchDecoder decodes the frames of Batches read by one Reader, each
// frame as that Reader's Next would have (see Batch). It owns its
// decoders and frame: one per goroutine.
type BatchDecoder struct {
	r    Reader // no source: its decoders, queue pairs, frame and settings
	b    *Batch
	i    int
	skip int // the next of b.skips (frames are decoded in order)
	// columnsOnly: SetColumnsOnly.
	columnsOnly bool
	ng          ngFile // reads a lean pcapng batch's packet blocks again
}

// SetColumnsOnly tells d that its consumer reads nothing of a frame the
// direct path takes but its number and the plan's columns (AppendColumns):
// such a frame of a lean batch is then not given its time, CI.Timestamp
// zero. Turning each record's time into a time.Time, which no column of
// a plan reads, cost -j 2 -T fields 8 % of its time.
func (d *BatchDecoder) SetColumnsOnly(on bool) { d.columnsOnly = on }

// NewBatchDecoder returns a decoder of r's batches with r's settings
// (SetFieldDemand, SetDepth, SetICRCCheck, SetDirect with a plan of its
// own, SetDirectRecords). Make it before the first ReadBatch.
func (r *Reader) NewBatchDecoder() *BatchDecoder {
	first, _ := NewDecoder(r.first.linkType)
	first.SetDepth(r.depth)
	d := &BatchDecoder{r: Reader{name: r.name, dec: first, first: first, noICRC: r.noICRC, depth: r.depth, replaying: true, last: -1}}
	if r.direct != nil {
		// Its frame number cache is the decoder's own, written with every
		// frame: padded, so that no other goroutine's plan (48 bytes, as
		// many to a cache line) shares its cache line.
		padded := &struct {
			_    [64]byte
			plan DirectPlan
			_    [64]byte
		}{plan: *r.direct}
		d.r.direct = &padded.plan
		d.r.directRecords, d.r.lazyICRC = r.directRecords, r.lazyICRC
	}
	f := &d.r.frame
	f.Decoded = make([]gopacket.LayerType, 0, 16)
	f.demand, f.frameFields = r.frame.demand, r.frame.frameFields
	f.rec.Want = r.frame.rec.Want // read only
	return d
}

// Reset starts decoding b's frames, from the state b starts with.
func (d *BatchDecoder) Reset(b *Batch) {
	d.b, d.i, d.skip = b, 0, 0
	r := &d.r
	r.qps = b.qps
	r.qps.shared = true // b's map, and every other decoder's of b
	for _, dec := range r.decs {
		if dec != nil {
			dec.dumpLearn = decode.DumpLearner{}
		}
	}
	r.first.dumpLearn = decode.DumpLearner{}
	for _, s := range b.dumps {
		if r.decoderFor(s.lt) {
			r.dec.dumpLearn = s.learn
		}
	}
}

// Next decodes the batch's next frame; it returns nil after the last.
// The Frame is valid until the next call, as a Reader's.
func (d *BatchDecoder) Next() *Frame {
	if p := d.b.lean; p != nil {
		return d.nextLean(p)
	}
	if d.b.ng != nil {
		return d.nextLeanNg()
	}
	if d.i >= len(d.b.recs) {
		return nil
	}
	rec := &d.b.recs[d.i]
	d.i++
	f := &d.r.frame
	f.Number, f.CI, f.Data = rec.number, rec.ci, rec.data
	f.ns, f.digits, f.shown = rec.ns, rec.digits, rec.shown
	return d.decode(rec.off, rec.note, rec.clc, rec.lt, rec.icrcOK)
}

// decode decodes the frame Next set up, of record offset off, interface
// note, CLC result clc, link type lt and ICRC verdict icrcOK.
func (d *BatchDecoder) decode(off int64, note string, clc int32, lt layers.LinkType, icrcOK bool) *Frame {
	r := &d.r
	r.last, r.ifaceNote, r.replay, r.icrcMatched = off, note, nil, icrcOK
	r.skip = nil
	if s := d.b.skips; d.skip < len(s) && s[d.skip].i == d.i-1 {
		r.skip = s[d.skip].err
		d.skip++
	}
	if clc >= 0 {
		r.replay = &d.b.clc[clc]
	}
	r.decodeFrame(&r.frame, lt)
	return &r.frame
}

// SetDirectFeed is Reader.SetDirectFeed for the frames Next decodes.
func (d *BatchDecoder) SetDirectFeed(feed func(*Frame) bool) { d.r.directFeed = feed }

// nextLean is Next on a lean batch of p's records: each frame's record
// is read again from the batch's chunk, as read read it.
func (d *BatchDecoder) nextLean(p *pcapFile) *Frame {
	if d.i >= len(d.b.leans) {
		return nil
	}
	rec := &d.b.leans[d.i]
	d.i++
	f := &d.r.frame
	f.Number = rec.number
	if d.columnsOnly && rec.lean.present != 0 && d.r.direct != nil && d.r.directFeed == nil {
		// readDirect takes it (present), and no one reads its time.
		f.Data = p.recordAtUntimed(rec.off, &f.CI)
		f.ns = 0
	} else {
		f.Data, f.ns = p.recordAt(rec.off, &f.CI)
	}
	f.digits, f.shown = p.digits, p.digits
	d.r.lean = rec.lean
	f = d.decode(rec.off, "", rec.clc, p.linkType, rec.icrcOK)
	d.r.lean = leanDirect{}
	return f
}

// nextLeanNg is Next on a lean batch of a pcapng file: each frame's
// packet block is read again from the batch's chunk.
func (d *BatchDecoder) nextLeanNg() *Frame {
	if d.i >= len(d.b.leans) {
		return nil
	}
	rec := &d.b.leans[d.i]
	d.i++
	f := &d.r.frame
	f.Number = rec.number
	d.r.last = rec.off // RecordOffset
	// As nextLean: a frame the direct path takes for a consumer of its
	// columns alone is not given its time.
	timed := !d.columnsOnly || rec.lean.present == 0 || d.r.direct == nil || d.r.directFeed != nil
	lt, note := d.b.ngPacket(&d.ng, rec, f, timed)
	d.r.lean = rec.lean
	f = d.decode(rec.off, note, rec.clc, lt, rec.icrcOK)
	d.r.lean = leanDirect{}
	return f
}

// DirectPlan is the decoder's own copy of the Reader's direct plan (nil
// without one), for the columns of the frames it takes.
func (d *BatchDecoder) DirectPlan() *DirectPlan { return d.r.direct }

// SettleICRC is Reader.SettleICRC for the frame Next last returned.
func (d *BatchDecoder) SettleICRC(f *Frame) { d.r.SettleICRC(f) }

// Whole is Reader.Whole for the frame Next last returned.
func (d *BatchDecoder) Whole(f *Frame) bool { return d.r.Whole(f) }

// Index is the place in the batch of the frame Next last returned.
func (d *BatchDecoder) Index() int { return d.i - 1 }
