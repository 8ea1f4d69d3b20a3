package browser

import (
	"math/bits"

	"github.com/smcscope/smcscope/expert"
)

// The index's per-frame table is kept compact, since it is the part of the
// browser's memory that grows with the capture (tens of millions of frames
// for a capture of gigabytes): about 1.8 bytes a frame instead of an
// entry's 16 (on 10 GiB of the benchmark's mix, 44 M frames: 1.38 in the
// chunks, 0.38 in the dictionaries, 0.02 in severities).
//
//   - A frame's record offset is not kept: its block of blockFrames frames
//     keeps its first frame's, and a frame's record is found by reading
//     the record headers from there (recordReader.offset), at most a
//     block's worth, as the records of one frame after another follow
//     each other in the file. A frame whose record does not start where
//     the previous frame's ends (a pcapng block between them, an
//     interface or a section) is a jump: its offset is kept whole in a
//     map, and the block's mask of jumps says where walking starts.
//   - The connection and link, which change little from one frame to the
//     next, are a one-byte code into the block's dictionary of the
//     (connection, link) pairs it holds: a block has no more pairs than
//     frames, so a byte always holds the code.
//   - Severities, which few frames have, take half a byte a frame only in
//     the blocks that have one.
//   - The frames kept in memory (no offset) are the last ones: from the
//     first on, every frame is (Index.rawFrom).
const (
	chunkFrames = 1 << 16 // frames a chunk of the table holds
	blockFrames = 64      // frames a block holds: at most a byte's worth of pairs, a word of jumps, and of records to walk
)

// entryChunk is chunkFrames frames of the table; growing the table adds
// chunks, never copying what it holds.
type entryChunk struct {
	code   [chunkFrames]uint8 // the frame's pair in its block's dictionary
	blocks [chunkFrames / blockFrames]entryBlock
}

type entryBlock struct {
	base  int64 // the record offset of the block's first frame
	pairs int32 // where the block's dictionary starts in entries.pairs
	sevs  int32 // 1 + the block's severities in entries.sevs, 0 none
	jumps int32 // 1 + the block's mask of jumps in entries.jumps, 0 none
	n     uint8 // the pairs in its dictionary
}

// blockSevs are a block's frames' severities, a nibble each.
type blockSevs [blockFrames / 2]uint8

// connLink is a frame's connection and link.
type connLink struct {
	conn int32
	link int16
}

// entries is the index's per-frame table.
type entries struct {
	chunks []*entryChunk
	n      int
	// pairs holds the blocks' dictionaries one after the other; only the
	// last block's grows.
	pairs []connLink
	// jumps holds the masks of the blocks that have jumps (bit k: the
	// block's k-th frame is one), far their offsets by frame index.
	jumps []uint64
	far   map[int32]int64
	sevs  []blockSevs
	// raw is 1 + the first frame kept in memory (its frame number), 0
	// none: Index.rawFrom.
	raw int
	// end is where the last frame's record ends, -1 for a frame kept in
	// memory.
	end int64
}

func (es *entries) len() int { return es.n }

// add appends e, whose record ends at end (its next byte's offset). Once
// a frame is kept in memory (e.off < 0), every later one must be.
func (es *entries) add(e entry, end int64) {
	i := es.n
	k := i % chunkFrames
	if k == 0 {
		es.chunks = append(es.chunks, new(entryChunk))
	}
	c := es.chunks[len(es.chunks)-1]
	b := &c.blocks[k/blockFrames]
	switch {
	case e.off < 0:
		if es.raw == 0 {
			es.raw = i + 1
		}
		end = -1
	case es.raw != 0:
		panic("browser: a frame with an offset after one kept in memory")
	}
	switch {
	case k%blockFrames == 0:
		*b = entryBlock{base: e.off, pairs: int32(len(es.pairs))}
	case e.off >= 0 && e.off != es.end:
		if b.jumps == 0 {
			es.jumps = append(es.jumps, 0)
			b.jumps = int32(len(es.jumps))
		}
		es.jumps[b.jumps-1] |= 1 << (k % blockFrames)
		if es.far == nil {
			es.far = map[int32]int64{}
		}
		es.far[int32(i)] = e.off
	}
	es.end = end
	p := connLink{e.conn, e.link}
	code := -1
	for j, q := range es.pairs[b.pairs : b.pairs+int32(b.n)] {
		if q == p {
			code = j
			break
		}
	}
	if code < 0 {
		code = int(b.n)
		es.pairs = append(es.pairs, p)
		b.n++
	}
	c.code[k] = uint8(code)
	es.n++
	if e.sev != 0 {
		es.setSeverity(i, e.sev)
	}
}

// pair returns the connection and link of entry i (0-based); i must be
// below len.
func (es *entries) pair(i int) connLink {
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	return es.pairs[c.blocks[k/blockFrames].pairs+int32(c.code[k])]
}

// record says where the record of entry i is: skip records after the
// record at off, which is frame i-skip's (skip below blockFrames); off is
// -1 for a frame kept in memory.
func (es *entries) record(i int) (off int64, skip int) {
	if es.raw != 0 && i+1 >= es.raw {
		return -1, 0
	}
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	b := &c.blocks[k/blockFrames]
	j := k % blockFrames
	if b.jumps != 0 {
		// The last jump at or before j, if any.
		if m := es.jumps[b.jumps-1] & (1<<(j+1) - 1); m != 0 {
			from := bits.Len64(m) - 1
			return es.far[int32(i-(j-from))], j - from
		}
	}
	return b.base, j
}

// severity is the severity of entry i, and setSeverity sets it.
func (es *entries) severity(i int) expert.Severity {
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	b := &c.blocks[k/blockFrames]
	if b.sevs == 0 {
		return expert.SeverityNone
	}
	j := k % blockFrames
	return expert.Severity(es.sevs[b.sevs-1][j/2] >> (4 * (j % 2)) & 0xf)
}

func (es *entries) setSeverity(i int, s expert.Severity) {
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	b := &c.blocks[k/blockFrames]
	if b.sevs == 0 {
		if s == expert.SeverityNone {
			return
		}
		es.sevs = append(es.sevs, blockSevs{})
		b.sevs = int32(len(es.sevs))
	}
	j := k % blockFrames
	v, shift := &es.sevs[b.sevs-1][j/2], 4*(j%2)
	*v = *v&^(0xf<<shift) | uint8(s)&0xf<<shift
}

// conn returns the connection of entry i.
func (es *entries) conn(i int) int32 { return es.pair(i).conn }

// matching calls fn in order with the 0-based index of every entry whose
// connection and link match: a block none of whose pairs matches is
// skipped whole.
func (es *entries) matching(match func(p connLink) bool, fn func(i int)) {
	for ci, c := range es.chunks {
		n := min(es.n-ci*chunkFrames, chunkFrames)
		for bi := 0; bi*blockFrames < n; bi++ {
			b := &c.blocks[bi]
			var codes uint64 // bit j: the block's pair j matches
			for j, p := range es.pairs[b.pairs : b.pairs+int32(b.n)] {
				if match(p) {
					codes |= 1 << j
				}
			}
			if codes == 0 {
				continue
			}
			for k := bi * blockFrames; k < min(n, (bi+1)*blockFrames); k++ {
				if codes&(1<<c.code[k]) != 0 {
					fn(ci*chunkFrames + k)
				}
			}
		}
	}
}
