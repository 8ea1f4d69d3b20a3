package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/internal/testutil"
)

// ngWrite writes frames as pcapng, one interface of link type lt and
// timestamp resolution 10^-res (res < 0: 2^res): with res 9 by pcapgo's
// writer, as dumpcap and smcdump -w write it (it knows no other
// resolution), else by testutil.Pcapng.
func ngWrite(t testing.TB, frames []rawFrame, lt layers.LinkType, res int) []byte {
	t.Helper()
	switch {
	case res < 0:
		return testutil.Pcapng(lt, uint8(0x80|-res), frames)
	case res != 9:
		return testutil.Pcapng(lt, uint8(res), frames)
	}
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = lt
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, intf, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WritePacket(f.CI, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ngBlock is one block of a pcapng file, found by walking it by hand
// (independently of the code under test; little-endian files only).
type ngBlock struct {
	off, len int
	typ      uint32
}

func ngBlocksOf(t testing.TB, b []byte) []ngBlock {
	t.Helper()
	var out []ngBlock
	for off := 0; off+8 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		out = append(out, ngBlock{off, n, binary.LittleEndian.Uint32(b[off:])})
		off += n
	}
	return out
}

// TestNgFileAsPcapgo: the pcapng reader that replaced pcapgo's returns
// the frames pcapgo returns, byte for byte with their lengths, interfaces
// and times, on every bundled capture rewritten as pcapng at decimal
// resolutions (pcapgo's binary conversion rounds its scale, so binary
// ones are checked against exact arithmetic in TestNgBinaryResolution),
// and ends where pcapgo ends on every cut of the first blocks: cleanly
// between blocks, with a truncation inside one.
func TestNgFileAsPcapgo(t *testing.T) {
	var files [][]byte
	for i, path := range append(testutil.Samples(t), testutil.References(t)...) {
		frames, lt := testutil.ReadFrames(t, path)
		files = append(files, ngWrite(t, frames, lt, []int{6, 9, 3}[i%3]))
	}
	first := files[0]
	for cut := 4; cut < 1200; cut++ {
		files = append(files, first[:cut])
	}
	for i, b := range files {
		var want, got strings.Builder
		nr, err := pcapgo.NewNgReader(bytes.NewReader(b), pcapgo.NgReaderOptions{WantMixedLinkType: true})
		if err != nil {
			fmt.Fprintf(&want, "header: %v\n", errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF))
		} else {
			for {
				data, ci, err := nr.ReadPacketData()
				if err != nil {
					fmt.Fprintf(&want, "end: clean %v\n", err == io.EOF)
					break
				}
				fmt.Fprintf(&want, "%v %d %d %d %v %x\n", ci.Timestamp, ci.CaptureLength, ci.Length, ci.InterfaceIndex, ci.AncillaryData[0], data)
			}
		}
		r, err := NewFileReader("x.pcapng", bytes.NewReader(b))
		if err != nil {
			fmt.Fprintf(&got, "header: %v\n", errors.Is(err, ErrTruncatedFile))
		} else {
			for {
				f, err := r.Next()
				if err != nil {
					fmt.Fprintf(&got, "end: clean %v\n", err == io.EOF)
					if err != io.EOF && !errors.Is(err, ErrTruncatedFile) {
						t.Errorf("input %d: %v, want a truncation", i, err)
					}
					break
				}
				fmt.Fprintf(&got, "%v %d %d %d %v %x\n", f.CI.Timestamp, f.CI.CaptureLength, f.CI.Length, f.CI.InterfaceIndex, f.LinkType, f.Data)
			}
		}
		if got.String() != want.String() {
			t.Fatalf("input %d (%d bytes): ngFile read\n%.2000s\npcapgo read\n%.2000s", i, len(b), got.String(), want.String())
		}
	}
}

// TestNgBinaryResolution: times of an interface whose if_tsresol is a
// power of two are converted exactly (truncated to whole nanoseconds);
// pcapgo scaled them by a rounded 1e9/2^n.
func TestNgBinaryResolution(t *testing.T) {
	for _, tc := range []struct {
		exp uint8
		ts  uint64
		ns  int64
	}{
		{10, 5<<10 | 1, 5e9 + 976562},        // 1/1024 s = 976562.5 ns
		{20, 7<<20 | 1<<19, 7e9 + 500000000}, // half a second
		{30, 1<<30 - 1, 999999999},           // 1 - 2^-30 s = 999999999.07 ns
		{63, 1 << 62, 500000000},
		{0, 42, 42e9},
	} {
		ifc := ngIface{binary: true, exp: tc.exp}
		if got := ifc.time(tc.ts); got != tc.ns {
			t.Errorf("2^-%d, ts %#x: %d ns, want %d", tc.exp, tc.ts, got, tc.ns)
		}
	}
	dec := ngIface{exp: 12, perSec: 1e12, offset: -10}
	if got := dec.time(12_123456789123); got != 2_123456789 {
		t.Errorf("10^-12 with if_tsoffset -10: %d", got)
	}
	// Decimal resolutions to nanoseconds by one multiply (mul): the
	// same times as by seconds and fraction, offsets and timestamps no
	// clock makes (their 64-bit arithmetic wraps alike) included.
	for exp, perSec := uint8(0), uint64(1); exp <= 9; exp, perSec = exp+1, perSec*10 {
		for _, ts := range []uint64{0, 1, perSec - 1, 1795330658_775685 * perSec / 1e6, 1<<63 + 12345, ^uint64(0)} {
			for _, off := range []int64{0, -10, 1 << 40, -1 << 62} {
				slow := ngIface{exp: exp, perSec: perSec, offset: off}
				fast := slow
				fast.mul = 1e9 / perSec
				if a, b := fast.time(ts), slow.time(ts); a != b {
					t.Errorf("10^-%d, ts %d, offset %d: %d by mul, %d by division", exp, ts, off, a, b)
				}
			}
		}
	}
}

// TestPcapngDamage: every read error of a damaged pcapng file names the
// file, the frame that could not be read and the file offset of the block
// at fault, and says what is wrong with it (its length, its trailing
// length, its type, a field beyond the block); a packet block whose
// original length is below its captured length is flagged and read. The
// file is the first 12 frames of pingpong.pcap as pcapgo writes pcapng
// (section header, interface description, then one enhanced packet block
// per frame); a second interface description block is spliced in before
// frame 9 for the damage to a block that carries no frame. pcapgo's reader
// called most of these "truncated record", at the next packet block read
// ahead or at no offset at all.
func TestPcapngDamage(t *testing.T) {
	frames := readRaw(t, pingpong)[:12]
	clean := ngWrite(t, frames, layers.LinkTypeEthernet, 9)
	blocks := ngBlocksOf(t, clean)
	if len(blocks) != 14 || blocks[0].typ != ngBlockSHB || blocks[1].typ != ngBlockIDB {
		t.Fatalf("unexpected layout %+v", blocks)
	}
	epb := func(n int) ngBlock { return blocks[n+1] } // frame n's block
	// A copy with a second interface description block before frame 9.
	idb := clean[blocks[1].off : blocks[1].off+blocks[1].len]
	withIDB := append(append(bytes.Clone(clean[:epb(9).off]), idb...), clean[epb(9).off:]...)
	idb2 := epb(9).off
	// A copy with an interface statistics block at its end (as dumpcap
	// ends a file): interface 0, no time, no options.
	withISB := bytes.Clone(clean)
	for _, v := range []uint32{ngBlockISB, 24, 0, 0, 0, 24} {
		withISB = binary.LittleEndian.AppendUint32(withISB, v)
	}
	put := func(b []byte, off int, v uint32) { binary.LittleEndian.PutUint32(b[off:], v) }
	name := "ng.pcapng"
	at := func(frame, off int) string { return fmt.Sprintf("%s: frame %d (file offset %#x): ", name, frame, off) }

	// Damage a block's framing or packet fields show is read past: the
	// next block is found, and the frame after it flagged; the file's
	// error (Reader.Damage) names the place. frame is the damaged block's
	// (the next frame gets its number), off where it starts, next where
	// the next block starts.
	past := func(name string, base []byte, damage func(b []byte), frame, off, next int, what string, good int) ngDamageCase {
		return ngDamageCase{name: name, base: base, damage: damage, good: good, is: ErrCorruptRecord,
			err:     at(frame, off) + fmt.Sprintf("corrupt record: %s; read on from the next record, %d bytes later (frame %d)", what, next-off, frame),
			flagged: map[int]string{frame: fmt.Sprintf("frame %d (file offset %#x): record: %d bytes skipped before it: the record at file offset %#x is damaged (%s)", frame, next, next-off, off, what)}}
	}
	// A packet block read all the same, its damage told with its frame.
	keptPacket := func(name string, base []byte, damage func(b []byte), frame, off int, what string) ngDamageCase {
		return ngDamageCase{name: name, base: base, damage: damage, good: 12, is: ErrCorruptRecord,
			err:     at(frame, off) + "corrupt record: " + what + "; read all the same, no frame missing",
			flagged: map[int]string{frame: fmt.Sprintf("frame %d (file offset %#x): record: the block before it at file offset %#x is damaged (%s), read all the same: no frame missing", frame, off, off, what)}}
	}
	// Damage to a block that carries no frame, read all the same (an
	// interface kept with an option's default): no frame missing.
	kept := func(name string, damage func(b []byte), what string) ngDamageCase {
		next := idb2 + len(idb)
		return ngDamageCase{name: name, base: withIDB, damage: damage, good: 12, is: ErrCorruptRecord,
			err:     at(9, idb2) + "corrupt record: " + what + "; read all the same, no frame missing",
			flagged: map[int]string{9: fmt.Sprintf("frame 9 (file offset %#x): record: the block before it at file offset %#x is damaged (%s), read all the same: no frame missing", next, idb2, what)}}
	}
	// A section header block of 24 bytes: type, length, byte-order
	// magic, version 1.0, then its trailing length where its section
	// length would begin.
	shortSHB := binary.LittleEndian.AppendUint32(nil, ngBlockSHB)
	for _, v := range []uint32{24, ngByteOrder, 1, 0, 24} {
		shortSHB = binary.LittleEndian.AppendUint32(shortSHB, v)
	}
	var shbLengthOf func(name string, base []byte, shb, good int, length uint32, what string) ngDamageCase
	versionFlipped := "section header block: version 32769.0, which no pcapng writer makes; the blocks after it hold together as version 1.0's and are read as such"
	// A section header at shb of base damaged, the frames of its section
	// from frame (the one after shb) read all the same.
	shbOrder := func(name string, base []byte, shb, good int) ngDamageCase {
		what := "section header block: byte-order magic 04030201 is neither 1a2b3c4d nor 4d3c2b1a; read little-endian, the order its block lengths and version agree in"
		frame := good - 11
		return ngDamageCase{name: name, base: base, damage: func(b []byte) { put(b, shb+8, 0x01020304) }, good: good, is: ErrCorruptRecord,
			err:     at(frame, shb) + "corrupt record: " + what + "; read all the same, no frame missing",
			flagged: map[int]string{frame: fmt.Sprintf("frame %d (file offset %#x): record: the block before it at file offset %#x is damaged (%s), read all the same: no frame missing", frame, shb+epb(1).off, shb, what)}}
	}
	shbLength := func(name string, base []byte, shb, good int) ngDamageCase {
		return shbLengthOf(name, base, shb, good, 30, "section header block: block length 30 is not a multiple of 4")
	}
	shbLengthOf = func(name string, base []byte, shb, good int, length uint32, what string) ngDamageCase {
		frame, n := good-11, blocks[0].len
		return ngDamageCase{name: name, base: base, damage: func(b []byte) { put(b, shb+4, length) }, good: good, is: ErrCorruptRecord,
			err:     at(frame, shb) + fmt.Sprintf("corrupt record: %s; read on from the next record, %d bytes later (frame %d)", what, n, frame),
			flagged: map[int]string{frame: fmt.Sprintf("frame %d (file offset %#x): record: %d bytes skipped before it: the record at file offset %#x is damaged (%s)", frame, shb+epb(1).off, n, shb, what)}}
	}
	// A copy long enough that a block length beyond the stream's buffer
	// still ends inside it: what a chunk can check, a stream cannot.
	long, frames0 := bytes.Clone(clean), 12
	for len(long) < epb(5).off+epb(5).len+1<<18+4096 {
		long, frames0 = append(long, clean[epb(1).off:]...), frames0+12
	}
	tests := []ngDamageCase{
		past("length not a multiple of 4", nil, func(b []byte) { put(b, epb(3).off+4, uint32(epb(3).len+2)) }, 3, epb(3).off, epb(4).off,
			fmt.Sprintf("enhanced packet block: block length %d is not a multiple of 4", epb(3).len+2), 11),
		past("length below the framing", nil, func(b []byte) { put(b, epb(5).off+4, 8) }, 5, epb(5).off, epb(6).off,
			"enhanced packet block: block length 8 is below the 12 bytes of a block's framing", 11),
		past("length beyond any block", nil, func(b []byte) { put(b, epb(5).off+4, 0xfffffff0) }, 5, epb(5).off, epb(6).off,
			"enhanced packet block: block length 4294967280 is beyond any block (16 MiB)", 11),
		past("length beyond the buffer", nil, func(b []byte) { put(b, epb(5).off+4, uint32(epb(5).len+1<<18)) }, 5, epb(5).off, epb(6).off,
			fmt.Sprintf("enhanced packet block: block length %d is beyond its packet of %d bytes and any options", epb(5).len+1<<18, binary.LittleEndian.Uint32(clean[epb(5).off+20:])), 11),
		past("length beyond the buffer, in a longer file", long, func(b []byte) { put(b, epb(5).off+4, uint32(epb(5).len+1<<18)) }, 5, epb(5).off, epb(6).off,
			fmt.Sprintf("enhanced packet block: block length %d is beyond its packet of %d bytes and any options", epb(5).len+1<<18, binary.LittleEndian.Uint32(clean[epb(5).off+20:])), frames0-1),
		past("trailing length differs", nil, func(b []byte) { put(b, epb(6).off+epb(6).len-4, 4) }, 6, epb(6).off, epb(7).off,
			fmt.Sprintf("enhanced packet block: trailing block length 4 differs from the leading %d", epb(6).len), 11),
		past("leading length too short", nil, func(b []byte) { put(b, epb(6).off+4, 64) }, 6, epb(6).off, epb(7).off,
			fmt.Sprintf("enhanced packet block: trailing block length %d differs from the leading 64", binary.LittleEndian.Uint32(clean[epb(6).off+60:])), 11),
		past("captured length beyond the block", nil, func(b []byte) { put(b, epb(7).off+20, 4000) }, 7, epb(7).off, epb(8).off,
			fmt.Sprintf("enhanced packet block: captured length 4000 exceeds the %d bytes of packet data the block holds", epb(7).len-32), 11),
		keptPacket("interface not described", nil, func(b []byte) { put(b, epb(4).off+8, 3) }, 4, epb(4).off,
			"enhanced packet block: interface 3, which the section does not describe: read as interface 0 (Ethernet), the one it is a damaged number of"),
		// Of two interfaces, 6 is one bit off neither: passed.
		past("interface not described, of two", withIDB, func(b []byte) { put(b, epb(10).off+len(idb)+8, 6) }, 10, epb(10).off+len(idb), epb(11).off+len(idb),
			"enhanced packet block: interface 6, but the section describes 2", 11),
		keptPacket("interface one bit off, of two", withIDB, func(b []byte) { put(b, epb(10).off+len(idb)+8, 3) }, 10, epb(10).off+len(idb),
			"enhanced packet block: interface 3, which the section does not describe: read as interface 1 (Ethernet), the one it is a damaged number of"),
		past("block type 0", nil, func(b []byte) { put(b, epb(10).off, 0) }, 10, epb(10).off, epb(11).off,
			"block of type 0x0: block type 0 is reserved: damaged or not pcapng from here", 11),
		// A block that carries no frame: no frame is missing.
		past("interface block length", withIDB, func(b []byte) { put(b, idb2+4, 13) }, 9, idb2, idb2+len(idb),
			"interface description block: block length 13 is not a multiple of 4", 12),
		past("interface block trailer", withIDB, func(b []byte) { put(b, idb2+len(idb)-4, 99) }, 9, idb2, idb2+len(idb),
			fmt.Sprintf("interface description block: trailing block length 99 differs from the leading %d", len(idb)), 12),
		// The last packet block damaged, statistics after it: read past
		// to the end, no frame lost to the numbering.
		{name: "last packet block", base: withISB, damage: func(b []byte) { put(b, epb(12).off+4, 0x7ffffff0) }, good: 11,
			err: at(12, epb(12).off) + fmt.Sprintf("corrupt record: enhanced packet block: block length 2147483632 is beyond any block (16 MiB); read on %d bytes to the file's end, no frame after it", epb(12).len), is: ErrCorruptRecord},
		// A version to come (2 to 9) whose blocks hold together as
		// 1.0's is a flipped bit of 1 as surely: read as 1.0, the
		// damage told (tshark stops).
		{name: "section version", base: slices.Concat(clean, clean, clean), damage: func(b []byte) { put(b, len(clean)+12, 3) }, good: 36, is: ErrCorruptRecord,
			err:     at(13, len(clean)) + "corrupt record: " + strings.Replace(versionFlipped, "32769", "3", 1) + "; read all the same, no frame missing",
			flagged: map[int]string{13: fmt.Sprintf("frame 13 (file offset %#x): record: the block before it at file offset %#x is damaged (%s), read all the same: no frame missing", len(clean)+epb(1).off, len(clean), strings.Replace(versionFlipped, "32769", "3", 1))}},
		// One whose blocks are not (its interface block's trailer
		// damaged too) is passed over, not silently (its packets are
		// missing); the last section's to the file's end.
		{name: "section version, its blocks not 1.0's", base: slices.Concat(clean, clean, clean), damage: func(b []byte) {
			put(b, len(clean)+12, 3)
			put(b, len(clean)+blocks[1].off+blocks[1].len-4, 99)
		}, good: 24, is: ErrCorruptRecord,
			err: at(13, len(clean)) + fmt.Sprintf("corrupt record: section header block: version 3.0, which this reader cannot read: the section passed over up to the next one; read on from the next record, %d bytes later (frame 13)", len(clean)),
			// Frame 13 is the third section's first, after its header
			// and interface blocks.
			flagged: map[int]string{13: fmt.Sprintf("frame 13 (file offset %#x): record: %d bytes skipped before it: the record at file offset %#x is damaged (section header block: version 3.0, which this reader cannot read: the section passed over up to the next one)", 2*len(clean)+epb(1).off, len(clean), len(clean))}},
		{name: "last section's version", base: slices.Concat(clean, clean), damage: func(b []byte) {
			put(b, len(clean)+12, 3)
			put(b, len(clean)+blocks[1].off+blocks[1].len-4, 99)
		}, good: 12, is: ErrCorruptRecord,
			err: at(13, len(clean)) + fmt.Sprintf("corrupt record: section header block: version 3.0, which this reader cannot read: the section passed over up to the next one; read on %d bytes to the file's end, no frame after it", len(clean))},
		// A major version no writer makes (a flipped bit, 0x8001) whose
		// blocks hold together as version 1.0's: read as 1.0, damage read
		// all the same (tshark stops).
		{name: "section version flipped", base: slices.Concat(clean, clean, clean), damage: func(b []byte) { put(b, len(clean)+12, 0x8001) }, good: 36, is: ErrCorruptRecord,
			err:     at(13, len(clean)) + "corrupt record: " + versionFlipped + "; read all the same, no frame missing",
			flagged: map[int]string{13: fmt.Sprintf("frame 13 (file offset %#x): record: the block before it at file offset %#x is damaged (%s), read all the same: no frame missing", len(clean)+epb(1).off, len(clean), versionFlipped)}},
		// Its blocks not 1.0's (its interface block's trailer damaged
		// too): passed over.
		{name: "section version flipped, its blocks not 1.0's", base: slices.Concat(clean, clean, clean), damage: func(b []byte) {
			put(b, len(clean)+12, 0x8001)
			put(b, len(clean)+blocks[1].off+blocks[1].len-4, 99)
		}, good: 24, is: ErrCorruptRecord,
			err:     at(13, len(clean)) + fmt.Sprintf("corrupt record: section header block: version 32769.0, which this reader cannot read: the section passed over up to the next one; read on from the next record, %d bytes later (frame 13)", len(clean)),
			flagged: map[int]string{13: fmt.Sprintf("frame 13 (file offset %#x): record: %d bytes skipped before it: the record at file offset %#x is damaged (section header block: version 32769.0, which this reader cannot read: the section passed over up to the next one)", 2*len(clean)+epb(1).off, len(clean), len(clean))}},
		// An option that cannot be read: the interface kept with the
		// option's default, as tshark reads it; damage all the same.
		kept("interface block option", func(b []byte) { put(b, idb2+16, 9|200<<16) },
			"interface description block: option 9 at block offset 16: 200 bytes run past the block; the options from there not read"),
		// pcapgo writes if_name and if_os before if_tsresol (at 40).
		kept("interface resolution length", func(b []byte) { put(b, idb2+40, 9|2<<16) },
			"interface description block: if_tsresol of 2 bytes (want 1); times read in microseconds"),
		kept("interface resolution beyond 64 bits", func(b []byte) { put(b, idb2+44, 0x7f) },
			"interface description block: if_tsresol 0x7f: units beyond what a 64-bit timestamp can count; times read in microseconds"),
		// A block kept, then a packet block read past: the span told from
		// the bytes skipped, the block kept named after.
		past("interface kept, then a packet block damaged", withIDB, func(b []byte) {
			put(b, idb2+44, 0x7f)
			put(b, idb2+len(idb)+4, uint32(epb(9).len+2))
		}, 9, idb2+len(idb), idb2+len(idb)+epb(9).len,
			fmt.Sprintf("enhanced packet block: block length %d is not a multiple of 4; before it, at file offset %#x, interface description block: if_tsresol 0x7f: units beyond what a 64-bit timestamp can count; times read in microseconds, read all the same", epb(9).len+2, idb2), 11),
		{name: "cut in a block header", base: clean[:epb(8).off+5], good: 7,
			err: at(8, epb(8).off) + "truncated record: the file ends inside it (block header cut after 5 of 8 bytes)", is: ErrTruncatedFile},
		{name: "cut in a block", base: clean[:epb(8).off+50], good: 7,
			err: at(8, epb(8).off) + fmt.Sprintf("truncated record: the file ends inside it (enhanced packet block of %d bytes, 50 present)", epb(8).len), is: ErrTruncatedFile},
		// A section header's byte-order magic damaged: its lengths and
		// version tell the order (tshark stops); its length damaged, its
		// byte order known: read past to its interfaces. In the first
		// section and in a later one.
		shbOrder("byte-order magic", clean, 0, 12),
		shbOrder("second section's byte-order magic", slices.Concat(clean, clean), len(clean), 24),
		shbLength("section header length", clean, 0, 12),
		shbLength("second section's header length", slices.Concat(clean, clean), len(clean), 24),
		// A length beyond what a section header holds, or running past the
		// file's end with blocks after its start: damage read past, as
		// above (a file that ends inside a section header is cut, below).
		shbLengthOf("section header length beyond any", clean, 0, 12, 1<<21, "section header block: block length 2097152 is beyond any section header block (64 KiB)"),
		shbLengthOf("section header length past the end", clean, 0, 12, 1<<15, fmt.Sprintf("section header block: block length 32768 runs past the file's end, %d bytes on", len(clean))),
		// A section header too short for its fields (24 bytes, its
		// lengths agreeing): the section starts all the same, its blocks
		// read as 1.0's.
		{name: "section header too short", base: slices.Concat(clean, shortSHB, clean[blocks[1].off:]), good: 24, is: ErrCorruptRecord,
			err: at(13, len(clean)) + "corrupt record: section header block: 24 bytes, below the 28 of its fields; its blocks read as version 1.0's; read all the same, no frame missing",
			flagged: map[int]string{13: fmt.Sprintf("frame 13 (file offset %#x): record: the block before it at file offset %#x is damaged (section header block: 24 bytes, below the 28 of its fields; its blocks read as version 1.0's), read all the same: no frame missing",
				len(clean)+24+epb(1).off-blocks[1].off, len(clean))}},
		{name: "byte-order magic and section header length", damage: func(b []byte) { put(b, 8, 0x01020304); put(b, 4, 30) },
			err: name + ": file offset 0x0: not a capture file (section header block: byte-order magic 04030201 is neither 1a2b3c4d nor 4d3c2b1a)", is: ErrNotCapture},
		{name: "second section's header cut", base: slices.Concat(clean, clean[:40]), good: 12,
			err: at(13, len(clean)) + fmt.Sprintf("truncated record: the file ends inside it (section header block of %d bytes, 40 present)", blocks[0].len), is: ErrTruncatedFile},
		{name: "section header cut", base: clean[:20],
			err: name + fmt.Sprintf(": file offset 0x0: truncated file header (section header block of %d bytes, 20 present)", blocks[0].len), is: ErrTruncatedFile},
		{name: "original below captured", damage: func(b []byte) { put(b, epb(2).off+24, 10) }, good: 12,
			flagged: map[int]string{2: fmt.Sprintf("frame 2 (file offset %#x): record: original length 10 is below the captured length 42 (decoded as captured)", epb(2).off)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(clean)
			if tt.base != nil {
				b = bytes.Clone(tt.base)
			}
			if tt.damage != nil {
				tt.damage(b)
			}
			// Read as a stream and in batches of chunks (in place, 64
			// bytes too: blocks cut at a chunk's end): alike.
			path := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, chunk := range []int{-1, 0, 64} {
				ngDamageRead(t, tt, b, path, chunk)
			}
		})
	}
}

// ngDamageRead reads the damaged file b of tt (written to path), as a
// stream (chunk < 0) or in batches of chunks of that size (0: the
// default), and holds what it reads to tt.
func ngDamageRead(t *testing.T, tt ngDamageCase, b []byte, path string, chunk int) {
	t.Helper()
	how := "stream"
	r, err := NewFileReader(filepath.Base(path), bytes.NewReader(b))
	if chunk >= 0 {
		how = fmt.Sprintf("batches of %d-byte chunks", chunk)
		r, err = Open(path)
	}
	if r != nil {
		defer r.Close()
	}
	n := 0
	note := func(f *Frame) {
		n++
		got := ""
		if f.RecordErr != nil {
			got = f.RecordErr.Error()
		}
		if got != tt.flagged[n] {
			t.Errorf("%s: frame %d flagged %q, want %q", how, n, got, tt.flagged[n])
		}
	}
	if err == nil && chunk >= 0 {
		r.SetChunkSize(chunk)
		d := r.NewBatchDecoder()
		var batch Batch
		for err == nil {
			r.ReadBatch(&batch, 3, nil)
			d.Reset(&batch)
			for f := d.Next(); f != nil; f = d.Next() {
				note(f)
			}
			err = batch.Err
		}
	}
	for err == nil {
		var f *Frame
		if f, err = r.Next(); err == nil {
			note(f)
		}
	}
	if err == io.EOF {
		err = r.Damage()
	}
	if n != tt.good {
		t.Errorf("%s: read %d frames, want %d", how, n, tt.good)
	}
	// Messages name the file as it was given: the opened file by its path.
	msg := ""
	if err != nil {
		msg = strings.Replace(err.Error(), path, filepath.Base(path), 1)
	}
	switch {
	case tt.err == "" && err != nil:
		t.Errorf("%s: error %v, want none", how, err)
	case tt.err != "" && msg != tt.err:
		t.Errorf("%s: error\n%v\nwant\n%s", how, msg, tt.err)
	case tt.err != "" && !errors.Is(err, tt.is):
		t.Errorf("%s: error %v does not wrap %v", how, err, tt.is)
	}
}

// ngDamageCase is one damaged file of TestPcapngDamage.
type ngDamageCase struct {
	name    string
	base    []byte
	damage  func(b []byte)
	good    int    // frames read
	err     string // the whole message of the file's error; "" for none
	is      error
	flagged map[int]string // frame.error of frames read
}

// TestNgSections: a second section (as cat of two pcapng files makes)
// starts its interfaces afresh, in its own byte order; a section of a
// version this reader does not know is read as 1.0 where its blocks are
// 1.0's (a flipped bit), else skipped whole, as pcapgo did.
func TestNgSections(t *testing.T) {
	a := readRaw(t, declineRDM)
	b := readRaw(t, fallback)
	one, two := ngWrite(t, a, layers.LinkTypeEthernet, 6), ngWrite(t, b, layers.LinkTypeEthernet, 9)
	v2 := bytes.Clone(two)
	binary.LittleEndian.PutUint16(v2[12:], 2) // major version 2
	skipped := bytes.Clone(v2)
	shb := int(binary.LittleEndian.Uint32(skipped[4:]))
	idb := int(binary.LittleEndian.Uint32(skipped[shb+4:]))
	binary.LittleEndian.PutUint32(skipped[shb+idb-4:], 99) // its interface block's trailer: not 1.0's
	for _, tc := range []struct {
		name string
		file []byte
		want int
	}{
		{"two sections", append(bytes.Clone(one), two...), len(a) + len(b)},
		{"unknown version, blocks of 1.0", append(append(bytes.Clone(one), v2...), one...), 2*len(a) + len(b)},
		{"unknown version skipped", append(append(bytes.Clone(one), skipped...), one...), 2 * len(a)},
	} {
		r, err := NewFileReader("cat.pcapng", bytes.NewReader(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		fs, err := collect(t, r)
		if err != nil || len(fs) != tc.want {
			t.Errorf("%s: %d frames (want %d), err %v", tc.name, len(fs), tc.want, err)
		}
	}
}

// TestNgAllocs: reading a pcapng frame allocates nothing.
func TestNgAllocs(t *testing.T) {
	frames := readRaw(t, pingpong)
	b := ngWrite(t, frames, layers.LinkTypeEthernet, 9)
	r, err := NewFileReader("x.pcapng", bytes.NewReader(bytes.Repeat(b, 1)))
	if err != nil {
		t.Fatal(err)
	}
	var ci gopacket.CaptureInfo
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.ng.readPacket(&ci); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per pcapng frame", allocs)
	}
}

// BenchmarkReadPcapng reads pingpong.pcap rewritten as pcapng, frames
// decoded, from a file by read(2) into a buffer (Open).
func BenchmarkReadPcapng(b *testing.B) {
	// 40 copies (20 MB): a run's cost per frame, not an open's.
	var frames []rawFrame
	for range 40 {
		frames = append(frames, readRaw(b, pingpong)...)
	}
	ng := ngWrite(b, frames, layers.LinkTypeEthernet, 9)
	path := filepath.Join(b.TempDir(), "x.pcapng")
	if err := os.WriteFile(path, ng, 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(ng)))
	for b.Loop() {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		r.Close()
		if n != len(frames) {
			b.Fatalf("%d frames", n)
		}
	}
	b.ReportMetric(float64(len(frames)*b.N)/b.Elapsed().Seconds(), "frames/s")
}

// TestNgLostInterface: a section whose only interface description block
// is damaged (its type flipped to one that carries nothing, to a simple
// packet block's or to the reserved 0, its length or trailer off, its
// link type one with no decoder) loses no frame: the packet blocks naming interface 0 make it of the link type
// their first packet is and of the time units its first time's magnitude
// says, the damage told with the first frame; packets of no link type here
// are passed over as before.
// TestNgDamagedInterfaceNumber: a packet block whose interface number is
// damaged (one the section does not describe, not the next) is read as
// the section's one interface where the packet is of its link type, the
// damage told with it; a packet of no such shape is passed as before.
func TestNgDamagedInterfaceNumber(t *testing.T) {
	frames := readRaw(t, pingpong)
	clean := ngWrite(t, frames, layers.LinkTypeEthernet, 6)
	want := frameTimes(t, clean)
	// The fifth packet block's interface number.
	off := int(binary.LittleEndian.Uint32(clean[4:]))
	off += int(binary.LittleEndian.Uint32(clean[off+4:]))
	for range 4 {
		off += int(binary.LittleEndian.Uint32(clean[off+4:]))
	}
	if binary.LittleEndian.Uint32(clean[off:]) != 6 {
		t.Fatalf("no packet block at %#x", off)
	}
	for _, num := range []byte{2, 0x40} {
		b := bytes.Clone(clean)
		b[off+8] = num
		for _, how := range []string{"stream", "file"} {
			r, err := openAs(t, how, b)
			if err != nil {
				t.Fatalf("%d %s: %v", num, how, err)
			}
			n := 0
			for {
				f, err := r.Next()
				if err != nil {
					break
				}
				if n++; n != 5 {
					continue
				}
				if f.RecordErr == nil || !strings.Contains(f.RecordErr.Error(), fmt.Sprintf("interface %d, which the section does not describe: read as interface 0 (Ethernet)", num)) {
					t.Errorf("%d %s: frame 5's error %v", num, how, f.RecordErr)
				}
				if !bytes.Equal(f.Data, frames[4].Data) || !f.CI.Timestamp.Equal(want[4]) {
					t.Errorf("%d %s: frame 5 is not the packet", num, how)
				}
			}
			r.Close()
			if n != len(want) {
				t.Errorf("%d %s: %d frames, want %d", num, how, n, len(want))
			}
		}
	}
}

func TestNgLostInterface(t *testing.T) {
	frames := readRaw(t, pingpong)
	for _, res := range []int{6, 9} {
		clean := ngWrite(t, frames, layers.LinkTypeEthernet, res)
		shb := int(binary.LittleEndian.Uint32(clean[4:]))
		idb := int(binary.LittleEndian.Uint32(clean[shb+4:]))
		want := frameTimes(t, clean)
		const lost = "interface 0, which no interface description block of the section describes (damaged or lost): read as Ethernet"
		for _, c := range []struct {
			name   string
			damage func(b []byte)
			why    string
		}{
			{"type 9", func(b []byte) { b[shb] ^= 8 }, lost},
			{"type 0", func(b []byte) { b[shb] ^= 1 }, lost},
			{"type 3", func(b []byte) { b[shb] ^= 2 }, lost},
			{"length", func(b []byte) { b[shb+4] ^= 1 }, lost},
			{"length past the end", func(b []byte) { b[shb+6] ^= 0x40 }, lost},
			{"trailer", func(b []byte) { b[shb+idb-4] ^= 1 }, lost},
			{"link type", func(b []byte) { b[shb+8] ^= 8 }, "interface description block: interface 0's link type 9, read as Ethernet (its first packet, at file offset"},
		} {
			b := bytes.Clone(clean)
			c.damage(b)
			for _, how := range []string{"stream", "file"} {
				r, err := openAs(t, how, b)
				if err != nil {
					t.Fatalf("%s %d %s: %v", c.name, res, how, err)
				}
				first, err := r.Next()
				if err != nil {
					t.Fatalf("%s %d %s: %v", c.name, res, how, err)
				}
				if first.RecordErr == nil || !strings.Contains(first.RecordErr.Error(), c.why) {
					t.Errorf("%s %d %s: frame 1's error %v", c.name, res, how, first.RecordErr)
				}
				if !first.CI.Timestamp.Equal(want[0]) {
					t.Errorf("%s %d %s: frame 1 at %v, want %v", c.name, res, how, first.CI.Timestamp, want[0])
				}
				rest, _ := collect(t, r)
				r.Close()
				if n := 1 + len(rest); n != len(want) {
					t.Errorf("%s %d %s: %d frames, want %d", c.name, res, how, n, len(want))
				}
			}
		}
	}
	// Packets of no link type here: passed over, not read as another's.
	junk := make([]rawFrame, 3)
	for i := range junk {
		junk[i] = rawFrame{Data: bytes.Repeat([]byte{0x99}, 60), CI: frames[i].CI}
	}
	b := ngWrite(t, junk, layers.LinkTypeEthernet, 6)
	shb := int(binary.LittleEndian.Uint32(b[4:]))
	b[shb] ^= 8
	r, err := NewFileReader("junk.pcapng", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := r.Next(); err == nil {
		t.Errorf("junk packets of a lost interface: frame %d read", f.Number)
	}
}

// frameTimes is the times of the frames of a sound capture b.
func frameTimes(t *testing.T, b []byte) []time.Time {
	t.Helper()
	r, err := NewFileReader("x.pcapng", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ts []time.Time
	for {
		f, err := r.Next()
		if err != nil {
			return ts
		}
		ts = append(ts, f.CI.Timestamp)
	}
}

// TestNgFirstTypeFlipped: a file whose first block type is one bit off a
// section header block's, its byte-order magic sound, is read as pcapng,
// no frame missing, the damage told with frame 1; with the byte-order
// magic damaged too it is no capture file, as before.
func TestNgFirstTypeFlipped(t *testing.T) {
	clean := ngWrite(t, readRaw(t, pingpong), layers.LinkTypeEthernet, 9)
	want := len(frameTimes(t, clean))
	for bit := range 32 {
		b := bytes.Clone(clean)
		b[bit/8] ^= 1 << (bit % 8)
		for _, how := range []string{"stream", "file"} {
			r, err := openAs(t, how, b)
			if err != nil {
				t.Fatalf("bit %d %s: %v", bit, how, err)
			}
			fs, _ := collect(t, r)
			r.Close()
			if len(fs) != want {
				t.Errorf("bit %d %s: %d frames, want %d", bit, how, len(fs), want)
			}
			if d := r.Damage(); d == nil || !strings.Contains(d.Error(), "one bit off a section header block's") {
				t.Errorf("bit %d %s: damage %v", bit, how, d)
			}
		}
	}
	b := bytes.Clone(clean)
	b[0] ^= 1
	b[8] ^= 1
	if _, err := NewFileReader("t.pcapng", bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "not a capture file") {
		t.Errorf("block type and byte-order magic damaged: %v, want no capture file", err)
	}
}

// openAs opens the capture b as a stream ("stream") or a file.
func openAs(t *testing.T, how string, b []byte) (*Reader, error) {
	t.Helper()
	if how == "stream" {
		return NewFileReader("x.pcapng", bytes.NewReader(b))
	}
	path := filepath.Join(t.TempDir(), "x.pcapng")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return Open(path)
}

// TestHeaderFlips holds docs/smcdump.md's claim: every single-bit flip of
// pingpong.pcap's file header, and of its pcapng copy's section header and
// interface block (framing, fields and options), reads all of its frames.
func TestHeaderFlips(t *testing.T) {
	frames := readRaw(t, pingpong)
	pcap, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	ng := ngWrite(t, frames, layers.LinkTypeEthernet, 9)
	shb := int(binary.LittleEndian.Uint32(ng[4:]))
	idb := int(binary.LittleEndian.Uint32(ng[shb+4:]))
	for _, c := range []struct {
		name     string
		file     []byte
		from, to int
	}{{"pcap", pcap, 0, pcapHeaderLen}, {"pcapng", ng, 0, shb + idb}} {
		for at := c.from; at < c.to; at++ {
			for bit := range 8 {
				b := bytes.Clone(c.file)
				b[at] ^= 1 << bit
				r, err := NewFileReader("flip", bytes.NewReader(b))
				if err != nil {
					t.Errorf("%s byte %d bit %d: %v", c.name, at, bit, err)
					continue
				}
				fs, _ := collect(t, r)
				if len(fs) != len(frames) {
					t.Errorf("%s byte %d bit %d: %d frames, want %d", c.name, at, bit, len(fs), len(frames))
				}
			}
		}
	}
}
