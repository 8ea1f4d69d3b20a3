package browser

import "github.com/smcscope/smcscope/expert"

// The index's per-frame table is kept compact, since it is the part of the
// browser's memory that grows with the capture (tens of millions of frames
// for a capture of gigabytes): about 3.6 bytes a frame instead of an
// entry's 16.
//
//   - The record offset is kept as its distance from the previous frame's
//     (a record's size, two bytes), each block of blockFrames frames
//     starting from an offset of its own, so reading one back adds at most
//     a block's distances. A distance that does not fit (a record of 64
//     KiB or more) is an escape: that frame's offset is kept whole in a map.
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
	blockFrames = 64      // frames a block holds: at most a byte's worth of pairs, and of distances to add
)

// farDelta is a frame's delta saying its offset is in entries.far.
const farDelta = 0xffff

// entryChunk is chunkFrames frames of the table; growing the table adds
// chunks, never copying what it holds.
type entryChunk struct {
	delta  [chunkFrames]uint16 // offset minus the previous frame's; a block's first is 0
	code   [chunkFrames]uint8  // the frame's pair in its block's dictionary
	blocks [chunkFrames / blockFrames]entryBlock
}

type entryBlock struct {
	base  int64 // the offset of the block's first frame
	pairs int32 // where the block's dictionary starts in entries.pairs
	sevs  int32 // 1 + the block's severities in entries.sevs, 0 none
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
	// far holds the offsets of the frames whose distance from the
	// previous frame's does not fit a delta.
	far  map[int32]int64
	sevs []blockSevs
	// raw is 1 + the first frame kept in memory (its frame number), 0
	// none: Index.rawFrom.
	raw int
	// cur is the last frame's offset, the one before it for a frame kept
	// in memory (which has none).
	cur int64
}

func (es *entries) len() int { return es.n }

// add appends e. Once a frame is kept in memory (e.off < 0), every later
// one must be.
func (es *entries) add(e entry) {
	i := es.n
	k := i % chunkFrames
	if k == 0 {
		es.chunks = append(es.chunks, new(entryChunk))
	}
	c := es.chunks[len(es.chunks)-1]
	b := &c.blocks[k/blockFrames]
	off := es.cur
	switch {
	case e.off < 0:
		if es.raw == 0 {
			es.raw = i + 1
		}
	case es.raw != 0:
		panic("browser: a frame with an offset after one kept in memory")
	default:
		off = e.off
	}
	if k%blockFrames == 0 {
		*b = entryBlock{base: off, pairs: int32(len(es.pairs))}
	} else if d := off - es.cur; d >= 0 && d < farDelta {
		c.delta[k] = uint16(d)
	} else {
		c.delta[k] = farDelta
		if es.far == nil {
			es.far = map[int32]int64{}
		}
		es.far[int32(i)] = off
	}
	es.cur = off
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

// at returns entry i (0-based); i must be below len.
func (es *entries) at(i int) entry {
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	b := &c.blocks[k/blockFrames]
	p := es.pairs[b.pairs+int32(c.code[k])]
	e := entry{off: -1, conn: p.conn, link: p.link, sev: es.severity(i)}
	if es.raw == 0 || i+1 < es.raw {
		e.off = es.offset(c, i, k)
	}
	return e
}

// offset is the offset of frame i, the k-th of chunk c: its block's base
// plus the deltas since, or since the last escape.
func (es *entries) offset(c *entryChunk, i, k int) int64 {
	start := k - k%blockFrames
	var sum int64
	for j := k; j > start; j-- {
		d := c.delta[j]
		if d == farDelta {
			return es.far[int32(i-(k-j))] + sum
		}
		sum += int64(d)
	}
	return c.blocks[k/blockFrames].base + sum
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
func (es *entries) conn(i int) int32 {
	c, k := es.chunks[i/chunkFrames], i%chunkFrames
	return es.pairs[c.blocks[k/blockFrames].pairs+int32(c.code[k])].conn
}

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
