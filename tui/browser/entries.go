package browser

// entryChunk is how many entries one chunk of entries holds (1 MiB of them).
const entryChunk = 1 << 16

// entries is the index's per-frame table, kept in fixed chunks: growing it never
// copies what it holds, so indexing a capture of millions of frames needs the
// table once, not the two or three times a doubling slice needs while it grows.
type entries struct {
	chunks [][]entry
	n      int
}

func (es *entries) len() int { return es.n }

// at returns entry i (0-based); i must be below len.
func (es *entries) at(i int) *entry { return &es.chunks[i/entryChunk][i%entryChunk] }

func (es *entries) add(e entry) {
	if es.n%entryChunk == 0 {
		es.chunks = append(es.chunks, make([]entry, 0, entryChunk))
	}
	c := &es.chunks[len(es.chunks)-1]
	*c = append(*c, e)
	es.n++
}

// each calls fn for every entry in order with its 0-based index.
func (es *entries) each(fn func(i int, e *entry)) {
	for ci, c := range es.chunks {
		for j := range c {
			fn(ci*entryChunk+j, &c[j])
		}
	}
}
