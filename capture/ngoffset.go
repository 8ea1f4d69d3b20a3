package capture

import (
	"encoding/binary"
	"io"
)

// ngBlocks sits between the file and pcapgo's pcapng reader and follows the
// block boundaries of the bytes that pass (pcapng: every block starts with
// its type and total length, the section header's byte-order magic saying
// how to read them). pcapgo reads ahead and does not say where a packet
// came from, so this is how an error names the file offset where the
// failing frame's record starts, as it does for classic pcap.
type ngBlocks struct {
	r      io.Reader
	pos    int64 // stream offset of the next byte
	start  int64 // offset of the block being read
	hdr    [12]byte
	nhdr   int   // header bytes of the current block gathered so far
	remain int64 // bytes of the current block after its header still to pass
	big    bool  // the section is big-endian
	broken bool  // a block length made no sense: offsets are unknown from here
	// starts[head:] holds the offsets of the packet blocks read ahead but
	// not yet returned as frames.
	starts []int64
	head   int
}

// pcapng block types that carry a packet: obsolete packet block, simple
// packet block, enhanced packet block.
const (
	ngBlockSHB = 0x0A0D0D0A
	ngBlockPB  = 2
	ngBlockSPB = 3
	ngBlockEPB = 6
)

func (b *ngBlocks) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.scan(p[:n])
	return n, err
}

func (b *ngBlocks) u32(x []byte) uint32 {
	if b.big {
		return binary.BigEndian.Uint32(x)
	}
	return binary.LittleEndian.Uint32(x)
}

func (b *ngBlocks) scan(p []byte) {
	for len(p) > 0 && !b.broken {
		if b.remain > 0 {
			k := int(min(b.remain, int64(len(p))))
			b.remain -= int64(k)
			b.pos += int64(k)
			p = p[k:]
			continue
		}
		if b.nhdr == 0 {
			b.start = b.pos
		}
		need := 8
		if b.nhdr >= 4 && binary.LittleEndian.Uint32(b.hdr[:4]) == ngBlockSHB {
			need = 12 // the byte-order magic follows the length
		}
		k := copy(b.hdr[b.nhdr:need], p)
		b.nhdr += k
		b.pos += int64(k)
		p = p[k:]
		if b.nhdr < need {
			continue
		}
		if need == 8 && binary.LittleEndian.Uint32(b.hdr[:4]) == ngBlockSHB {
			continue // gather the byte-order magic too
		}
		if need == 12 {
			b.big = binary.BigEndian.Uint32(b.hdr[8:12]) == 0x1A2B3C4D
		}
		total := int64(b.u32(b.hdr[4:8]))
		if total < int64(need) || total%4 != 0 {
			b.broken = true
			return
		}
		switch b.u32(b.hdr[:4]) {
		case ngBlockPB, ngBlockSPB, ngBlockEPB:
			b.starts = append(b.starts, b.start)
		}
		b.remain = total - int64(need)
		b.nhdr = 0
	}
}

// delivered drops the offset of the packet block just returned as a frame.
func (b *ngBlocks) delivered() {
	if b.head < len(b.starts) {
		b.head++
	}
	if b.head >= 64 && b.head*2 >= len(b.starts) {
		// Reuse the array instead of letting the window creep along it.
		n := copy(b.starts, b.starts[b.head:])
		b.starts, b.head = b.starts[:n], 0
	}
}

// recordStart is the file offset of the record the reader failed on: the
// next packet block not yet returned, or the block whose header was cut;
// -1 when unknown.
func (b *ngBlocks) recordStart() int64 {
	switch {
	case b.broken:
		return -1
	case b.head < len(b.starts):
		return b.starts[b.head]
	case b.nhdr > 0 || b.remain > 0:
		return b.start
	}
	return -1
}
