package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pcapFile reads the records of a classic pcap stream (the libpcap file
// format: a 24-byte file header, then a 16-byte header before each
// frame) straight out of the Reader's buffer. pcapgo.Reader, which it
// replaces for files, buffers the stream a second time and copies every
// record into a slice of its own: that was a third of reading a frame.
// Errors are pcapgo's (header errors not capitalised), so that messages
// and the Reader's classification of damaged files (fileError) stay as
// they were.
type pcapFile struct {
	br         *bufio.Reader
	mem        []byte // a chunk (ck), read in place instead of br
	pos        int    // mem: offset of the next record
	magic      uint32 // the file header's first four bytes, little-endian
	bigEndian  bool   // the file's byte order (the magic says)
	nanoFactor uint32
	snaplen    uint32
	linkType   layers.LinkType
	big        []byte // a record longer than the buffer, read whole
	ns         int64  // the last record's time in Unix nanoseconds (Frame.UnixNano)
	digits     uint8  // decimal places of the times: 6 (microsecond magic) or 9 (nanosecond)
	// skipped is how many bytes read stepped over before the record it
	// returned last, a damaged record header (skipWhy) and what followed
	// it up to the next record it could find (resync); 0 for none.
	skipped int64
	skipWhy string
	// passed is how many bytes of file headers read stepped over before
	// the record it returned last (joined), before what it skipped.
	passed int64
	// keptWhy is the file header's damage read past (lenient), until the
	// Reader has told it with the first frame; kept is the span of the
	// header's fields it is in.
	keptWhy string
	kept    [2]int64
	// src is what br reads (the file), which ReadBatch reads into chunks
	// instead (ck, chunks.go): mem is then the current chunk, base the
	// file offset of its first byte. streamed: read as a stream again
	// after chunks (toStream), for good.
	src      io.Reader
	ck       *chunks
	base     int64
	streamed bool
}

// Limits as pcapgo's: a capture length up to maxEager is read into a
// buffer allocated up front; beyond it the buffer grows with the bytes
// actually read, so a damaged length cannot make us allocate 4 GiB.
const (
	// linkGuessLen is how much of the first frame guessLinkType reads.
	linkGuessLen     = 80
	pcapVersionMajor = 2
	pcapVersionMinor = 4
	pcapMaxEager     = 262144
)

// newPcapFile reads the file header from br.
func newPcapFile(br *bufio.Reader) (*pcapFile, error) {
	var hdr [pcapHeaderLen]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, err
	}
	p := &pcapFile{br: br}
	if err := p.header(hdr[:]); err != nil || !SupportedLinkType(p.linkType) {
		first, _ := br.Peek(pcapRecordLen + linkGuessLen)
		if err := p.lenient(err, first); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// settings is a pcapFile of p's file header's settings alone, to read
// its records again (recordAt) once given their bytes (mem, base).
func (p *pcapFile) settings() *pcapFile {
	return &pcapFile{bigEndian: p.bigEndian, nanoFactor: p.nanoFactor, snaplen: p.snaplen, linkType: p.linkType, digits: p.digits}
}

// header reads the file header. Damage a reading can pass where the
// records say what the header meant (lenient) is returned as a
// *headerDamage, the header read as the sound one nearest it: a magic one
// bit off one of pcap's, a version other than 2.4.
func (p *pcapFile) header(hdr []byte) error {
	var dmg headerDamage
	read := binary.LittleEndian.Uint32(hdr[0:4])
	magic, ok := pcapMagic(read)
	if !ok {
		return fmt.Errorf("unknown magic %x", read)
	}
	if magic != read {
		dmg.magic, dmg.wantMagic = read, magic
	}
	switch magic {
	case magicPcapNano:
		p.nanoFactor = 1
	case magicPcapNanoBE:
		p.bigEndian, p.nanoFactor = true, 1
	case magicPcapMicro:
		p.nanoFactor = 1000
	case magicPcapMicroBE:
		p.bigEndian, p.nanoFactor = true, 1000
	}
	p.magic = magic
	p.digits = 9
	if p.nanoFactor == 1000 {
		p.digits = 6
	}
	bo := binary.ByteOrder(binary.LittleEndian)
	if p.bigEndian {
		bo = binary.BigEndian
	}
	p.snaplen = p.u32(hdr[16:20])
	p.linkType = layers.LinkType(p.u32(hdr[20:24]))
	if major, minor := bo.Uint16(hdr[4:6]), bo.Uint16(hdr[6:8]); major != pcapVersionMajor || minor != pcapVersionMinor {
		dmg.badVersion, dmg.version = true, [2]uint16{major, minor}
	}
	if dmg != (headerDamage{}) {
		return &dmg
	}
	return nil
}

// pcapMagic is the pcap magic m is (the file's first four bytes,
// little-endian), or the one it is one bit off: no two of them, nor
// pcapng's, are within two bits of each other, so a flipped bit cannot
// make one of another.
func pcapMagic(m uint32) (uint32, bool) {
	for _, k := range []uint32{magicPcapMicro, magicPcapNano, magicPcapMicroBE, magicPcapNanoBE} {
		if bits.OnesCount32(m^k) <= 1 {
			return k, true
		}
	}
	return 0, false
}

// isPcapMagic: m, a file's first four bytes (little-endian), is a pcap
// file's magic or one bit off one (pcapMagic).
func isPcapMagic(m uint32) bool {
	_, ok := pcapMagic(m)
	return ok
}

// headerDamage is a file header's damage that a reading can pass: what it
// read where it is not what a writer makes (zero where sound).
type headerDamage struct {
	magic, wantMagic uint32 // a magic one bit off wantMagic
	// badVersion: the version read is not 2.4, the only one libpcap has
	// written since 1998 (pcap/pcap.h, PCAP_VERSION_MAJOR and
	// PCAP_VERSION_MINOR).
	badVersion bool
	version    [2]uint16
}

// Error is why the header is refused where a reading cannot pass it.
func (e *headerDamage) Error() string {
	if e.magic != 0 {
		return "magic " + magicBytes(e.magic)
	}
	return fmt.Sprintf("unknown version %d.%d", e.version[0], e.version[1])
}

// magicBytes writes a magic's bytes as the file holds them.
func magicBytes(m uint32) string {
	return fmt.Sprintf("%02x%02x%02x%02x", byte(m), byte(m>>8), byte(m>>16), byte(m>>24))
}

// lenient is the error opening a file whose header read with the error
// err and is followed by first, the bytes after it: nil where the header
// is damaged in what a reading can pass (headerDamage) and the first
// record after it is one (plausible), or where its link type has no
// decoder and the first frame is of one that has (guessLinkType). The
// damage is kept for the first frame (keptWhy), as a flipped bit in what
// no writer varies is read past.
func (p *pcapFile) lenient(err error, first []byte) error {
	var dmg *headerDamage
	if err != nil && !errors.As(err, &dmg) {
		return err
	}
	if len(first) < pcapRecordLen || !p.plausible((*[pcapRecordLen]byte)(first)) {
		return err
	}
	var why []string
	p.kept = [2]int64{pcapHeaderLen, 0}
	field := func(from, to int64, what string) {
		why = append(why, what)
		p.kept = [2]int64{min(p.kept[0], from), max(p.kept[1], to)}
	}
	if dmg != nil && dmg.magic != 0 {
		field(0, 4, fmt.Sprintf("magic %s, one bit off pcap's %s", magicBytes(dmg.magic), magicBytes(dmg.wantMagic)))
	}
	if dmg != nil && dmg.badVersion {
		field(4, 8, fmt.Sprintf("version %d.%d, not 2.4", dmg.version[0], dmg.version[1]))
	}
	if !SupportedLinkType(p.linkType) {
		caplen, wire := int(p.u32(first[8:12])), int(p.u32(first[12:16]))
		data := first[pcapRecordLen:]
		if lt, ok := guessLinkType(p.linkType, data[:min(len(data), caplen)], wire); ok {
			field(20, 24, fmt.Sprintf("link type %d, read as %s (the first frame is)", int(p.linkType), linkTypeName(lt)))
			p.linkType = lt
		}
	}
	p.keptWhy = strings.Join(why, "; ")
	return nil
}

// linkTypeName names a link type a Decoder decodes.
func linkTypeName(lt layers.LinkType) string {
	switch lt {
	case layers.LinkTypeEthernet:
		return "Ethernet"
	case layers.LinkTypeLinuxSLL:
		return "Linux cooked (SLL)"
	case layers.LinkTypeLinuxSLL2:
		return "Linux cooked v2 (SLL2)"
	}
	return "raw IP"
}

// ZeroCopyReadPacketData returns the next record's frame, valid until the
// next call. A file that ends cleanly between records gives io.EOF with a
// zero CaptureInfo; one cut inside a record header io.ErrUnexpectedEOF;
// one cut after a record header io.EOF or io.ErrUnexpectedEOF with the
// header's CaptureInfo (as io.ReadFull would).
func (p *pcapFile) ZeroCopyReadPacketData() (data []byte, ci gopacket.CaptureInfo, err error) {
	data, err = p.read(&ci)
	return data, ci, err
}

// read is ZeroCopyReadPacketData filling the caller's CaptureInfo, which
// the Reader keeps in its Frame: returning it by value costs two copies of
// its 80 bytes per frame. Fields of ci that a pcap record has no value
// for are left as they were.
func (p *pcapFile) read(ci *gopacket.CaptureInfo) (data []byte, err error) {
	if p.mem != nil {
		if p.ck != nil && !p.chunkHolds() && !p.nextChunk() {
			p.toStream()
			return p.read(ci)
		}
		return p.readMem(ci)
	}
	p.skipped, p.passed = 0, 0
	h, err := p.br.Peek(pcapRecordLen)
	if len(h) < pcapRecordLen {
		*ci = gopacket.CaptureInfo{}
		return nil, shortRead(len(h), err)
	}
	if !p.takeHeader((*[pcapRecordLen]byte)(h), ci) {
		hdrErr := p.recordHeader(h, ci)
		if fh, _ := p.br.Peek(pcapHeaderLen); p.joined(fh) {
			// As readMem.
			var hdrs int64
			for p.joined(fh) {
				p.br.Discard(pcapHeaderLen)
				hdrs += pcapHeaderLen
				fh, _ = p.br.Peek(pcapHeaderLen)
			}
			data, err := p.read(ci)
			p.passed = hdrs
			return data, err
		} else if p.joinedCut(fh) {
			*ci = gopacket.CaptureInfo{}
			p.br.Discard(len(fh))
			return nil, io.ErrUnexpectedEOF
		}
		// As readMem, on what the buffer holds.
		w, werr := p.br.Peek(p.br.Size())
		if err := p.damaged(w, werr != nil, hdrErr); err != nil {
			if !p.resyncBuffered() {
				return nil, unread(hdrErr, err, len(w), pcapRecordLen+ci.CaptureLength)
			}
			p.skipWhy = err.Error()
			h, _ = p.br.Peek(pcapRecordLen)
			p.recordHeader(h, ci) // resync checked it
		}
	}
	n := pcapRecordLen + ci.CaptureLength
	if n <= p.br.Size() {
		rec, err := p.br.Peek(n)
		if len(rec) < n {
			return nil, shortRead(len(rec)-pcapRecordLen, err)
		}
		p.br.Discard(n) // only advances: rec stays valid until the next read
		return rec[pcapRecordLen:], nil
	}
	p.br.Discard(pcapRecordLen)
	if ci.CaptureLength <= pcapMaxEager {
		if cap(p.big) < ci.CaptureLength {
			p.big = make([]byte, ci.CaptureLength)
		}
		data = p.big[:ci.CaptureLength]
		_, err = io.ReadFull(p.br, data)
		return data, err
	}
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, p.br, int64(ci.CaptureLength))
	if got < int64(ci.CaptureLength) {
		return nil, shortRead(int(got), err)
	}
	return buf.Bytes(), nil
}

// resyncBuffered is resync on br, from the byte after the damaged header
// at its start: it discards the bytes up to the next record (skipped
// counts them) and reports whether there was one. A chain is looked for
// within br's buffer: a record longer than it is taken on its header and
// the next one's. Where there is none, the input is read to its end.
func (p *pcapFile) resyncBuffered() bool {
	p.br.Discard(1)
	p.skipped = 1
	for {
		b, err := p.br.Peek(p.br.Size())
		whole := err != nil // the input ends with b
		if at, ok := p.resync(b, whole); ok {
			p.br.Discard(at)
			p.skipped += int64(at)
			return true
		}
		if whole || len(b) < pcapRecordLen {
			return false
		}
		// A header may start in the last bytes: they are looked at again.
		n := len(b) - pcapRecordLen + 1
		p.br.Discard(n)
		p.skipped += int64(n)
	}
}

// buffered reports whether the next record is whole in br, so that read
// takes it without reading br's input (a pipe's writer may be quiet).
func (p *pcapFile) buffered() bool {
	if p.mem != nil {
		return true
	}
	n := p.br.Buffered()
	if n < pcapRecordLen {
		return false
	}
	h, _ := p.br.Peek(pcapRecordLen)
	return uint64(n) >= pcapRecordLen+uint64(p.u32(h[8:12]))
}

// recordHeader reads a record header into ci.
func (p *pcapFile) recordHeader(b []byte, ci *gopacket.CaptureInfo) error {
	h := (*[pcapRecordLen]byte)(b) // indexed without bounds checks
	ci.Timestamp, p.ns = p.recordTime(h)
	ci.CaptureLength = int(p.u32(h[8:12]))
	ci.Length = int(p.u32(h[12:16]))
	if ci.CaptureLength > max(int(p.snaplen), pcapMaxEager) {
		return fmt.Errorf("capture length exceeds snap length: %d > %d", ci.CaptureLength, p.snaplen)
	}
	// A captured length above the original one cannot be right, but the
	// captured bytes are there to read: the Reader flags the frame
	// (Frame.RecordErr) and goes on, as tshark reads such records.
	return nil
}

// recordAt reads again the record at file offset off of a chunk (its
// first byte at file offset base), one read (readMem) has read whole: ci
// as read sets it (the rest of ci zeroed), its frame and the time in Unix
// nanoseconds. It reads only the chunk and the file header's settings, so
// decoders on other goroutines may call it while read goes on.
func (p *pcapFile) recordAt(off int64, ci *gopacket.CaptureInfo) ([]byte, int64) {
	data := p.recordAtUntimed(off, ci)
	var ns int64
	off -= p.base
	ci.Timestamp, ns = p.recordTime((*[pcapRecordLen]byte)(p.mem[off : off+pcapRecordLen]))
	return data, ns
}

// recordAtUntimed is recordAt without the time: ci.Timestamp is zero.
func (p *pcapFile) recordAtUntimed(off int64, ci *gopacket.CaptureInfo) []byte {
	off -= p.base
	h := (*[pcapRecordLen]byte)(p.mem[off : off+pcapRecordLen])
	// Field by field: a composite literal is built on the stack and
	// copied whole, a wide load of narrower stores the CPU cannot forward
	// (a tenth of a -j 2 worker's time per frame).
	ci.Timestamp = time.Time{}
	ci.CaptureLength = int(p.u32(h[8:12]))
	ci.Length = int(p.u32(h[12:16]))
	ci.InterfaceIndex = 0
	if ci.AncillaryData != nil {
		ci.AncillaryData = nil
	}
	start := int(off) + pcapRecordLen
	end := start + ci.CaptureLength
	return p.mem[start:end:end]
}

// recordTime is the time of record header h, and what its UnixNano gives
// (time.Unix only moves whole seconds from the fraction to the seconds)
// for a multiply and an add. The fraction is multiplied in 32 bits, as
// pcapgo does, so that a damaged microsecond field gives the same time.
func (p *pcapFile) recordTime(h *[pcapRecordLen]byte) (time.Time, int64) {
	sec, frac := int64(p.u32(h[0:4])), int64(p.u32(h[4:8])*p.nanoFactor)
	return time.Unix(sec, frac).UTC(), sec*1e9 + frac
}

// u32 reads a number of the file's byte order; a direct call, where the
// binary.ByteOrder interface cost four calls per record.
func (p *pcapFile) u32(b []byte) uint32 {
	if p.bigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// readMem is read on a chunk: the record's frame is a slice of it.
// Results and errors are those of read on the same bytes.
func (p *pcapFile) readMem(ci *gopacket.CaptureInfo) ([]byte, error) {
	rest := p.mem[p.pos:]
	if len(rest) < pcapRecordLen {
		*ci = gopacket.CaptureInfo{}
		return nil, shortRead(len(rest), io.EOF)
	}
	p.skipped, p.passed = 0, 0
	ok := p.takeHeader((*[pcapRecordLen]byte)(rest), ci)
	n := pcapRecordLen + ci.CaptureLength
	if !ok || len(rest) < n {
		hdrErr := p.recordHeader(rest[:pcapRecordLen], ci)
		n = pcapRecordLen + ci.CaptureLength
		if p.joined(rest) {
			// Read on after the file headers: the next record is read
			// as the first of a file is (a header no record has is
			// damage, and no file header).
			var hdrs int64
			for p.joined(p.mem[p.pos:]) {
				p.pos += pcapHeaderLen
				hdrs += pcapHeaderLen
			}
			data, err := p.readMem(ci)
			p.passed = hdrs
			return data, err
		}
		if p.joinedCut(rest) {
			*ci = gopacket.CaptureInfo{}
			p.pos = len(p.mem)
			return nil, io.ErrUnexpectedEOF
		}
		at, ok := 0, false
		err := p.damaged(rest, true, hdrErr)
		if err != nil {
			// Read on from the next record after the damage, if there
			// is one.
			at, ok = p.resync(rest[1:], true)
		}
		if !ok {
			if err = unread(hdrErr, err, len(rest), n); err != nil {
				if hdrErr == nil && len(rest) < n {
					p.pos = len(p.mem)
				}
				return nil, err
			}
		} else {
			p.skipped, p.skipWhy = int64(1+at), err.Error()
			p.pos += 1 + at
			rest = p.mem[p.pos:]
			p.recordHeader(rest[:pcapRecordLen], ci) // resync checked it
			n = pcapRecordLen + ci.CaptureLength
		}
	}
	p.pos += n
	return rest[pcapRecordLen:n:n], nil
}

// joined reports whether b begins with the file header of a pcap file of
// this one's kind (byte order, time resolution, version and link type)
// where a record was to be: files joined end to end (cat a.pcap b.pcap),
// whose records go on after it. No record header is one: its captured
// length would be 0 (the header's time zone).
func (p *pcapFile) joined(b []byte) bool {
	if len(b) < pcapHeaderLen {
		return false
	}
	var q pcapFile
	return q.header(b[:pcapHeaderLen]) == nil && q.bigEndian == p.bigEndian && q.nanoFactor == p.nanoFactor && q.linkType == p.linkType
}

// joinedCut reports whether b, the file's last bytes, is the start of a
// file header joined would take (its magic): the file ends inside it.
func (p *pcapFile) joinedCut(b []byte) bool {
	return len(b) >= 4 && len(b) < pcapHeaderLen && binary.LittleEndian.Uint32(b) == p.magic
}

// unread is the error of a record read found no record after: its
// header's own (a captured length no record has), the file's end inside
// it (have bytes of its n), or err, why it is damage; nil for a record to
// read.
func unread(hdrErr, err error, have, n int) error {
	switch {
	case hdrErr != nil:
		return hdrErr
	case have < n:
		return shortRead(have-pcapRecordLen, io.EOF)
	}
	return err
}

// damaged says whether the record header at the start of b, which
// recordHeader read with the error err, is damage to read past, and why:
// err itself (a captured length no record has); a header plausible turns
// down whose record runs past the end of b, which is the file's end
// (whole); or one after which records do not go on (chain), its captured
// length off, which read would go astray after. nil for a record to read:
// a plausible header (one the file's end cuts is the last record of a file
// cut short), or one whose damaged time or original length spoils only its
// own frame, records going on after it.
func (p *pcapFile) damaged(b []byte, whole bool, err error) error {
	if err != nil {
		return err
	}
	h := (*[pcapRecordLen]byte)(b)
	n := pcapRecordLen + int(p.u32(h[8:12]))
	switch {
	case p.plausible(h):
	case len(b) < n && whole:
		return fmt.Errorf("%s, and the file ends inside the record", p.implausible(h))
	case len(b) < n:
		// Longer than what can be looked at: read says.
	case !p.chain(b[n:], whole):
		return fmt.Errorf("%s, and no record follows where it ends", p.implausible(h))
	}
	return nil
}

// implausible says what in header h plausible turns down.
func (p *pcapFile) implausible(h *[pcapRecordLen]byte) string {
	caplen, length, frac := p.u32(h[8:12]), p.u32(h[12:16]), p.u32(h[4:8])
	var what string
	switch {
	case caplen == 0:
		what = "captured length 0"
	case caplen > length:
		what = fmt.Sprintf("captured length %d above the original length %d", caplen, length)
	case length >= 1<<24:
		what = fmt.Sprintf("original length %d", length)
	default:
		what = fmt.Sprintf("a fraction of a second of %d (%d per second)", frac, 1e9/p.nanoFactor)
	}
	return what
}

// resyncChain is how many records in a row resync wants to see before it
// takes a place for a record's start: one damaged header's bytes, or a
// frame's, pass for one now and then; three in a row, each where the one
// before ends, with times that follow, do not.
const resyncChain = 3

// resync finds in b, the bytes after a damaged record header, where the
// next record starts: the first offset from which records follow each
// other (chain) from a plausible header. It reports false where there is
// none.
func (p *pcapFile) resync(b []byte, whole bool) (int, bool) {
	for at := 0; at+pcapRecordLen <= len(b); at++ {
		if p.plausible((*[pcapRecordLen]byte)(b[at:])) && p.chain(b[at:], whole) {
			return at, true
		}
	}
	return 0, false
}

// chain reports whether b starts with resyncChain records, each starting
// where the one before ends, with a captured length read takes and a time
// from a second before the one before to a day after it, or with fewer up
// to the end of b, which is the file's end when whole (else more of the
// file follows b, and a chain b cuts is taken from its second header on).
// It holds the headers' other fields to nothing: one of several records
// close together may be damaged.
func (p *pcapFile) chain(b []byte, whole bool) bool {
	var prev int64
	for k := 0; k < resyncChain; k++ {
		if len(b) == 0 && whole {
			return true // the last record ended at the file's end
		}
		if len(b) < pcapRecordLen {
			return k > 1 && !whole
		}
		h := (*[pcapRecordLen]byte)(b)
		sec, caplen := int64(p.u32(h[0:4])), p.u32(h[8:12])
		if caplen == 0 || caplen > max(p.snaplen, pcapMaxEager) || k > 0 && (sec < prev-1 || sec > prev+86400) {
			return false
		}
		prev = sec
		n := pcapRecordLen + int(caplen)
		if len(b) < n {
			// The file ends inside the record (a cut file), or b does.
			return k > 0
		}
		b = b[n:]
	}
	return true
}

// plausible reports whether h can be a record header of this file: a
// captured length from 1 byte to the snap length (or pcapMaxEager), not
// above the original length, which is below 16 MiB, and a fraction of a
// second below a second. Read itself takes any header whose captured
// length fits and after which records go on (a damaged time or original
// length spoils one frame); a record searched for after damage must look
// like one.
func (p *pcapFile) plausible(h *[pcapRecordLen]byte) bool {
	return p.plausibleOf(p.u32(h[8:12]), p.u32(h[12:16]), p.u32(h[4:8]))
}

// plausibleOf is plausible on a header's captured and original lengths
// and its fraction of a second.
func (p *pcapFile) plausibleOf(caplen, length, frac uint32) bool {
	return caplen-1 < max(p.snaplen, pcapMaxEager) && caplen <= length && length < 1<<24 &&
		uint64(frac)*uint64(p.nanoFactor) < 1e9
}

// takeHeader is recordHeader and plausible at once, each field read
// once, for the records read one after the other: it fills ci from h
// (as recordHeader does where it reports true) and reports whether h is
// plausible. Its time is recordTime's for a plausible fraction, computed
// from the fields at hand: recordTime reading them again costs 3-5 % of
// -T fields.
func (p *pcapFile) takeHeader(h *[pcapRecordLen]byte, ci *gopacket.CaptureInfo) bool {
	sec, frac := p.u32(h[0:4]), p.u32(h[4:8])
	caplen, length := p.u32(h[8:12]), p.u32(h[12:16])
	if !p.plausibleOf(caplen, length, frac) {
		return false
	}
	ns := int64(frac * p.nanoFactor) // below 1e9: plausible
	ci.Timestamp, p.ns = time.Unix(int64(sec), ns).UTC(), int64(sec)*1e9+ns
	ci.CaptureLength, ci.Length = int(caplen), int(length)
	return true
}

// wholeRecord is the record at the start of rest if its header is
// plausible and rest holds it whole, as read takes it from a buffer: its
// header, its frame and the frame's original length.
func (p *pcapFile) wholeRecord(rest []byte) (h *[pcapRecordLen]byte, data []byte, length int, ok bool) {
	if len(rest) < pcapRecordLen {
		return nil, nil, 0, false
	}
	h = (*[pcapRecordLen]byte)(rest)
	caplen, wire := p.u32(h[8:12]), p.u32(h[12:16])
	if !p.plausibleOf(caplen, wire, p.u32(h[4:8])) || uint64(len(rest)-pcapRecordLen) < uint64(caplen) {
		return nil, nil, 0, false
	}
	n := pcapRecordLen + int(caplen)
	return h, rest[pcapRecordLen:n:n], int(wire), true
}

// shortRead is io.ReadFull's error for a read that got n bytes of more
// wanted, err being the reader's.
func shortRead(n int, err error) error {
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		return err
	case n == 0:
		return io.EOF
	}
	return io.ErrUnexpectedEOF
}

// LinkType is the file header's link type.
func (p *pcapFile) LinkType() layers.LinkType { return p.linkType }
