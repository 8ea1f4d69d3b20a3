package capture

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// PacketSource is what a Reader pulls raw frames from: pcapgo's file
// readers, the live AF_PACKET handle, or the libpcap RDMA sniffer. The
// returned data may be reused by the source on the next call.
type PacketSource interface {
	ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

// NumberedSource is a PacketSource that replays chosen frames of a capture
// (the capture browser decodes a frame after its connection's handshake
// frames): FrameNumber gives the capture's number of the frame last read,
// so that a frame's number, and the numbers its errors give of earlier
// frames, are the capture's rather than the place in the replay.
type NumberedSource interface {
	PacketSource
	FrameNumber() int
}

// File magics (first four bytes, as read little-endian).
const (
	magicPcapMicro   = 0xa1b2c3d4
	magicPcapNano    = 0xa1b23c4d
	magicPcapMicroBE = 0xd4c3b2a1
	magicPcapNanoBE  = 0x4d3cb2a1
	magicPcapNG      = 0x0a0d0d0a
	pcapHeaderLen    = 24
	pcapRecordLen    = 16
)

// Reader yields decoded frames from one capture.
type Reader struct {
	name   string
	src    PacketSource
	closer io.Closer
	// file is the regular file read by read(2) (not stdin): an end of
	// it that its size says was cut while it was read is ErrChanged
	// (shrank).
	file   *os.File
	dec    *Decoder // the decoder of the current frame's link type
	first  *Decoder // the file's (first interface's) link type
	decs   map[layers.LinkType]*Decoder
	pf     *pcapFile // src, when it is a classic pcap file (read without copying CaptureInfo)
	noICRC bool
	depth  Depth // how deep frames are decoded (SetFieldDemand)
	direct *DirectPlan
	// directFeed and directIP: SetDirectFeed; the addresses of the frame
	// handed to it.
	directFeed func(*Frame) bool
	directIP   layers.IPv4
	// directRecords: SetDirectRecords. lazyICRC: SetLazyICRC.
	directRecords bool
	lazyICRC      bool
	// declinedICRC is the ICRC verdict of the frame directFeed just
	// turned down, for its general decode.
	declinedICRC ICRCStatus
	// icrcMatched: the frame being decoded is one whose ICRC the Reader
	// of its Batch checked and found to match (BatchDecoder).
	icrcMatched bool
	clc         *clcAssembler
	qps         smcQPs // queue pairs known to be SMC-R links
	frame       Frame
	offset      int64         // pcap: file offset of the next record
	last        int64         // pcap: file offset of the record of the frame last returned (-1: none)
	ng          *ngFile       // src, when it is a pcapng file
	layout      *Layout       // of the frame last returned, once asked for (Layout)
	lgen        int           // ng.gen when layout was made
	isFile      bool          // read from a file or stdin (not live)
	wait        *waitingInput // Waits, OnWait
	digits      uint8         // decimal places of the times of a source that is neither pcap nor pcapng
	err         error         // sticky
	// drops reads the kernel's count of frames it dropped since the last
	// call (live sources only); dropped accumulates it.
	drops   func() (uint64, error)
	dropped uint64
	numbers NumberedSource // src, when it numbers its frames
	// replay: this Reader decodes the frames of Batches (BatchDecoder):
	// what the CLC reassembly made of the current TCP frame, as the
	// Reader that read it recorded (nil for a frame it made nothing of);
	// ifaceNote is what ifaceAt said of the current frame's interface.
	replay    *clcResult
	replaying bool
	ifaceNote string
	// lean: what the Reader of a lean Batch learned of the current frame
	// (BatchDecoder.nextLean), present 0 when nothing.
	lean leanDirect
	// skip: the damage read stepped over before the current frame's
	// record (nil for none), its frame's RecordErr; skips: the first
	// maxSkips of them, nskips how many (Damage).
	skip   *SkipError
	skips  []*SkipError
	nskips int
	// chunkSize: SetChunkSize (0: not set).
	chunkSize int
}

// maxSkips bounds the damaged places a Reader remembers (Damage): a file
// damaged all over is said to be, not listed.
const maxSkips = 64

// Damage is the damage Next has read past so far (a classic pcap record
// header whose lengths no record has, a pcapng block whose framing does
// not hold or a packet block that cannot be read, and the bytes up to the
// next record or block it found): nil for none, else a *FileError (ErrCorruptRecord) naming the
// first place and how many there were. The frames after each place were
// returned; those in the skipped bytes are missing. A caller that took
// io.EOF from Next as the capture's clean end reports this as the run's
// outcome: the file is damaged part-way, and what was read is all there is.
func (r *Reader) Damage() error { return r.DamageOf(r.nskips) }

// DamageOf is Damage for the first n places read past: for a run that
// stopped before the frames read after the others (Batches read ahead of
// the frame -c ended on), which it never took, as a run of Next would not
// have read them. It is nil for n <= 0.
func (r *Reader) DamageOf(n int) error {
	n = min(n, r.nskips)
	if n <= 0 {
		return nil
	}
	s := r.skips[0]
	var d string
	switch {
	case s.Kept && s.FileHeader:
		d = "file header: " + s.Detail + "; read all the same, no frame missing"
	case s.Kept:
		d = s.Detail + "; read all the same, no frame missing"
	case s.Frame > r.frame.Number:
		d = fmt.Sprintf("%s; read on %d bytes to the file's end, no frame after it", s.Detail, s.Skipped)
	default:
		d = fmt.Sprintf("%s; read on from the next record, %d bytes later (frame %d)", s.Detail, s.Skipped, s.Frame)
	}
	if n > 1 {
		d += fmt.Sprintf("; %s more read past (frame.error of the frame after each)", places(n-1))
	}
	return &FileError{Name: r.name, Frame: s.Frame, Offset: s.Offset, Err: ErrCorruptRecord, Detail: d}
}

// places is "1 damaged place", "2 damaged places".
func places(n int) string {
	if n == 1 {
		return "1 damaged place"
	}
	return strconv.Itoa(n) + " damaged places"
}

// Dropped returns how many frames the kernel dropped before this reader
// could take them (a live capture that cannot keep up), and whether the
// source can tell at all.
func (r *Reader) Dropped() (uint64, bool) {
	if r.drops == nil {
		return 0, false
	}
	if n, err := r.drops(); err == nil {
		r.dropped += n
	}
	return r.dropped, true
}

// Recorded is what a pcapng file's interface statistics blocks say of the
// capture, read so far (all of it once Next returned io.EOF): when the
// capture ended (zero when no block says; it may be after the last
// frame), and how many packets the interfaces or the OS dropped (ok:
// some block counts them). A classic pcap file records neither.
func (r *Reader) Recorded() (end time.Time, dropped uint64, ok bool) {
	if r.ng == nil {
		return time.Time{}, 0, false
	}
	if r.ng.endNS != 0 {
		end = unixNano(r.ng.endNS)
	}
	for _, n := range r.ng.drops {
		dropped += n
	}
	return end, dropped, r.ng.drops != nil
}

// Open opens a pcap or pcapng file, or stdin when name is "-". The format
// is detected from the magic, not from the file name.
func Open(name string) (*Reader, error) { return open(context.Background(), name) }

func open(ctx context.Context, name string) (*Reader, error) {
	var (
		in     io.Reader
		closer io.Closer
		wait   *waitingInput
	)
	if name == "-" {
		in = os.Stdin
		if st, err := os.Stdin.Stat(); err == nil && !st.Mode().IsRegular() {
			wait = newWaitingInput(ctx, os.Stdin)
			in = wait
		}
	} else {
		f, err := openWaiting(ctx, name)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the name is said once, by FileError
			}
			return nil, &FileError{Name: name, Err: err, Offset: -1}
		}
		st, err := f.Stat()
		if err == nil && st.IsDir() {
			f.Close()
			return nil, &FileError{Name: name, Err: syscall.EISDIR, Offset: -1}
		}
		in, closer = f, f
		if err == nil && !st.Mode().IsRegular() { // a FIFO, a socket, a terminal: see waitingInput
			wait = newWaitingInput(ctx, f)
			in = wait
		}
	}
	r, err := NewFileReader(name, in)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		if wait != nil && ctx.Err() != nil {
			return nil, context.Cause(ctx) // the header never came: no fault of the file
		}
		return nil, err
	}
	r.closer, r.wait = closer, wait
	if f, ok := in.(*os.File); ok && wait == nil && name != "-" {
		r.file = f
	}
	return r, nil
}

// streamBuf is the buffer a stream is read through (NewFileReader): a
// pcapng block longer than it has its trailer checked once it is read.
const streamBuf = 1 << 18

// NewFileReader reads a pcap or pcapng stream, possibly gzip-compressed;
// name is used in messages.
func NewFileReader(name string, in io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(in, streamBuf)
	magic, err := br.Peek(4)
	if gc := (*GzipCutError)(nil); len(magic) < 4 && errors.As(err, &gc) {
		return nil, headerError(name, err)
	}
	if len(magic) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			if name == "-" {
				// Not a file that is empty: the writer closed the pipe (or
				// stdin was /dev/null) before a capture header came.
				return nil, &FileError{Name: name, Err: ErrEmpty, Offset: -1, Detail: "closed before a capture header"}
			}
			return nil, &FileError{Name: name, Err: ErrEmpty, Offset: -1}
		}
		return nil, &FileError{Name: name, Err: err, Offset: -1}
	}
	if len(magic) < 4 {
		return nil, &FileError{Name: name, Err: ErrNotCapture, Offset: -1,
			Detail: fmt.Sprintf("(only %d bytes)", len(magic))}
	}
	if magic[0] == 0x1f && magic[1] == 0x8b {
		// gzip (capture.pcap.gz): offsets in messages are then offsets
		// in the decompressed stream.
		gz, err := NewGzipReader(br)
		if err != nil {
			return nil, &FileError{Name: name, Err: ErrNotCapture, Offset: -1, Detail: "(bad gzip: " + err.Error() + ")"}
		}
		return NewFileReader(name, gz)
	}
	var (
		src  PacketSource
		lt   layers.LinkType
		ng   *ngFile
		ltAt int64 // offset of what declares lt
	)
	switch m := binary.LittleEndian.Uint32(magic); {
	case m == magicPcapNG || ngFlipped(br.Peek):
		// A pcapng file may hold interfaces of different link types (mergecap
		// of an SLL and an Ethernet capture, say): each frame is decoded by
		// its interface's (decoderFor); the first one's is the file's.
		lt, ltAt = pcapngFirstLinkType(br.Peek)
		ng, err = newNgFile(br)
		if err != nil {
			return nil, ngHeaderError(name, err)
		}
		ng.src = in
		src = ng
	case isPcapMagic(m):
		pr, err := newPcapFile(br)
		if err != nil {
			return nil, headerError(name, err)
		}
		pr.src = in
		src, lt = pr, pr.LinkType()
	default:
		return nil, &FileError{Name: name, Err: ErrNotCapture, Offset: -1,
			Detail: fmt.Sprintf("(magic %02x%02x%02x%02x)", magic[0], magic[1], magic[2], magic[3])}
	}
	r, err := NewReader(name, src, lt)
	if err != nil {
		if ng != nil {
			return nil, linkTypeAt(err, ltAt, "interface description block 0")
		}
		return nil, linkTypeAt(err, 0, "the file header")
	}
	r.isFile, r.offset, r.ng = true, pcapHeaderLen, ng
	r.pf, _ = src.(*pcapFile)
	return r, nil
}

// ngFlipped is shbTypeFlipped of a stream's first bytes.
func ngFlipped(peek func(int) ([]byte, error)) bool {
	h, _ := peek(12)
	return shbTypeFlipped(h)
}

// linkTypeAt places an unsupported link type error of NewReader at the
// offset of the header or block that declares the link type.
func linkTypeAt(err error, off int64, what string) error {
	var fe *FileError
	if errors.As(err, &fe) && errors.Is(fe.Err, ErrUnsupportedLink) && fe.Offset < 0 {
		fe.Offset, fe.Detail = off, fe.Detail+" (declared by "+what+")"
	}
	return err
}

// pcapngFirstLinkType reads the link type of the first interface block,
// and that block's offset, from the file's first bytes (peek: a stream's
// buffer); pcapgo does not tell
// it when mixed link types are enabled. Ethernet when the header cannot
// be read (NewNgReader then reports the damage).
func pcapngFirstLinkType(peek func(int) ([]byte, error)) (layers.LinkType, int64) {
	hdr, _ := peek(12)
	if len(hdr) < 12 {
		return layers.LinkTypeEthernet, -1
	}
	var bo binary.ByteOrder = binary.LittleEndian
	if binary.BigEndian.Uint32(hdr[8:12]) == 0x1A2B3C4D {
		bo = binary.BigEndian
	}
	// The section header and the interface block after it, their framing
	// sound (ngFile.sound): where either is damaged the ngFile finds the
	// blocks past it (resync) and says so; the first decoder is then
	// Ethernet's, each interface's frames decoded by its own.
	shb := int(bo.Uint32(hdr[4:8]))
	b, _ := peek(shb + ngMinIDB)
	if shb < ngMinSHB || shb > ngMaxSHB || len(b) < shb+ngMinIDB || bo.Uint32(b[shb-4:]) != uint32(shb) || bo.Uint32(b[shb:]) != ngBlockIDB {
		return layers.LinkTypeEthernet, -1
	}
	idb := int(bo.Uint32(b[shb+4:]))
	b, _ = peek(shb + idb)
	q := ngFile{big: bo == binary.BigEndian}
	if n, ok := q.sound(b[shb:], false, 0); !ok || n != idb || idb > ngMaxIDB {
		return layers.LinkTypeEthernet, -1
	}
	lt := layers.LinkType(bo.Uint16(b[shb+8 : shb+10]))
	if !SupportedLinkType(lt) {
		// The ngFile reads a damaged link type as the one its first
		// packet is (guessInterface): where that packet's block comes
		// next, the file is that link type's.
		e := shb + idb
		if b, _ = peek(e + ngMinEPB + linkGuessLen); len(b) >= e+ngMinEPB && bo.Uint32(b[e:]) == ngBlockEPB && bo.Uint32(b[e+8:]) == 0 {
			data := b[e+28:]
			data = data[:min(len(data), int(bo.Uint32(b[e+20:])))]
			if g, ok := guessLinkType(lt, data, int(bo.Uint32(b[e+24:]))); ok {
				lt = g
			}
		}
	}
	return lt, int64(shb)
}

// ngHeaderError is the error of a pcapng file whose section header block
// cannot be read: at offset 0, before any frame.
func ngHeaderError(name string, err error) error {
	var ce *ngCorrupt
	var te *ngTruncated
	switch {
	case errors.As(err, &ce):
		return &FileError{Name: name, Offset: 0, Err: ErrNotCapture, Detail: "(" + ce.Error() + ")"}
	case errors.As(err, &te):
		return &FileError{Name: name, Offset: 0, Err: ErrTruncatedFile, Detail: te.Error()}
	}
	return headerError(name, err)
}

func headerError(name string, err error) error {
	var gc *GzipCutError
	if errors.As(err, &gc) {
		gc.Header = true
		return &FileError{Name: name, Err: gc, Offset: -1}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &FileError{Name: name, Err: ErrTruncatedFile, Offset: -1}
	}
	return &FileError{Name: name, Err: ErrNotCapture, Offset: -1, Detail: "(" + err.Error() + ")"}
}

// NewReader decodes frames of link type lt pulled from src.
func NewReader(name string, src PacketSource, lt layers.LinkType) (*Reader, error) {
	dec, err := NewDecoder(lt)
	if err != nil {
		return nil, &FileError{Name: name, Err: ErrUnsupportedLink, Offset: -1, Detail: fmt.Sprint(int(lt))}
	}
	r := &Reader{name: name, src: src, dec: dec, first: dec, clc: newCLCAssembler(), digits: sourceDigits(src)}
	r.numbers, _ = src.(NumberedSource)
	r.frame.Decoded = make([]gopacket.LayerType, 0, 16)
	r.frame.demand, r.frame.frameFields = gAll, wAllFrame
	return r, nil
}

// sourceDigits is how many decimal places the times of src resolve: what
// its Resolution says (pcapgo's readers, libpcap handles), else 9.
func sourceDigits(src PacketSource) uint8 {
	rs, ok := src.(interface {
		Resolution() gopacket.TimestampResolution
	})
	if !ok {
		return 9
	}
	if res := rs.Resolution(); res.Base == 10 && res.Exponent <= 0 && res.Exponent > -9 {
		return uint8(-res.Exponent)
	}
	return 9
}

// SetICRCCheck turns the RoCE ICRC verification on (the default) or off.
func (r *Reader) SetICRCCheck(on bool) { r.noICRC = !on }

// RecordOffset returns the offset where the record of the frame Next
// last returned starts in a pcap stream (a classic pcap record, a pcapng
// packet block), for random access with Records and Layout (the capture
// browser's index); -1 for live sources. For a gzip-compressed file it
// is an offset in the decompressed stream, which the file itself cannot
// be read at.
func (r *Reader) RecordOffset() int64 { return r.last }

// RecordEnd returns the offset just past the record of the frame Next
// last returned (RecordOffset), -1 where RecordOffset is.
func (r *Reader) RecordEnd() int64 {
	switch {
	case r.last < 0:
		return -1
	case r.ng != nil:
		return r.ng.pos
	}
	return r.offset
}

// Frames is the number of frames read so far (the number of the frame
// Next last returned).
func (r *Reader) Frames() int { return r.frame.Number }

// Name is the file name given to Open ("-" for stdin) or the interface.
func (r *Reader) Name() string { return r.name }

// LinkType of the capture.
func (r *Reader) LinkType() layers.LinkType { return r.first.LinkType() }

// Next reads and decodes the next frame. It returns io.EOF at the clean end
// of the capture and a *FileError when the file is damaged; frames before
// the damage have been returned normally.
func (r *Reader) Next() (*Frame, error) {
	if r.err != nil {
		return nil, r.err
	}
	f := &r.frame
	if (r.direct != nil || r.directFeed != nil) && r.nextBuffered() {
		return f, nil
	}
	lt, err := r.read(f)
	if err != nil {
		return nil, err
	}
	r.decodeFrame(f, lt)
	return f, nil
}

// read reads the next record into f (Number, CI, Data and the times) and
// returns the link type its frame is to be decoded with; on a read error
// that error is r.err (io.EOF at the clean end).
func (r *Reader) read(f *Frame) (layers.LinkType, error) {
	var (
		data []byte
		err  error
	)
	switch {
	case r.pf != nil:
		data, err = r.pf.read(&f.CI)
		f.ns, f.digits, f.shown = r.pf.ns, r.pf.digits, r.pf.digits
	case r.ng != nil:
		data, err = r.ng.readPacket(&f.CI)
		f.ns, f.digits, f.shown = r.ng.ns, r.ng.digits, r.ng.shown
	default:
		data, f.CI, err = r.src.ZeroCopyReadPacketData()
		f.ns, f.digits, f.shown = f.CI.Timestamp.UnixNano(), r.digits, r.digits
	}
	if err != nil {
		if p := r.ng; p != nil && p.skipped > 0 {
			// Read past, with no packet after it (blocks of statistics
			// end many files): damage all the same.
			r.noteSkip(f.Number+1, p.skipFrom, p.skipped, p.skipFrom+p.skipped, p.skipWhy, p.skipKept)
			p.skipped = 0
		}
		r.err = r.fileError(f.Number+1, f.CI, err)
		if r.err != nil && r.shrank() {
			r.err = &FileError{Name: r.name, Frame: f.Number + 1, Offset: r.readOffset(), Err: ErrChanged}
		}
		if r.err == io.EOF {
			r.clc.flushAll()
		}
		if fe, ok := r.err.(*FileError); ok && r.nskips > 0 {
			// The damage read past before is the file's too.
			s := r.skips[0]
			more := fmt.Sprintf("after %s read past, the first at frame %d (file offset %#x)", places(r.nskips), s.Frame, s.Offset)
			if fe.Detail != "" {
				more = fe.Detail + "; " + more
			}
			fe.Detail = more
		}
		return 0, r.err
	}
	f.Number++
	if r.numbers != nil {
		f.Number = r.numbers.FrameNumber()
	}
	f.Data = data
	r.last = -1
	lt := r.first.LinkType()
	r.skip = nil
	switch {
	case r.pf != nil: // classic pcap: record offsets are exact
		r.offset += r.pf.passed
		if n := r.pf.skipped; n > 0 {
			r.skip = r.noteSkip(f.Number, r.offset, n, r.offset+n, r.pf.skipWhy, false)
			r.offset += n
		} else if r.pf.keptWhy != "" {
			r.skip = r.noteSkip(f.Number, r.pf.kept[0], r.pf.kept[1]-r.pf.kept[0], r.offset, r.pf.keptWhy, true)
			r.skip.FileHeader = true
			r.pf.keptWhy = ""
		}
		r.last = r.offset
		r.offset += pcapRecordLen + int64(f.CI.CaptureLength)
	case r.ng != nil:
		if n := r.ng.skipped; n > 0 {
			r.skip = r.noteSkip(f.Number, r.ng.skipFrom, n, r.ng.rec, r.ng.skipWhy, r.ng.skipKept)
		}
		r.last = r.ng.rec
		lt = r.ng.linkType()
	case len(f.CI.AncillaryData) > 0:
		// Frames of a pcapng file replayed from memory (the capture
		// browser) carry their interface's link type there.
		if l, ok := f.CI.AncillaryData[0].(layers.LinkType); ok {
			lt = l
		}
	}
	return lt, nil
}

// noteSkip counts, for Damage, the n bytes of damage (why) read stepped
// over from offset from, before the record at at of frame number (kept:
// blocks read all the same, SkipError.Kept), and returns it.
func (r *Reader) noteSkip(number int, from, n, at int64, why string, kept bool) *SkipError {
	s := &SkipError{Frame: number, Offset: from, Skipped: n, At: at, Detail: why, Kept: kept}
	if len(r.skips) < maxSkips {
		r.skips = append(r.skips, s)
	}
	r.nskips++
	return s
}

// decodeFrame decodes f, just read (read), as a frame of link type lt,
// and learns from it what later frames depend on (the CLC streams, the
// SMC-R queue pairs).
func (r *Reader) decodeFrame(f *Frame, lt layers.LinkType) {
	if !r.decoderFor(lt) {
		f.reset()
		f.LinkType = lt
		f.Err = fmt.Errorf("%w %d (pcapng interface %d%s)", ErrUnsupportedLink, int(lt), f.CI.InterfaceIndex, r.ifaceAt(f.CI.InterfaceIndex))
		r.checkLengths(f)
		return
	}
	if (r.direct != nil || r.directFeed != nil) && r.skip == nil && r.dec.linkType == layers.LinkTypeEthernet && r.readDirect(f) {
		return // the direct path takes only frames whose lengths agree
	}
	r.decodeWhole(f, r.noICRC)
	r.checkLengths(f)
	switch {
	case f.BTH != nil:
		// The set of SMC-R queue pairs is learned from and applied to
		// LLC and CDC messages, which a shallower decode leaves alone.
		if r.depth == DepthAll {
			r.qps.roce(&r.dec.roce, f)
		}
	case f.TCP != nil:
		switch {
		case !r.replaying:
			r.clc.segment(f)
		case r.replay != nil:
			r.replay.apply(f)
		}
		if len(f.clcRaw) > 0 {
			decodeCLCs(f, &r.qps)
		}
	}
}

// decodeWhole decodes f through every layer with r's decoder, its ICRC
// checked unless noICRC. A frame the direct feed turned down had its ICRC
// checked already (feedDirect): its verdict is kept, not computed again.
func (r *Reader) decodeWhole(f *Frame, noICRC bool) {
	checked := r.declinedICRC
	r.dec.roce.noICR = noICRC || checked.Checked
	r.dec.roce.matched = r.icrcMatched
	r.dec.Decode(f)
	if checked.Checked {
		f.ICRC, r.declinedICRC = checked, ICRCStatus{}
	}
}

// checkLengths flags a record whose original length is below its captured
// length: no frame can be, so the header is damaged, but the captured
// bytes are read and so is the rest of the file.
func (r *Reader) checkLengths(f *Frame) {
	switch {
	case r.skip != nil:
		// Read found it after damage: it holds the frames' lengths to
		// each other (plausible).
		f.RecordErr = r.skip
	case f.CI.Length < f.CI.CaptureLength:
		f.RecordErr = &RecordError{Frame: f.Number, Offset: r.last, Len: f.CI.Length, CapLen: f.CI.CaptureLength}
	}
}

// decoderFor makes r.dec the decoder of the frame's link type lt: a
// pcapng file names it per interface. It reports false for a link type no
// decoder handles (r.dec is then unchanged); the frame is shown with that
// error and reading goes on.
func (r *Reader) decoderFor(lt layers.LinkType) bool {
	if lt == r.dec.LinkType() {
		return true
	}
	d, seen := r.decs[lt]
	if !seen {
		d, _ = NewDecoder(lt) // nil: unsupported, remembered as such
		if d != nil {
			d.SetDepth(r.depth)
		}
		if r.decs == nil {
			r.decs = make(map[layers.LinkType]*Decoder)
		}
		r.decs[r.dec.LinkType()] = r.dec
		r.decs[lt] = d
	}
	if d == nil {
		return false
	}
	r.dec = d
	return true
}

// fileError classifies a read error of frame n. pcapgo (and pcapFile)
// report a record cut inside its header as io.ErrUnexpectedEOF, but a
// record cut right after its header as io.EOF with a non-zero capture
// length; ngFile's io.EOF is always the clean end, and its errors say
// which block is wrong and how, at the block's offset.
func (r *Reader) fileError(n int, ci gopacket.CaptureInfo, err error) error {
	if err == io.EOF && (ci.CaptureLength == 0 || r.ng != nil) {
		return io.EOF
	}
	if r.wait != nil && r.wait.stopped(err) {
		return err // no fault of the file: OpenContext's context ended the wait
	}
	off := int64(-1)
	switch {
	case r.pf != nil:
		off = r.offset
	case r.ng != nil:
		off = r.ng.errOff
		var ce *ngCorrupt
		if errors.As(err, &ce) {
			return &FileError{Name: r.name, Frame: n, Offset: off, Err: ErrCorruptRecord, Detail: ce.Error()}
		}
	}
	var gc *GzipCutError
	if errors.As(err, &gc) {
		// Inside the record when the stream gave any of its bytes.
		gc.Frames, gc.Inside = n-1, off >= 0 && gc.decompressed > off
		return &FileError{Name: r.name, Frame: n, Offset: off, Err: gc}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		fe := &FileError{Name: r.name, Frame: n, Offset: off, Err: ErrTruncatedFile}
		var te *ngTruncated
		if errors.As(err, &te) {
			fe.Detail = te.Error()
		}
		return fe
	}
	if !r.isFile { // live source: pass the OS error through
		return err
	}
	return &FileError{Name: r.name, Frame: n, Offset: off, Err: ErrCorruptRecord, Detail: err.Error()}
}

// shrank reports whether the file r reads by read(2) is now shorter than
// what its reads have taken of it: another program truncated it while it
// was read, and the end they met is that program's doing.
func (r *Reader) shrank() bool {
	if r.file == nil {
		return false
	}
	pos, err := r.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return false
	}
	st, err := r.file.Stat()
	return err == nil && st.Mode().IsRegular() && st.Size() < pos
}

// readOffset is the file offset of the record or block r was reading
// when its read ended.
func (r *Reader) readOffset() int64 {
	if r.ng != nil {
		return r.ng.pos
	}
	return r.offset
}

// Close releases the file (not stdin).
func (r *Reader) Close() error {
	if r.closer != nil {
		return r.closer.Close()
	}
	return nil
}

// ifaceAt says where the interface description block of pcapng interface
// i is: ", declared at file offset 0x..", or "" when not known (frames
// replayed from memory).
func (r *Reader) ifaceAt(i int) string {
	if r.replaying {
		return r.ifaceNote
	}
	if r.ng == nil || i < 0 || i >= len(r.ng.ifaces) {
		return ""
	}
	return r.ng.ifaces[i].note()
}
