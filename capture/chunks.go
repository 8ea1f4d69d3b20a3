package capture

import (
	"bufio"
	"bytes"
	"cmp"
	"io"
)

// Batches of a pcap or pcapng file read by read(2). A mapping lets batch
// decoders read frames in place, but every page's first touch is a fault,
// which on a virtual machine traps to the hypervisor: there a 200 MB
// file's faults cost more than decoding its frames. Copying each frame
// into its batch costs the reader a second pass over the bytes. So
// ReadBatch reads such a file into chunks, large buffers that read(2)
// fills, and a batch's frames are records or blocks left where they lie
// in one chunk, which the batch holds until it is read into again; a
// chunk is filled again once no batch holds it. A batch ends where its
// chunk does: the next one starts on a chunk that begins with the record
// or block the last one cut.
//
// A chunk is only ever handed what the stream reader would read without
// looking past it (chunkHolds): whole, plausible records; whole, sound
// blocks up to a packet block. Where a stream reader reads past the end
// of what it has looked at (damage and the search for the next record or
// block, files joined end to end, a new section, a file cut short), the
// stream reader reads the rest of the file (toStream).

// defaultChunkSize is the bytes a chunk holds (a record longer than that
// has a chunk of its own; SetChunkSize). Smaller chunks end batches early
// and cost a read(2) each; larger ones leave the CPU's caches before the
// decoders read them: -j 2 on 200 MB took 5-15 % longer with 1 MiB chunks
// than with 256 KiB ones, most on the mix of small frames.
const defaultChunkSize = 1 << 18

// SetChunkSize sets the bytes of the chunks ReadBatch reads a pcap or
// pcapng file into by read(2) (chunks.go), from the next chunk on: for
// tests, and to measure; 0 is the default.
func (r *Reader) SetChunkSize(n int) {
	r.chunkSize = max(n, 0)
	size := cmp.Or(r.chunkSize, defaultChunkSize)
	switch {
	case r.pf != nil && r.pf.ck != nil:
		r.pf.ck.size = size
	case r.ng != nil && r.ng.ck != nil:
		r.ng.ck.size = size
	}
}

// chunk is a buffer of consecutive bytes of a file and how many hold it:
// the reader while it reads from it, and each Batch whose frames lie in it.
// Only the goroutine reading batches changes refs (Batch.reset releases a
// batch's hold as ReadBatch reads the batch again).
type chunk struct {
	buf  []byte
	refs int
	of   *chunks
}

// chunks is the chunks of one file: the one read from, those no one
// holds, and the source they are filled from.
type chunks struct {
	cur  *chunk
	free []*chunk
	size int // of a chunk
	src  io.Reader
	eof  bool // src has ended (or failed: the stream reader says how)
}

// newChunks reads src, so far read through br, in chunks of size bytes:
// what br's buffer holds is read first (br is not used again).
func newChunks(br *bufio.Reader, src io.Reader, size int) *chunks {
	if held, _ := br.Peek(br.Buffered()); len(held) > 0 {
		src = io.MultiReader(bytes.NewReader(held), src)
	}
	cs := &chunks{size: size, src: src}
	cs.cur = cs.get(size)
	return cs
}

// get returns a chunk of at least n bytes, held once.
func (cs *chunks) get(n int) *chunk {
	if n <= cs.size {
		for k := len(cs.free); k > 0; k = len(cs.free) {
			c := cs.free[k-1]
			cs.free = cs.free[:k-1]
			if len(c.buf) == cs.size { // else of a size set before
				c.refs = 1
				return c
			}
		}
		n = cs.size
	}
	return &chunk{buf: make([]byte, n), refs: 1, of: cs}
}

// release drops a hold of c: a chunk of the usual size no one holds is
// filled again.
func (c *chunk) release() {
	c.refs--
	if c.refs == 0 && len(c.buf) == c.of.size {
		c.of.free = append(c.of.free, c)
	}
}

// fill reads the source into the current chunk after its first n bytes,
// until it is full or the source ends, and returns the bytes it holds.
func (cs *chunks) fill(n int) []byte {
	c := cs.cur
	m, err := io.ReadFull(cs.src, c.buf[n:])
	if err != nil {
		cs.eof = true
	}
	return c.buf[:n+m]
}

// move starts a chunk of at least need bytes with rest, the current
// one's bytes from the next record or block on, and fills it. The chunk
// holds rest whole, should that be longer than need (a chunk of a long
// record's or blocks' length moved again).
func (cs *chunks) move(rest []byte, need int) []byte {
	c := cs.get(max(need, len(rest)))
	n := copy(c.buf, rest)
	cs.cur.release()
	cs.cur = c
	return cs.fill(n)
}

// stream is the stream of rest, the current chunk's bytes from the next
// record or block on, and then the source's, for a stream reader to read
// on where chunks cannot. rest is read where it lies: no chunk is filled
// again once the file is read as a stream.
func (cs *chunks) stream(rest []byte) *bufio.Reader {
	cs.cur.release()
	return bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), cs.src), streamBuf)
}

// startChunks turns p, read as a stream whose next record is at file
// offset at, to reading chunks of size bytes.
func (p *pcapFile) startChunks(at int64, size int) {
	p.ck = newChunks(p.br, p.src, size)
	p.br, p.pos, p.base = nil, 0, at
	p.mem = p.ck.fill(0)
}

// chunkHolds reports whether the next record is whole in the chunk, its
// header plausible: readMem reads it as read reads it from a stream.
func (p *pcapFile) chunkHolds() bool {
	_, _, _, ok := p.wholeRecord(p.mem[p.pos:])
	return ok
}

// nextChunk moves the chunk's bytes from the next record on to the start
// of a new chunk, fills it, and reports whether the record is then whole
// in it (chunkHolds); a chunk of the record's length where it is longer.
// A record whose header the chunk's end cut is moved twice: its length
// is known after the first. It reports false at the source's end.
func (p *pcapFile) nextChunk() bool {
	for range 2 {
		if p.ck.eof {
			return false
		}
		rest := p.mem[p.pos:]
		need := 0
		if len(rest) >= pcapRecordLen {
			h := (*[pcapRecordLen]byte)(rest)
			if caplen := p.u32(h[8:12]); p.plausibleOf(caplen, p.u32(h[12:16]), p.u32(h[4:8])) {
				need = pcapRecordLen + int(caplen)
			}
		}
		p.base += int64(p.pos)
		p.pos = 0
		p.mem = p.ck.move(rest, need)
		if p.chunkHolds() {
			return true
		}
	}
	return false
}

// current is the chunk p reads.
func (p *pcapFile) current() *chunk { return p.ck.cur }

// toStream turns p back to reading a stream, from its next record on.
func (p *pcapFile) toStream() {
	p.br = p.ck.stream(p.mem[p.pos:])
	p.ck, p.mem, p.pos, p.base = nil, nil, 0, 0
	p.streamed = true
}

// startChunks turns p, read as a stream, to reading chunks of size bytes.
func (p *ngFile) startChunks(size int) {
	p.ck = newChunks(p.br, p.src, size)
	p.br, p.base = nil, p.pos
	p.mem = p.ck.fill(0)
}

// chunkHolds reports whether the blocks up to the next packet block are
// whole in the chunk, each of a length no longer than a stream's buffer,
// whose trailer repeats it, none a section header, and that packet block
// one readPacket returns (or a block it ends with an error at): readPacket
// then reads them from the chunk as from a stream, looking no further.
func (p *ngFile) chunkHolds() bool {
	whole, _ := p.blocksAhead(p.mem[p.pos-p.base:])
	return whole
}

// blocksAhead walks the blocks of rest up to the next packet block, as
// chunkHolds says of them. Where they are not whole in rest, need is the
// bytes they take from its start when the lengths read so far are sound
// (a chunk of that many holds them, or the next block's header where rest
// cut it: nextChunk), else 0.
func (p *ngFile) blocksAhead(rest []byte) (whole bool, need int) {
	ifaces := len(p.ifaces) // and those the blocks before the packet's describe
	at := 0
	for len(rest)-at >= ngMinBlock {
		b := rest[at:]
		typ, n := p.u32(b[0:4]), p.u32(b[4:8])
		switch {
		case typ == ngBlockSHB || n < ngMinBlock || n%4 != 0 || n > streamBuf:
			return false, 0
		case uint64(n) > uint64(len(b)):
			if need = at + int(n); need > 2*streamBuf {
				need = 0 // the stream reader reads on, a block at a time
			}
			return false, need
		case p.u32(b[n-4:n]) != n:
			return false, 0
		}
		// A packet block readPacket returns, not one it reads past.
		switch typ {
		case ngBlockEPB, ngBlockPB:
			if n < ngMinEPB {
				return false, 0
			}
			ifc := int(p.u32(b[8:12]))
			if typ == ngBlockPB {
				ifc = int(p.u16(b[8:10]))
			}
			return p.u32(b[20:24]) <= n-ngMinEPB && ifc < ifaces && !p.skip, 0
		case ngBlockSPB:
			return n >= ngMinSPB && ifaces > 0 && !p.skip, 0
		case ngBlockIDB:
			if n < ngMinIDB {
				return true, 0 // readPacket's error, read no further
			}
			ifaces++ // interfaceBlock adds it, damaged options or not
		}
		at += int(n)
	}
	return false, at + ngMinBlock // the next block's header, to read its length
}

// nextChunk is pcapFile.nextChunk for blocks: the blocks up to the next
// packet block are then whole in the chunk (chunkHolds). A block whose
// header the chunk's end cut is moved twice, as a record is.
func (p *ngFile) nextChunk() bool {
	for range 2 {
		if p.ck.eof {
			return false
		}
		rest := p.mem[p.pos-p.base:]
		_, need := p.blocksAhead(rest)
		p.base = p.pos
		p.mem = p.ck.move(rest, need)
		if p.chunkHolds() {
			return true
		}
	}
	return false
}

// current is the chunk p reads.
func (p *ngFile) current() *chunk { return p.ck.cur }

// toStream turns p back to reading a stream, from its next block on.
func (p *ngFile) toStream() {
	p.br = p.ck.stream(p.mem[p.pos-p.base:])
	p.ck, p.mem, p.base = nil, nil, 0
	p.streamed = true
}
