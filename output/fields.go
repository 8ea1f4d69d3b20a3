package output

import (
	"bufio"
	"bytes"
	"slices"
	"strings"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// fieldsPrinter writes -T fields: one line per frame, the -e fields in
// order, separated by sep; several values of one field are joined by agg
// (or only the first/last is kept, -E occurrence), tshark's conventions.
// Where several values are joined, one that holds the aggregator, the
// separator or a double quote is written in double quotes with its own
// quotes doubled (RFC 4180), so that a column of expert messages, which
// hold commas, still splits into its values; without -E quote only (that
// option quotes the whole column, as tshark does). It walks each record
// through a field-to-columns index and reuses its buffers, so a frame
// costs no allocation.
type fieldsPrinter struct {
	w          *bufio.Writer
	defs       []decode.FieldDef
	names      []string // the -e names as given (a Wireshark name stays one), for the header
	sep        string
	agg        string
	quote      byte // 0, '"' or '\''
	occurrence byte // 'a' all, 'f' first, 'l' last
	header     bool
	line       []byte
	colsOf     [][]int  // field ID -> its columns
	cols       [][]byte // text of each column for the current frame
	has        []bool   // column got a value in the current frame
	n          []int    // values of each column in the current frame
	scratch    []byte   // a value being quoted
	// direct reads the columns of frames the reader took by its direct
	// path (capture.Reader.SetDirect), which have no record.
	direct *capture.DirectPlan
}

// index builds colsOf; called once the columns are known.
func (p *fieldsPrinter) index() {
	maxID := 0
	for _, d := range p.defs {
		maxID = max(maxID, int(d.ID))
	}
	p.colsOf = make([][]int, maxID+1)
	for i, d := range p.defs {
		p.colsOf[d.ID] = append(p.colsOf[d.ID], i)
	}
	p.cols = make([][]byte, len(p.defs))
	p.has = make([]bool, len(p.defs))
	p.n = make([]int, len(p.defs))
	if p.agg == "" {
		p.agg = ","
	}
	if p.occurrence == 0 {
		p.occurrence = 'a'
	}
}

func (p *fieldsPrinter) begin() error {
	if !p.header {
		return nil
	}
	for i, name := range p.names {
		if i > 0 {
			p.w.WriteString(p.sep)
		}
		p.w.WriteString(name)
	}
	return p.w.WriteByte('\n')
}

func (p *fieldsPrinter) end() error { return nil }

func (p *fieldsPrinter) frame(f *capture.Frame) error {
	r := f.Fields()
	for i := range p.cols {
		p.cols[i], p.has[i], p.n[i] = p.cols[i][:0], false, 0
	}
	joined := false // some column joins several values
	if p.occurrence == 'a' && p.quote == 0 {
		for _, id := range r.IDs {
			if int(id) < len(p.colsOf) {
				for _, c := range p.colsOf[id] {
					p.n[c]++
					joined = joined || p.n[c] > 1
				}
			}
		}
	}
	for j, id := range r.IDs {
		if int(id) >= len(p.colsOf) {
			continue
		}
		for _, c := range p.colsOf[id] {
			switch {
			case !p.has[c]:
			case p.occurrence == 'f':
				continue
			case p.occurrence == 'l':
				p.cols[c] = p.cols[c][:0]
			default:
				p.cols[c] = append(p.cols[c], p.agg...)
			}
			p.has[c] = true
			start := len(p.cols[c])
			p.cols[c] = p.defs[c].AppendOut(p.cols[c], &r.Vals[j])
			if joined && p.n[c] > 1 && p.ambiguous(p.cols[c][start:]) {
				p.cols[c] = p.quoteFrom(p.cols[c], start)
			}
		}
	}
	b := p.line[:0]
	for i, c := range p.cols {
		if i > 0 {
			b = append(b, p.sep...)
		}
		if p.quote != 0 && p.has[i] {
			b = append(b, p.quote)
			b = append(b, c...)
			b = append(b, p.quote)
		} else {
			b = append(b, c...)
		}
	}
	b = append(b, '\n')
	p.line = b
	_, err := p.w.Write(b)
	return err
}

// ambiguous reports whether v, one of several values joined in a column,
// holds the aggregator, the separator or a double quote.
func (p *fieldsPrinter) ambiguous(v []byte) bool {
	has := func(s string) bool { return s != "" && bytes.Contains(v, []byte(s)) }
	return has(p.agg) || has(p.sep) || bytes.IndexByte(v, '"') >= 0
}

// quoteFrom puts b[start:] in double quotes, its own quotes doubled.
func (p *fieldsPrinter) quoteFrom(b []byte, start int) []byte {
	p.scratch = append(p.scratch[:0], b[start:]...)
	b = append(b[:start], '"')
	for _, x := range p.scratch {
		if x == '"' {
			b = append(b, '"')
		}
		b = append(b, x)
	}
	return append(b, '"')
}

// directRun prints a run of frames that the reader's direct path takes
// (capture.Reader.AppendDirect), at most limit lines when limit > 0,
// written in the output buffer's free space so that they are not copied.
// It returns the lines printed and the frame that ended the run, if one
// did (see AppendDirect).
func (p *fieldsPrinter) directRun(r *capture.Reader, limit int) (*capture.Frame, int, error) {
	if p.w.Available() < 4*p.direct.LineRoom(p.sep) {
		if err := p.w.Flush(); err != nil {
			return nil, 0, err
		}
	}
	b, n, f, err := r.AppendDirect(p.w.AvailableBuffer(), p.sep, p.quote, limit)
	if _, werr := p.w.Write(b); werr != nil {
		return nil, n, werr
	}
	return f, n, err
}

// writeGlossary prints -G fields: every catalogue field as name, type
// and description, tab separated, sorted by name; a field's Wireshark name
// is a line of its own that names the field it stands for.
func writeGlossary(w *bufio.Writer) {
	type entry struct{ name, kind, desc string }
	var es []entry
	for _, d := range decode.Fields() {
		es = append(es, entry{d.Name, d.Kind.String(), d.Desc})
		if d.Wireshark != "" {
			es = append(es, entry{d.Wireshark, d.Kind.String(), "Wireshark's name for " + d.Name})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for _, e := range es {
		w.WriteString(e.name)
		w.WriteByte('\t')
		w.WriteString(e.kind)
		w.WriteByte('\t')
		w.WriteString(e.desc)
		w.WriteByte('\n')
	}
}
