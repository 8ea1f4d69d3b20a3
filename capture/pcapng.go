package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// ngFile reads the packets of a pcapng stream (draft-ietf-opsawg-pcapng:
// blocks of a type, a total length, a body and the total length again;
// section header, interface description, enhanced, simple and obsolete
// packet blocks) straight out of the Reader's buffer. It replaces pcapgo's
// NgReader, which reads ahead of what it returns, so an error could not
// name the block it came from, trusts every length (a block length below
// its fields wrapped around and read as "truncated"), never compares a
// block's trailing length with its leading one, and converts binary
// if_tsresol times with a rounded scale. Every error here names the block
// and what is wrong with it, and the Reader adds the frame and the block's
// offset (errOff).
type ngFile struct {
	br *bufio.Reader
	// mem is a chunk (ck), read in place instead of br.
	mem       []byte
	pos       int64 // stream offset of the next block
	errOff    int64 // offset of the block the last error is about
	big       bool  // the current section is big-endian
	skip      bool  // the current section has a version we cannot read: skip to the next
	skipErr   error // why skip: the damage the section's blocks are noted as (pass)
	sectionAt int64 // the offset of the current section's header block
	ifaces    []ngIface
	// gen counts the changes of what reading a packet block needs (a
	// section's byte order, its interfaces), so that Reader.Layout
	// copies them only when they change.
	gen   int
	block []byte // a block longer than br's buffer, read whole
	// Of the packet last returned: its block's offset, time in Unix
	// nanoseconds, interface and that interface's decimal places.
	rec    int64
	ns     int64
	iface  int
	digits uint8
	shown  uint8
	// From the interface statistics blocks read so far: the latest
	// isb_endtime (Unix nanoseconds, 0 none) and, per interface, the
	// packets it or the OS dropped (isb_ifdrop + isb_osdrop), the latest
	// block's counts being the interface's totals.
	endNS int64
	drops map[int]uint64
	// skipped is how many bytes readPacket stepped over before the
	// packet it returned last, from skipFrom, a damaged block (skipWhy)
	// and what followed it up to the next block it could find (resync);
	// 0 for none.
	skipped  int64
	skipFrom int64
	skipWhy  string
	// skipKept: every block of the damage was read and used all the same
	// (ngCorrupt.kept): no bytes of a frame were skipped.
	skipKept bool
	// orderGuess: the section header next read last had its byte-order
	// magic damaged, its order told by its lengths (orderOfLengths).
	orderGuess *ngCorrupt
	// pending is damage to the file's first section header (at offset 0),
	// read before the first readPacket (first): its first packet's.
	pending error
	// firstType is the block type of the file's first block where it is
	// one bit off a section header block's and its byte-order magic is
	// sound (shbTypeFlipped): read as a section header block.
	firstType uint32
	// settled is how many of ifaces, from the first, inPlaceEPB reads:
	// up to the first whose link type its first packet is to settle
	// (ngIface.guess).
	settled int
	// src is what br reads (the file), which ReadBatch reads into chunks
	// instead (ck, chunks.go): mem is then the current chunk, base the
	// offset of its first byte (pos is the stream's offset still).
	// streamed: read as a stream again after chunks (toStream), for good.
	src      io.Reader
	ck       *chunks
	base     int64
	streamed bool
}

// shbTypeFlipped reports a block type one bit off a section header
// block's at the start of h, whose byte-order magic (bytes 8 to 11) is
// sound: no other block type is within two bits of 0x0A0D0D0A.
func shbTypeFlipped(h []byte) bool {
	if len(h) < 12 {
		return false
	}
	typ, bo := binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[8:])
	return bits.OnesCount32(typ^ngBlockSHB) == 1 && (bo == ngByteOrder || bo == ngByteOrderSwapped)
}

// ngIface is what an interface description block says about the packets
// of its interface.
type ngIface struct {
	linkType layers.LinkType
	snaplen  uint32
	// if_tsresol (option 9): a timestamp counts units of 10^-exp seconds,
	// or of 2^-exp with binary; 10^-6 when absent.
	binary bool
	exp    uint8
	perSec uint64 // units per second (decimal resolutions)
	mul    uint64 // nanoseconds a unit, for decimal resolutions up to 10^-9 (else 0)
	// if_tsoffset (option 14): seconds to add to every timestamp.
	offset int64
	// digits is how many decimal places a time of this interface has:
	// exp for a decimal resolution up to nanoseconds, 9 beyond and for
	// binary ones (Frame times are whole nanoseconds).
	digits uint8
	// shown is what Frame.ColumnDigits says of its times.
	shown uint8
	// guess: its link type has no decoder; its first packet may say the
	// one a damaged block meant (guessInterface).
	guess bool
	// off is the file offset of its interface description block.
	off int64
	// anc is the CaptureInfo.AncillaryData of its packets: the link type,
	// boxed once per interface (as pcapgo's WantMixedLinkType gives it),
	// so that a copy of a frame's CaptureInfo keeps its link type.
	anc []any
}

// Block types (draft-ietf-opsawg-pcapng section 11.1) and the options read.
const (
	ngBlockSHB  = 0x0A0D0D0A // section header block
	ngBlockIDB  = 1          // interface description block
	ngBlockPB   = 2          // packet block (obsolete)
	ngBlockSPB  = 3          // simple packet block
	ngBlockISB  = 5          // interface statistics block
	ngBlockEPB  = 6          // enhanced packet block
	ngByteOrder = 0x1A2B3C4D // section header byte-order magic
	// ngByteOrderSwapped is the byte-order magic of a big-endian section
	// read little-endian.
	ngByteOrderSwapped = 0x4D3C2B1A
	ngOptEnd           = 0
	ngOptTSResol       = 9  // if_tsresol
	ngOptTSOffset      = 14 // if_tsoffset
	ngMinBlock         = 12 // type, length, trailing length
	ngMinSHB           = 28 // + byte-order magic, version, section length
	ngMinIDB           = 20 // + link type, reserved, snap length
	ngMinEPB           = 32 // + interface, time (2), captured and original length
	ngMinSPB           = 16 // + original length
	ngMinISB           = 24 // + interface, time (2)
	ngOptISBEnd        = 3  // isb_endtime
	ngOptISBIfDrop     = 5  // isb_ifdrop
	ngOptISBOSDrop     = 7  // isb_osdrop
	ngMajorVersion     = 1
	// ngMaxBlock bounds the block length believed: far above any packet a
	// snap length allows (262144 is libpcap's largest), so that a damaged
	// length is reported at once instead of reading megabytes for it.
	ngMaxBlock = 16 << 20
	// ngMaxSHB bounds a section header block's length: its fields and a
	// few short options (hardware, OS, application, comments).
	ngMaxSHB = 64 << 10
	// ngMaxIDB bounds an interface description block's length likewise:
	// its fields and options (name, description, filter, OS).
	ngMaxIDB = 64 << 10
	// ngMaxOptions bounds the options of a packet block longer than br's
	// buffer believed before it is read (next).
	ngMaxOptions = 64 << 10
)

// ngBlockName names a block type in messages.
func ngBlockName(typ uint32) string {
	switch typ {
	case ngBlockSHB:
		return "section header block"
	case ngBlockIDB:
		return "interface description block"
	case ngBlockPB:
		return "packet block"
	case ngBlockSPB:
		return "simple packet block"
	case ngBlockEPB:
		return "enhanced packet block"
	case 4:
		return "name resolution block"
	case 5:
		return "interface statistics block"
	case 10:
		return "decryption secrets block"
	}
	return fmt.Sprintf("block of type %#x", typ)
}

// ngCorrupt is a damaged block: ErrCorruptRecord with what is wrong.
type ngCorrupt struct {
	detail string
	// taken: the block was read before it was found wrong (one longer
	// than br's buffer): the stream is past it.
	taken bool
	// kept: the block was read and used all the same, what is wrong
	// with it read as its default (interfaceBlock).
	kept bool
	// cut: a section header block the file ends inside, unless a block
	// can be found after its start (readPast): then its length is
	// damage, else the file was cut there (this error).
	cut error
	// unordered: a section header block whose byte order nothing tells:
	// none of its section's blocks can be read (readPast).
	unordered bool
}

func (e *ngCorrupt) Error() string { return e.detail }

func (p *ngFile) corrupt(typ uint32, format string, a ...any) error {
	return &ngCorrupt{detail: ngBlockName(typ) + ": " + fmt.Sprintf(format, a...)}
}

// keptCorrupt is corrupt for a block read and used all the same (kept).
func (p *ngFile) keptCorrupt(typ uint32, format string, a ...any) *ngCorrupt {
	return &ngCorrupt{detail: ngBlockName(typ) + ": " + fmt.Sprintf(format, a...), kept: true}
}

// ngTruncated is a block the stream ends inside: ErrTruncatedFile, saying
// how much of it there is.
type ngTruncated struct {
	typ       uint32
	have, len int // len 0: the block header itself is cut
}

func (e *ngTruncated) Error() string {
	if e.len == 0 {
		return fmt.Sprintf("block header cut after %d of 8 bytes", e.have)
	}
	return fmt.Sprintf("%s of %d bytes, %d present", ngBlockName(e.typ), e.len, e.have)
}

func (e *ngTruncated) Unwrap() error { return io.ErrUnexpectedEOF }

// newNgFile reads the section header block at the start of br.
func newNgFile(br *bufio.Reader) (*ngFile, error) {
	p := &ngFile{br: br}
	if err := p.first(); err != nil {
		return nil, err
	}
	return p, nil
}

// first reads the file's first section header block. One whose byte-order
// magic is damaged is read in the order its lengths tell (orderOfLengths);
// one whose length is damaged, its byte order known, is read past to the
// blocks after it (resync). Either is damage the first packet carries
// (pending), as readPacket notes a later section's.
func (p *ngFile) first() error {
	if h, _ := p.peek(12); shbTypeFlipped(h) {
		p.firstType = binary.LittleEndian.Uint32(h)
	}
	typ, b, err := p.next()
	if ce, ok := err.(*ngCorrupt); ok && typ == ngBlockSHB {
		if err := p.readPast(typ, 0, ce); err != nil {
			return err
		}
		p.pending = ce
		return nil
	}
	if err != nil {
		return err
	}
	if typ != ngBlockSHB { // the magic said so; only damage gets here
		return p.corrupt(typ, "a pcapng file must start with a section header block")
	}
	if bad := p.section(b); bad != nil {
		p.pending = bad
	} else if p.orderGuess != nil {
		p.pending = p.orderGuess
	}
	if p.firstType != 0 {
		flip := p.keptCorrupt(ngBlockSHB, "block type 0x%08x, one bit off a section header block's (its byte-order magic sound)", p.firstType)
		if ce, ok := p.pending.(*ngCorrupt); ok {
			flip.detail += "; " + ce.detail
		}
		p.pending = flip
	}
	return nil
}

// packetBlockLength reports a packet block of length n whose packet (its
// captured length, in the header at pos) and at most ngMaxOptions of
// options cannot fill it.
func (p *ngFile) packetBlockLength(n uint32) error {
	h, _ := p.peek(ngMinEPB)
	if len(h) < ngMinEPB {
		return nil
	}
	if c := p.u32(h[20:]); uint64(n) > ngMinEPB+uint64(c)+3+ngMaxOptions {
		return p.corrupt(ngBlockEPB, "block length %d is beyond its packet of %d bytes and any options", n, c)
	}
	return nil
}

// peek is br.Peek, or the next n bytes of mem in place (fewer, with
// io.EOF, at its end): what follows the next block is not read yet.
func (p *ngFile) peek(n int) ([]byte, error) {
	if p.mem == nil {
		return p.br.Peek(n)
	}
	rest := p.mem[p.pos-p.base:]
	if len(rest) < n {
		return rest, io.EOF
	}
	return rest[:n:n], nil
}

// discard is br.Discard; mem is read at pos, which the callers move.
func (p *ngFile) discard(n int) {
	if p.mem == nil {
		p.br.Discard(n)
	}
}

// bufSize is how much peek can look ahead: br's buffer, or all that mem
// holds (any length: a peek past its end gives the rest and io.EOF).
func (p *ngFile) bufSize() int {
	if p.mem == nil {
		return p.br.Size()
	}
	return math.MaxInt
}

func (p *ngFile) u16(b []byte) uint16 {
	if p.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (p *ngFile) u32(b []byte) uint32 {
	if p.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// next reads the next whole block and checks its framing: its length
// (at least the 12 bytes of the framing, a multiple of 4, believable) and
// that the trailing length repeats the leading one. b is the whole block,
// valid until the next call; io.EOF at a clean end between blocks.
func (p *ngFile) next() (typ uint32, b []byte, err error) {
	p.errOff = p.pos
	h, err := p.peek(8)
	if len(h) < 8 {
		if len(h) == 0 && (err == nil || errors.Is(err, io.EOF)) {
			return 0, nil, io.EOF
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, nil, err
		}
		return 0, nil, &ngTruncated{have: len(h)}
	}
	typ = binary.LittleEndian.Uint32(h) // the SHB type is a palindrome
	if p.pos == 0 && p.firstType != 0 && typ == p.firstType {
		typ = ngBlockSHB
	}
	if typ == ngBlockSHB {
		// A new section: its byte-order magic says how to read the rest,
		// its own length included.
		h, err = p.peek(12)
		if len(h) < 12 {
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, nil, err
			}
			return typ, nil, &ngTruncated{typ: typ, have: len(h), len: ngMinSHB}
		}
		p.orderGuess = nil
		switch bo := binary.LittleEndian.Uint32(h[8:]); bo {
		case ngByteOrder:
			p.big = false
		case ngByteOrderSwapped:
			p.big = true
		default:
			magic := binary.BigEndian.Uint32(h[8:])
			big, ok := p.orderOfLengths()
			if !ok {
				return typ, nil, &ngCorrupt{detail: fmt.Sprintf("%s: byte-order magic %08x is neither 1a2b3c4d nor 4d3c2b1a", ngBlockName(typ), magic), unordered: true}
			}
			p.big = big
			order := "little"
			if big {
				order = "big"
			}
			p.orderGuess = p.keptCorrupt(typ, "byte-order magic %08x is neither 1a2b3c4d nor 4d3c2b1a; read %s-endian, the order its block lengths and version agree in", magic, order)
		}
	} else {
		typ = p.u32(h)
	}
	n := p.u32(h[4:])
	switch {
	case n < ngMinBlock:
		return typ, nil, p.corrupt(typ, "block length %d is below the 12 bytes of a block's framing", n)
	case n%4 != 0:
		return typ, nil, p.corrupt(typ, "block length %d is not a multiple of 4", n)
	case n > ngMaxBlock:
		return typ, nil, p.corrupt(typ, "block length %d is beyond any block (%d MiB)", n, ngMaxBlock>>20)
	case typ == ngBlockSHB && n > ngMaxSHB:
		return typ, nil, p.corrupt(typ, "block length %d is beyond any section header block (%d KiB)", n, ngMaxSHB>>10)
	case typ == ngBlockIDB && n > ngMaxIDB:
		return typ, nil, p.corrupt(typ, "block length %d is beyond any interface description block (%d KiB)", n, ngMaxIDB>>10)
	}
	// A packet block longer than a stream's buffer, whose trailer a
	// stream cannot check before it is read, must be explained by its
	// packet and options (short: a comment, flags, a hash); one in a
	// chunk is held to the same, so that both say the same of it.
	if typ == ngBlockEPB && n > streamBuf {
		if err := p.packetBlockLength(n); err != nil {
			return typ, nil, err
		}
	}
	if int(n) <= p.bufSize() {
		// The trailing length is checked before the block is taken:
		// a block that does not hold together is left where it is, for
		// resync to look past its first bytes.
		if b, _ = p.peek(int(n)); len(b) == int(n) {
			if t := p.u32(b[n-4:]); t != n {
				return typ, nil, p.corrupt(typ, "trailing block length %d differs from the leading %d", t, n)
			}
		} else if typ == ngBlockEPB {
			// Cut by the file's end: a length its packet explains is
			// a file cut short (read says so), another is damage.
			if err := p.packetBlockLength(n); err != nil {
				return typ, nil, err
			}
		} else if typ == ngBlockSHB {
			// Damage where blocks follow it (readPast), else a cut.
			bad := p.corrupt(typ, "block length %d runs past the file's end, %d bytes on", n, len(b))
			bad.(*ngCorrupt).cut = &ngTruncated{typ: typ, have: len(b), len: int(n)}
			return typ, nil, bad
		}
	}
	if b, err = p.read(int(n)); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return typ, nil, &ngTruncated{typ: typ, have: len(b), len: int(n)}
		}
		return typ, nil, err
	}
	if t := p.u32(b[n-4:]); t != n {
		err := p.corrupt(typ, "trailing block length %d differs from the leading %d", t, n)
		err.(*ngCorrupt).taken = true
		p.pos += int64(n)
		return typ, nil, err
	}
	p.pos += int64(n)
	return typ, b, nil
}

// orderOfLengths is the byte order of the section header block at pos
// whose byte-order magic is damaged, from what else in it has one: its
// leading and trailing lengths, equal and sound, and its major version,
// 1; ok is false where that holds in neither order or in both.
func (p *ngFile) orderOfLengths() (big, ok bool) {
	sound := func(o binary.ByteOrder) bool {
		h, _ := p.peek(16)
		if len(h) < 16 {
			return false
		}
		n := o.Uint32(h[4:])
		if n < ngMinSHB || n%4 != 0 || n > ngMaxSHB || o.Uint16(h[12:]) != ngMajorVersion {
			return false
		}
		b, _ := p.peek(int(n))
		return len(b) == int(n) && o.Uint32(b[n-4:]) == n
	}
	le, be := sound(binary.LittleEndian), sound(binary.BigEndian)
	return be, le != be
}

// resync looks past the damaged block at from (why): for the first place
// after it on the four-byte grid blocks lie on, where ngChain blocks
// follow each other (chain), or fewer up to the file's end, within what br
// can hold, from its first four bytes on where next left it unread, else
// from where it ends. It moves there, noting the bytes skipped, and
// reports whether it found one; where there is none, the input is read to
// its end.
func (p *ngFile) resync(from int64, why *ngCorrupt) bool {
	step := 4
	if why.taken {
		step = 0
	}
	for {
		b, err := p.peek(p.bufSize())
		whole := err != nil
		for at := step; at+8 <= len(b); at += 4 {
			if p.chain(b[at:], whole) {
				p.discard(at)
				p.pos += int64(at)
				p.pass(from, why)
				return true
			}
		}
		if whole || len(b) < 12 {
			return false
		}
		// Looked at again from the last block header that could start in it.
		n := (len(b) - 8) &^ 3
		p.discard(n)
		p.pos += int64(n)
		step = 0
	}
}

// ngChain is how many blocks in a row resync wants to see.
const ngChain = 3

// chain reports whether b starts with ngChain blocks that hold together
// (sound), each where the one before ends, or fewer up to the end of b
// (the file's end when whole; else more of it follows b, and a block b
// cuts is taken on its header, from the second on). The interface
// description blocks in the chain describe interfaces its packet blocks
// may name (those of a section whose header was damaged come after it).
func (p *ngFile) chain(b []byte, whole bool) bool {
	ifaces := len(p.ifaces)
	for k := 0; k < ngChain; k++ {
		if len(b) == 0 && whole && k > 0 {
			return true
		}
		n, ok := p.sound(b, k > 0 && !whole, ifaces)
		if !ok {
			return false
		}
		if n > len(b) {
			return k > 0 && !whole
		}
		switch p.u32(b) {
		case ngBlockIDB:
			ifaces++
		case ngBlockSHB:
			ifaces = 0
		}
		b = b[n:]
	}
	return true
}

// sound checks the block at the start of b as next and readPacket would,
// without reading it: a type some writer makes, in the current section's
// byte order (a section header in either), a length from 12 bytes to
// ngMaxBlock in fours, repeated at its end, and for an enhanced packet
// block an interface of the section (one of ifaces) and a captured length
// the block holds. cut: a block b does not hold whole is taken on its
// header. It returns the block's length.
func (p *ngFile) sound(b []byte, cut bool, ifaces int) (int, bool) {
	if len(b) < ngMinBlock {
		return 0, false
	}
	q := ngFile{big: p.big} // the byte order only
	typ := binary.LittleEndian.Uint32(b)
	if typ == ngBlockSHB {
		switch binary.LittleEndian.Uint32(b[8:]) {
		case ngByteOrder:
			q.big = false
		case ngByteOrderSwapped:
			q.big = true
		default:
			return 0, false
		}
	} else {
		typ = q.u32(b)
	}
	switch typ {
	case ngBlockSHB, ngBlockIDB, ngBlockPB, ngBlockSPB, 4, ngBlockISB, ngBlockEPB, 10, 0xBAD, 0x40000BAD:
	default:
		return 0, false
	}
	n := q.u32(b[4:])
	if n < ngMinBlock || n%4 != 0 || n > ngMaxBlock {
		return 0, false
	}
	if int(n) > len(b) {
		return int(n), cut
	}
	if q.u32(b[n-4:]) != n {
		return 0, false
	}
	if typ == ngBlockEPB {
		// Interface 0 of a section that describes none: its interface
		// block may be the damage resync looks past (lostInterface).
		if n < ngMinEPB || int(q.u32(b[8:])) >= max(ifaces, 1) || q.u32(b[20:]) > n-ngMinEPB {
			return 0, false
		}
	}
	return int(n), true
}

// read returns the next n bytes of the stream and moves past them: a
// slice of the buffer when they fit in it, else of p.block, grown as the
// bytes arrive (a damaged length does not allocate before the file says
// there is that much). On a short read b holds what there is.
func (p *ngFile) read(n int) (b []byte, err error) {
	if n <= p.bufSize() {
		b, err = p.peek(n)
		if len(b) < n {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
		p.discard(n) // only advances: b stays valid until the next read
		return b, nil
	}
	p.block = p.block[:0]
	for len(p.block) < n {
		k := min(n-len(p.block), max(len(p.block), 1<<16)) // doubling
		start := len(p.block)
		p.block = append(p.block, make([]byte, k)...)
		got, err := io.ReadFull(p.br, p.block[start:])
		if err != nil {
			return p.block[:start+got], err
		}
	}
	return p.block, nil
}

// section starts a section with its header block b.
//
// What it returns is damage read all the same (kept): a header too short
// for its fields (its version not read), or a major version no writer
// makes (1 is the format's only one: a flipped bit) with blocks after it
// that hold together as version 1's: the section is read as 1.0.
func (p *ngFile) section(b []byte) error {
	p.newSection(p.errOff)
	if len(b) < ngMinSHB {
		return p.keptCorrupt(ngBlockSHB, "%d bytes, below the %d of its fields; its blocks read as version 1.0's", len(b), ngMinSHB)
	}
	major, minor := p.u16(b[12:]), p.u16(b[14:])
	if major == ngMajorVersion {
		return nil
	}
	// No writer has made a version but 1.0: another whose blocks hold
	// together as 1.0's is a flipped bit (2 to 9 may be versions to come,
	// which the format asks a reader to pass over; one whose blocks are
	// 1.0's is read as 1.0, the damage told).
	if next, err := p.peek(p.bufSize()); p.chain(next, err != nil) {
		return p.keptCorrupt(ngBlockSHB, "version %d.%d, which no pcapng writer makes; the blocks after it hold together as version 1.0's and are read as such", major, minor)
	}
	// A version we cannot read: its blocks are skipped up to the next
	// section, as pcapgo did (SkipUnknownVersion) and the format asks;
	// not silently: its packets are missing from what is read (tshark
	// stops there).
	p.skip = true
	p.skipErr = p.corrupt(ngBlockSHB, "version %d.%d, which this reader cannot read: the section passed over up to the next one", major, minor)
	return nil
}

// newSection starts the section whose header is at at: no interface
// described yet.
func (p *ngFile) newSection(at int64) {
	p.ifaces, p.settled = p.ifaces[:0], 0
	p.gen++
	p.skip, p.skipErr, p.sectionAt = false, nil, at
}

// interfaceBlock adds the interface that b (an interface description block) describes.
// An option that cannot be read (a length it cannot have, units no 64-bit
// timestamp can count, bytes running past the block) is damage: the
// interface is added all the same, with the option's default (times in
// microseconds, no offset; the options after one running past the block
// unread), as tshark reads it, and the error returned is an *ngCorrupt
// with kept set, for readPacket to read on past.
func (p *ngFile) interfaceBlock(b []byte) error {
	if len(b) < ngMinIDB {
		return p.corrupt(ngBlockIDB, "%d bytes, below the %d of its fields", len(b), ngMinIDB)
	}
	ifc := ngIface{linkType: layers.LinkType(p.u16(b[8:])), snaplen: p.u32(b[12:]), exp: 6, perSec: 1e6, off: p.errOff}
	ifc.guess = !SupportedLinkType(ifc.linkType)
	var bad *ngCorrupt
	damaged := func(format string, a ...any) {
		if bad == nil {
			bad = p.keptCorrupt(ngBlockIDB, format, a...)
		}
	}
	opts, at := b[16:len(b)-4], 16
	for len(opts) >= 4 {
		code, l := p.u16(opts), int(p.u16(opts[2:]))
		if code == ngOptEnd {
			break
		}
		padded := 4 + (l+3)&^3
		if padded > len(opts) {
			damaged("option %d at block offset %d: %d bytes run past the block; the options from there not read", code, at, l)
			break
		}
		v := opts[4 : 4+l]
		switch code {
		case ngOptTSResol:
			binary, exp := l == 1 && v[0]&0x80 != 0, uint8(0)
			if l == 1 {
				exp = v[0] & 0x7f
			}
			switch {
			case l != 1:
				damaged("if_tsresol of %d bytes (want 1); times read in microseconds", l)
			case binary && exp > 63, !binary && exp > 19:
				damaged("if_tsresol %#x: units beyond what a 64-bit timestamp can count; times read in microseconds", v[0])
			default:
				ifc.binary, ifc.exp = binary, exp
				if !binary {
					ifc.perSec = 1
					for range exp {
						ifc.perSec *= 10
					}
				}
			}
		case ngOptTSOffset:
			if l != 8 {
				damaged("if_tsoffset of %d bytes (want 8); read as no offset", l)
				break
			}
			if p.big {
				ifc.offset = int64(binary.BigEndian.Uint64(v))
			} else {
				ifc.offset = int64(binary.LittleEndian.Uint64(v))
			}
		}
		opts, at = opts[padded:], at+padded
	}
	p.addInterface(ifc)
	if bad != nil {
		return bad
	}
	return nil
}

// addInterface adds ifc, its link type and time resolution set, to the
// section's interfaces, with what follows from them.
func (p *ngFile) addInterface(ifc ngIface) {
	ifc.digits = 9
	if !ifc.binary && ifc.exp < 9 {
		ifc.digits = ifc.exp
	}
	if !ifc.binary && ifc.exp <= 9 {
		ifc.mul = 1e9 / ifc.perSec
	}
	ifc.shown = ifc.digits
	if ifc.binary {
		ifc.shown = binaryDigits(ifc.exp)
	}
	ifc.anc = []any{ifc.linkType}
	p.ifaces = append(p.ifaces, ifc)
	p.settle()
	p.gen++
}

// settle moves settled past the interfaces with nothing left to settle.
func (p *ngFile) settle() {
	for p.settled < len(p.ifaces) && !p.ifaces[p.settled].guess {
		p.settled++
	}
}

// lostInterface adds the interface a packet block names where the section
// describes none by that number, the next one (its interface description
// block damaged or lost: read past, or of a type flipped to one carrying
// nothing): of the link type its first packet (data, of wire bytes on
// the wire) strictly is (guessLinkType), its times in the decimal units
// that put its first one (ts) between 1990 and 2100, else microseconds,
// the format's default, told as damage read all the same of its packet
// block (typ, at start). It reports false, adding nothing, where the
// packet is of no link type a Decoder has, or names another interface (a
// damaged number: one packet's, not an interface's).
func (p *ngFile) lostInterface(typ uint32, num int, data []byte, wire int, ts uint64, start int64) bool {
	if num != len(p.ifaces) {
		return false
	}
	lt, ok := guessLinkType(0, data, wire)
	if !ok {
		return false
	}
	ifc := ngIface{linkType: lt, exp: 6, perSec: 1e6, off: -1}
	units := "microseconds (the format's default)"
	for _, r := range []struct {
		exp    uint8
		perSec uint64
		name   string
	}{{6, 1e6, "microseconds"}, {9, 1e9, "nanoseconds"}, {3, 1e3, "milliseconds"}} {
		if sec := ts / r.perSec; sec >= 631152000 && sec < 4102444800 {
			ifc.exp, ifc.perSec, units = r.exp, r.perSec, r.name+" (its first time's magnitude)"
			break
		}
	}
	p.addInterface(ifc)
	// A packet read all the same: not among the bytes stepped over.
	p.passUpTo(start, start, p.keptCorrupt(typ, "interface %d, which no interface description block of the section describes (damaged or lost): read as %s, its first packet's link type, times in %s", num, linkTypeName(lt), units))
	return true
}

// damagedNumber finds the interface a packet block that names num, an
// interface the section does not describe, belongs to: its number damaged
// (a bit flipped), where the section describes one interface only or
// exactly one whose number is one bit off num, and the packet (data, of
// wire bytes on the wire) is strictly of that interface's link type
// (guessLinkType).
func (p *ngFile) damagedNumber(num int, data []byte, wire int) (int, bool) {
	k := -1
	for i := range p.ifaces {
		if len(p.ifaces) == 1 || bits.OnesCount(uint(i^num)) == 1 {
			if k >= 0 {
				return 0, false
			}
			k = i
		}
	}
	if k < 0 || p.ifaces[k].guess {
		return 0, false
	}
	if lt, ok := guessLinkType(p.ifaces[k].linkType, data, wire); !ok || lt != p.ifaces[k].linkType {
		return 0, false
	}
	return k, true
}

// guessInterface settles the link type of interface num, which has no
// decoder (ngIface.guess), on its first packet (data, of wire bytes on
// the wire, in the block at start): the one it strictly is
// (guessLinkType), a damaged interface block's, told as damage read all
// the same; else it stays, each packet a frame error as before.
func (p *ngFile) guessInterface(num int, data []byte, wire int, start int64) {
	ifc := &p.ifaces[num]
	ifc.guess = false
	p.settle()
	lt, ok := guessLinkType(ifc.linkType, data, wire)
	if !ok {
		return
	}
	why := p.keptCorrupt(ngBlockIDB, "interface %d's link type %d, read as %s (its first packet, at file offset %#x, is)", num, int(ifc.linkType), linkTypeName(lt), start)
	ifc.linkType, ifc.anc = lt, []any{lt}
	p.gen++
	p.passUpTo(ifc.off, start, why)
}

// note is what an error about a packet of ifc adds: where the interface
// was declared (nothing for an interface no block declared).
func (ifc *ngIface) note() string {
	if ifc.off < 0 {
		return ""
	}
	return fmt.Sprintf(", declared at file offset %#x", ifc.off)
}

// time converts a timestamp of interface ifc to Unix nanoseconds, finer
// units truncated.
func (ifc *ngIface) time(ts uint64) int64 {
	var sec, ns uint64
	if ifc.mul != 0 {
		// (ts/perSec + offset)*1e9 + ts%perSec*mul is ts*mul +
		// offset*1e9, in the same 64-bit arithmetic: no division of a
		// 64-bit number for every packet.
		return int64(ts*ifc.mul) + ifc.offset*1e9
	}
	if ifc.binary {
		// The fraction times 1e9 needs up to 94 bits; shifts of 64 give 0.
		sec = ts >> ifc.exp
		hi, lo := bits.Mul64(ts&(1<<ifc.exp-1), 1e9)
		ns = hi<<(64-ifc.exp) | lo>>ifc.exp
	} else {
		sec = ts / ifc.perSec
		frac := ts % ifc.perSec
		if ifc.exp <= 9 {
			ns = frac * (1e9 / ifc.perSec)
		} else {
			ns = frac / (ifc.perSec / 1e9)
		}
	}
	return (int64(sec)+ifc.offset)*1e9 + int64(ns)
}

// readPacket returns the next packet, its data valid until the next call,
// filling the caller's CaptureInfo (AncillaryData holds the link type;
// the Reader asks linkType instead). Blocks that carry no packet are read on the way.
func (p *ngFile) readPacket(ci *gopacket.CaptureInfo) ([]byte, error) {
	p.skipped = 0
	if p.pending != nil {
		p.pass(0, p.pending)
		p.pending = nil
	}
	if p.ck != nil && !p.chunkHolds() && !p.nextChunk() {
		p.toStream()
	}
	if data := p.inPlaceEPB(ci, true); data != nil {
		return data, nil
	}
	for {
		start := p.pos
		typ, b, err := p.next()
		if err != nil {
			if ce, ok := err.(*ngCorrupt); ok {
				if err = p.readPast(typ, start, ce); err == nil {
					continue
				}
			}
			return nil, err
		}
		if typ == ngBlockSHB {
			switch bad := p.section(b); {
			case bad != nil:
				p.pass(start, bad)
			case p.skip:
				p.pass(p.sectionAt, p.skipErr)
			case p.orderGuess != nil:
				p.pass(start, p.orderGuess)
			}
			continue
		}
		if p.skip {
			p.pass(p.sectionAt, p.skipErr) // from its header on
			continue
		}
		p.errOff = start
		var data []byte
		switch typ {
		case ngBlockIDB:
			if err := p.interfaceBlock(b); err != nil {
				if ce, ok := err.(*ngCorrupt); !ok || !ce.kept {
					return nil, err
				}
				p.pass(start, err) // damage, read past
			}
			continue
		case ngBlockEPB, ngBlockPB:
			if len(b) < ngMinEPB {
				return nil, p.corrupt(typ, "%d bytes, below the %d of its fields", len(b), ngMinEPB)
			}
			ifc := int(p.u32(b[8:]))
			if typ == ngBlockPB {
				ifc = int(p.u16(b[8:])) // then a 16-bit drop count
			}
			caplen, room := p.u32(b[20:]), uint32(len(b)-ngMinEPB)
			if caplen > room {
				p.pass(start, p.corrupt(typ, "captured length %d exceeds the %d bytes of packet data the block holds", caplen, room))
				continue
			}
			ts, wire := uint64(p.u32(b[12:]))<<32|uint64(p.u32(b[16:])), int(p.u32(b[24:]))
			data = b[28 : 28+caplen : 28+caplen]
			if ifc >= len(p.ifaces) && !p.lostInterface(typ, ifc, data, wire, ts, start) {
				k, ok := p.damagedNumber(ifc, data, wire)
				if !ok {
					p.pass(start, p.corrupt(typ, "interface %d, but the section describes %d", ifc, len(p.ifaces)))
					continue
				}
				p.passUpTo(start, start, p.keptCorrupt(typ, "interface %d, which the section does not describe: read as interface %d (%s), the one it is a damaged number of", ifc, k, linkTypeName(p.ifaces[k].linkType)))
				ifc = k
			}
			if p.ifaces[ifc].guess {
				p.guessInterface(ifc, data, wire, start)
			}
			p.iface = ifc
			p.ns = p.ifaces[ifc].time(ts)
			ci.CaptureLength, ci.Length = int(caplen), wire
		case ngBlockSPB:
			if len(b) < ngMinSPB {
				return nil, p.corrupt(typ, "%d bytes, below the %d of its fields", len(b), ngMinSPB)
			}
			if len(p.ifaces) == 0 {
				// Damage (an interface block's type flipped to 3 reads
				// as one): passed, as a packet block's unknown interface.
				p.pass(start, p.corrupt(typ, "no interface described before it"))
				continue
			}
			// The captured length is not written: the original length cut
			// to the snap length and to the block.
			orig := p.u32(b[8:])
			caplen := min(orig, uint32(len(b)-ngMinSPB))
			if s := p.ifaces[0].snaplen; s != 0 {
				caplen = min(caplen, s)
			}
			p.iface, p.ns = 0, 0 // no timestamp
			ci.CaptureLength, ci.Length = int(caplen), int(orig)
			data = b[12 : 12+caplen : 12+caplen]
		case ngBlockISB:
			p.statistics(b)
			continue
		case 0:
			// Reserved: no writer makes it, zeroed or overwritten bytes do.
			p.pass(start, p.corrupt(typ, "block type 0 is reserved: damaged or not pcapng from here"))
			continue
		default:
			continue // statistics, name resolution, secrets, custom, unknown
		}
		p.rec = start
		p.digits, p.shown = p.ifaces[p.iface].digits, p.ifaces[p.iface].shown
		ci.Timestamp = unixNano(p.ns)
		ci.InterfaceIndex = p.iface
		ci.AncillaryData = p.ifaces[p.iface].anc
		return data, nil
	}
}

// inPlaceEPB reads the next block of a chunk in place if it is an
// enhanced packet block that readPacket would take as a packet with no
// question asked: its framing sound (a length of at least its fields, a
// multiple of 4, within the buffer a stream reads through, repeated by
// its trailer), of an interface the section describes (and whose link
// type is settled), its packet within it. It returns the packet (ci.Timestamp zero unless timed), nil for any
// other block, which readPacket reads (and says what is wrong with it).
// Most blocks of a file are such: the general way's peeks and checks were
// a fifth of -T fields.
func (p *ngFile) inPlaceEPB(ci *gopacket.CaptureInfo, timed bool) []byte {
	if p.mem == nil || p.skip {
		return nil
	}
	start := p.pos
	rest := p.mem[start-p.base:]
	if len(rest) < ngMinEPB {
		return nil
	}
	h := (*[ngMinEPB]byte)(rest)
	n := p.u32(h[4:8])
	if p.u32(h[0:4]) != ngBlockEPB || n < ngMinEPB || n%4 != 0 || n > streamBuf || uint64(n) > uint64(len(rest)) {
		return nil
	}
	ifc, caplen := p.u32(h[8:12]), p.u32(h[20:24])
	if p.u32(rest[n-4:n]) != n || uint64(ifc) >= uint64(p.settled) || caplen > n-ngMinEPB {
		return nil
	}
	p.pos += int64(n)
	p.errOff, p.rec, p.iface = start, start, int(ifc)
	ifs := &p.ifaces[ifc]
	p.ns = ifs.time(uint64(p.u32(h[12:16]))<<32 | uint64(p.u32(h[16:20])))
	p.digits, p.shown = ifs.digits, ifs.shown
	ci.Timestamp = time.Time{}
	if timed {
		ci.Timestamp = unixNano(p.ns)
	}
	ci.CaptureLength, ci.Length = int(caplen), int(p.u32(h[24:28]))
	ci.InterfaceIndex = int(ifc)
	ci.AncillaryData = ifs.anc
	return rest[28 : 28+caplen : 28+caplen]
}

// readPast reads past the damaged block of type typ at start (why) to
// the next block it can find, or returns the error the read ends with:
// why, or the cut of a file that ends inside a section header (why.cut).
// A section header block whose byte order is known but whose length is
// damaged starts a new section all the same: the interfaces after it
// are its own.
func (p *ngFile) readPast(typ uint32, start int64, why *ngCorrupt) error {
	if typ == ngBlockSHB {
		if why.unordered {
			return why
		}
		p.newSection(start)
	}
	switch {
	case p.resync(start, why):
		return nil
	case why.cut != nil:
		return why.cut
	}
	return why
}

// pass adds the damage at start (why), read past up to p.pos, to what
// readPacket stepped over since its last packet. Where blocks read all
// the same (kept) are followed by damage that skipped bytes, the span is
// told from the latter, the bytes missing being the graver fact, with the
// former's detail after it.
func (p *ngFile) pass(start int64, why error) { p.passUpTo(start, p.pos, why) }

// passUpTo is pass for damage read past up to end: a packet block read
// all the same is not among the bytes stepped over before its packet.
func (p *ngFile) passUpTo(start, end int64, why error) {
	ce, _ := why.(*ngCorrupt)
	kept := ce != nil && ce.kept
	switch {
	case p.skipped == 0:
		p.skipFrom, p.skipWhy, p.skipKept = start, why.Error(), kept
	case p.skipKept && !kept:
		p.skipWhy = fmt.Sprintf("%s; before it, at file offset %#x, %s, read all the same", why.Error(), p.skipFrom, p.skipWhy)
		p.skipFrom, p.skipKept = start, false
	case !p.skipKept && kept:
		p.skipWhy = fmt.Sprintf("%s; after it, at file offset %#x, %s, read all the same", p.skipWhy, start, why.Error())
	}
	p.skipped = max(end-p.skipFrom, p.skipped, 1)
}

// statistics reads an interface statistics block: when the capture of
// its interface ended (isb_endtime, which may be after its last packet)
// and how many packets the interface or the OS dropped. A block that does
// not hold together is passed over: statistics are a note on the capture,
// not its frames.
func (p *ngFile) statistics(b []byte) {
	if len(b) < ngMinISB {
		return
	}
	ifc := int(p.u32(b[8:]))
	if ifc >= len(p.ifaces) {
		return
	}
	var drop uint64
	haveDrop := false
	opts := b[20 : len(b)-4]
	for len(opts) >= 4 {
		code, l := p.u16(opts), int(p.u16(opts[2:]))
		padded := 4 + (l+3)&^3
		if code == ngOptEnd || padded > len(opts) {
			break
		}
		v := opts[4 : 4+l]
		switch {
		case code == ngOptISBEnd && l == 8:
			ts := uint64(p.u32(v))<<32 | uint64(p.u32(v[4:]))
			p.endNS = max(p.endNS, p.ifaces[ifc].time(ts))
		case (code == ngOptISBIfDrop || code == ngOptISBOSDrop) && l == 8:
			// A plain 64-bit count in the section's byte order (only
			// timestamps come as two 32-bit halves).
			if p.big {
				drop += binary.BigEndian.Uint64(v)
			} else {
				drop += binary.LittleEndian.Uint64(v)
			}
			haveDrop = true
		}
		opts = opts[padded:]
	}
	if haveDrop {
		if p.drops == nil {
			p.drops = map[int]uint64{}
		}
		p.drops[ifc] = drop
	}
}

// linkType is the link type of the packet last returned.
func (p *ngFile) linkType() layers.LinkType { return p.ifaces[p.iface].linkType }

// ZeroCopyReadPacketData makes ngFile a PacketSource; the Reader calls
// readPacket.
func (p *ngFile) ZeroCopyReadPacketData() (data []byte, ci gopacket.CaptureInfo, err error) {
	data, err = p.readPacket(&ci)
	return data, ci, err
}

// unixNano is time.Unix(0, ns) in UTC.
func unixNano(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// binaryDigits is the decimals a resolution of 2^-e seconds reaches,
// floor(log10(2^e)) up to 9, as Wireshark's pcapng reader makes its
// precision of it.
func binaryDigits(e uint8) uint8 {
	var d uint8
	for p := uint64(10); d < 9 && e < 64 && p <= 1<<e; p *= 10 {
		d++
	}
	return d
}
