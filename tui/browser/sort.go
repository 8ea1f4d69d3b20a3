package browser

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/output"
)

// Sorting orders the list by one column, on the column's typed value (a
// time, an endpoint, a length), ties in frame order. No., Time and Length
// come from the index and the records' headers; Source, Destination,
// Protocol and Info need every frame of the list decoded, in a pass over
// the capture (the CLC reassembly and the SMC-R queue pairs need the
// frames before), so lists longer than maxSortDecode are refused for them.

// maxSortDecode bounds the rows a sort by a decoded column keeps a key
// for (an Info text each).
var maxSortDecode = 1_000_000

// sortState is the list's order: by a column, up or down. The zero value
// is frame order.
type sortState struct {
	col  int // its place in the layout (Browser.cols)
	desc bool
	on   bool // sorted by col (false: frame order)
}

func (s sortState) arrow() string {
	if s.desc {
		return "↓"
	}
	return "↑"
}

// sortKeys are the rows' values in the sorted column: a number for the
// columns the index answers (a list may be millions of rows: 8 bytes
// each), a decoded value for the others (at most maxSortDecode rows).
type sortKeys struct {
	i   []int64 // No., Time (Unix ns), Length, smc.conn.id, smc.link.id
	ext []decodedKey
}

// decodedKey is a row's value in a column that needs the frame decoded.
type decodedKey struct {
	ep output.Endpoint
	s  string // Protocol, Info
	v  decode.Value
	ok bool // a field column's frame has the field (those without sort first)
}

// compare orders rows a and b by col.
func (k *sortKeys) compare(col listColumn, a, b int) int {
	if !col.indexed() {
		x, y := &k.ext[a], &k.ext[b]
		switch col.Kind {
		case colSource, colDest:
			return x.ep.Compare(y.ep)
		case colProto, colInfo:
			return strings.Compare(x.s, y.s)
		}
		if x.ok != y.ok {
			if x.ok {
				return 1
			}
			return -1
		}
		return compareValues(col.Field.Kind, &x.v, &y.v)
	}
	return cmp.Compare(k.i[a], k.i[b])
}

// compareValues orders two values of a field by its kind: numbers and
// times as numbers, addresses as addresses, the rest as text or bytes.
func compareValues(k decode.Kind, a, b *decode.Value) int {
	switch k {
	case decode.KindUint, decode.KindBool, decode.KindTime:
		return cmp.Compare(a.U, b.U)
	case decode.KindAddr:
		return a.A.Compare(b.A)
	case decode.KindString:
		return strings.Compare(a.S, b.S)
	}
	return bytes.Compare(a.B, b.B)
}

// indexed reports whether sorting by col needs no decoding: its values
// come from the index or the records' headers.
func (col listColumn) indexed() bool {
	switch col.Kind {
	case colNo, colTime, colLength:
		return true
	case colField:
		return trackerColumns[col.Field.ID]
	}
	return false
}

// sortKeys returns the keys of the frames of ns (ascending) for col.
func (x *Index) sortKeys(ctx context.Context, ns []int32, col listColumn) (*sortKeys, error) {
	if !col.indexed() {
		return x.decodedKeys(ctx, ns, col)
	}
	keys := &sortKeys{i: make([]int64, len(ns))}
	switch {
	case col.Kind == colField:
		for i, n := range ns {
			conn, link := x.Conn(int(n))
			keys.i[i] = int64(conn)
			if col.Field.ID == fLinkID {
				keys.i[i] = int64(link)
			}
		}
		return keys, nil
	case col.Kind == colNo:
		for i, n := range ns {
			keys.i[i] = int64(n)
		}
		return keys, nil
	case col.Kind == colTime || col.Kind == colLength:
		rr, err := x.newRecordReader()
		if err != nil {
			return nil, err
		}
		defer rr.Close()
		for i, n := range ns {
			if i&1023 == 0 && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			ci, _, err := rr.read(n)
			if err != nil {
				return nil, err
			}
			keys.i[i] = ci.Timestamp.UnixNano()
			if col.Kind == colLength {
				keys.i[i] = int64(ci.Length)
			}
		}
	}
	return keys, nil
}

// decodedKeys are sortKeys for a column that needs every frame of ns
// decoded, in one pass over the capture.
func (x *Index) decodedKeys(ctx context.Context, ns []int32, col listColumn) (*sortKeys, error) {
	keys := &sortKeys{ext: make([]decodedKey, len(ns))}
	r, _, err := x.pass() // it stops at the last of ns
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for j := 0; j < len(ns); {
		if j&1023 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if int32(f.Number) != ns[j] {
			continue
		}
		k := &keys.ext[j]
		if col.Kind == colField {
			// A value kept past the frame: its bytes copied.
			k.v, k.ok = f.Fields().First(col.Field.ID)
			k.v.B = bytes.Clone(k.v.B)
			j++
			continue
		}
		rw := rowOfFrame(f)
		switch col.Kind {
		case colSource:
			k.ep = rw.src
		case colDest:
			k.ep = rw.dst
		case colProto:
			k.s = rw.proto
		default:
			k.s = rw.info
		}
		j++
	}
	return keys, nil
}

// sortBy orders the list by col (desc: down) in the background; the
// selected frame stays selected.
func (b *Browser) sortBy(s sortState) {
	if s.on && !s.desc && b.cols[s.col].Kind == colNo {
		s = sortState{} // No. up is frame order
	}
	b.refusedSet = false
	if b.sortRunning && (s == b.sort || s == (sortState{})) {
		// Back to the order shown, or to frame order: the running sort
		// would replace it when done.
		b.pending()
		b.pending, b.sortRunning = nil, false
		b.message = ""
	}
	if s == b.sort {
		return
	}
	unsorted := b.unsorted
	if s == (sortState{}) {
		b.showSorted(s, unsorted)
		return
	}
	col := b.cols[s.col]
	if !col.indexed() && unsorted.len() > maxSortDecode {
		b.message = fmt.Sprintf("[yellow]sorting by %s decodes every row: %d rows, more than %d; filter the list first[-]",
			col.Heading(), unsorted.len(), maxSortDecode)
		b.refused, b.refusedSet = s.col, true
		return
	}
	b.message = fmt.Sprintf("[yellow]sorting by %s…[-]", col.Heading())
	b.background(func(ctx context.Context) func() {
		ns := unsorted.slice()
		keys, err := b.idx.sortKeys(ctx, ns, col)
		if err != nil {
			return func() { b.message = "[red]" + tview.Escape(err.Error()) + "[-]" }
		}
		order := make([]int32, len(ns))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortStableFunc(order, func(i, j int32) int {
			c := keys.compare(col, int(i), int(j))
			if s.desc {
				c = -c
			}
			return c
		})
		sorted := make([]int32, len(ns))
		for i, k := range order {
			sorted[i] = ns[k]
		}
		return func() { b.sortRunning = false; b.showSorted(s, listOf(sorted)) }
	})
	b.sorting, b.sortRunning = s, true
}

// sortTarget is the order the list has once the running sort, if any,
// is done: what < > and s move on from.
func (b *Browser) sortTarget() sortState {
	if b.sortRunning {
		return b.sorting
	}
	return b.sort
}

// showSorted puts the sorted list in place, the selected frame kept.
func (b *Browser) showSorted(s sortState, ns frameList) {
	keep := b.selected()
	b.sort = s
	b.rows.setFrames(ns)
	row, _ := b.rowOf(keep)
	b.selectRow(row)
	b.showFrame(row)
	b.message = fmt.Sprintf("sorted by %s %s", b.cols[s.col].Heading(), s.arrow())
	b.reveal = s.col
	if s == (sortState{}) {
		b.message, b.reveal = "frame order", 0
		if nc := b.noColumn(); nc >= 0 {
			b.message = fmt.Sprintf("sorted by %s ↑ (frame order)", b.cols[nc].Heading())
			b.reveal = nc
		}
	}
}

// moveSort sorts by the next (dir 1) or previous column, up; No. is frame
// order. It moves on from the column it last reached, whether sorted,
// still sorting or refused; frame order is at the No. column (before the
// first column when the layout has none).
func (b *Browser) moveSort(dir int) {
	n := len(b.cols)
	from := b.sortTarget()
	pos := from.col
	if !from.on {
		pos = b.noColumn()
	}
	if b.refusedSet {
		pos = b.refused
	}
	c := ((pos+dir)%n + n) % n
	if pos < 0 && dir < 0 {
		c = n - 1
	}
	b.sortBy(sortState{col: c, on: true})
}

// reverseSort reverses the list's order (s): frame order reversed is No.
// down.
func (b *Browser) reverseSort() {
	s := b.sortTarget()
	if !s.on {
		s.col = max(b.noColumn(), 0)
	}
	b.sortBy(sortState{col: s.col, desc: !s.desc, on: true})
}

// noColumn is the place of No. in the layout, -1 when it has none.
func (b *Browser) noColumn() int {
	for i, c := range b.cols {
		if c.Kind == colNo {
			return i
		}
	}
	return -1
}
