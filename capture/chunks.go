package capture

import (
	"bufio"
	"bytes"
	"io"
)

// Batches of a classic pcap file read by read(2). A mapping lets batch
// decoders read frames in place, but every page's first touch is a fault,
// which on a virtual machine traps to the hypervisor: there a 200 MB
// file's faults cost more than decoding its frames. Copying each frame
// into its batch costs the reader a second pass over the bytes. So
// ReadBatch reads such a file into chunks, large buffers that read(2)
// fills, and a batch's frames are records left where they lie in one
// chunk, which the batch holds until it is read into again; a chunk is
// filled again once no batch holds it. A batch ends where its chunk does:
// the next one starts on a chunk that begins with the record the last one
// cut.
//
// A chunk is only ever handed whole, plausible records (chunkHolds): what
// a stream reader reads past the end of what it has looked at (damage and
// the search for the next record, files joined end to end, a file cut
// short) is read by the stream reader itself, from there to the file's
// end (toStream).

// defaultChunkSize is the bytes a chunk holds (a record longer than that
// has a chunk of its own; SetChunkSize). Smaller chunks end batches early
// and cost a read(2) each; larger ones leave the CPU's caches before the
// decoders read them: -j 2 on 200 MB took 5-15 % longer with 1 MiB chunks
// than with 256 KiB ones, most on the mix of small frames.
const defaultChunkSize = 1 << 18

// SetChunkSize sets the bytes of the chunks ReadBatch reads a classic pcap
// file into by read(2) (chunks.go), from the next chunk on: for tests, and
// to measure; 0 is the default.
func (r *Reader) SetChunkSize(n int) {
	if n <= 0 {
		n = defaultChunkSize
	}
	r.chunkSize = n
	if r.pf != nil && r.pf.ck != nil {
		r.pf.ck.size = n
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

// chunks is the chunks of one file: the one read from, and those no one
// holds.
type chunks struct {
	cur  *chunk
	free []*chunk
	size int  // of a chunk
	eof  bool // the source has ended (or failed: the stream reader says how)
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

// startChunks turns p, read as a stream whose next record is at file
// offset at, to reading chunks of size bytes: what the stream's buffer
// holds is read first (the buffer is not used again).
func (p *pcapFile) startChunks(at int64, size int) {
	cs := &chunks{size: size}
	if held, _ := p.br.Peek(p.br.Buffered()); len(held) > 0 {
		p.src = io.MultiReader(bytes.NewReader(held), p.src)
	}
	cs.cur, p.ck, p.br = cs.get(size), cs, nil
	p.pos, p.base = 0, at
	p.fill(0)
}

// fill reads the source into the current chunk after its first n bytes,
// until it is full or the source ends.
func (p *pcapFile) fill(n int) {
	c := p.ck.cur
	m, err := io.ReadFull(p.src, c.buf[n:])
	n += m
	if err != nil {
		p.ck.eof = true
	}
	p.mem = c.buf[:n]
}

// chunkHolds reports whether the next record is whole in the chunk, its
// header plausible: readMem reads it as read reads it from a stream.
func (p *pcapFile) chunkHolds() bool {
	rest := p.mem[p.pos:]
	if len(rest) < pcapRecordLen {
		return false
	}
	h := (*[pcapRecordLen]byte)(rest)
	caplen := p.u32(h[8:12])
	return p.plausibleOf(caplen, p.u32(h[12:16]), p.u32(h[4:8])) && uint64(len(rest)-pcapRecordLen) >= uint64(caplen)
}

// nextChunk moves the chunk's bytes from the next record on to the start
// of a new chunk, fills it, and reports whether the record is then whole
// in it (chunkHolds). It reports false, changing nothing, at the source's
// end.
func (p *pcapFile) nextChunk() bool {
	cs := p.ck
	if cs.eof {
		return false
	}
	rest := p.mem[p.pos:]
	need := cs.size
	if len(rest) >= pcapRecordLen {
		h := (*[pcapRecordLen]byte)(rest)
		if caplen := p.u32(h[8:12]); p.plausibleOf(caplen, p.u32(h[12:16]), p.u32(h[4:8])) {
			need = max(need, pcapRecordLen+int(caplen))
		}
	}
	c := cs.get(need)
	n := copy(c.buf, rest)
	cs.cur.release()
	cs.cur = c
	p.base += int64(p.pos)
	p.pos = 0
	p.fill(n)
	return p.chunkHolds()
}

// toStream turns p back to reading a stream, from its next record on: the
// chunk's bytes from there, then the source's.
func (p *pcapFile) toStream() {
	rest := bytes.Clone(p.mem[p.pos:])
	p.br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(rest), p.src), streamBuf)
	p.ck.cur.release()
	p.ck, p.mem, p.pos, p.base = nil, nil, 0, 0
	p.streamed = true
}
