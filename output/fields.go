package output

import (
	"bufio"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// fieldsPrinter writes -T fields: one line per frame, the -e fields in
// order, separated by sep; several values of one field are joined by ','.
// It reuses one line buffer, so a frame costs no allocation.
type fieldsPrinter struct {
	w      *bufio.Writer
	defs   []decode.FieldDef
	sep    string
	header bool
	line   []byte
	// col maps a field ID to its column (-1: not printed), so a frame's
	// record is walked once; cols holds each column's text of the frame.
	// nil when a field is asked for twice: then the simple path runs.
	col  []int
	cols [][]byte
}

// index builds col; called once the columns are known.
func (p *fieldsPrinter) index() {
	maxID := 0
	for _, d := range p.defs {
		maxID = max(maxID, int(d.ID))
	}
	col := make([]int, maxID+1)
	for i := range col {
		col[i] = -1
	}
	for i, d := range p.defs {
		if col[d.ID] >= 0 {
			return // duplicate column
		}
		col[d.ID] = i
	}
	p.col = col
	p.cols = make([][]byte, len(p.defs))
}

func (p *fieldsPrinter) begin() error {
	if !p.header {
		return nil
	}
	for i, d := range p.defs {
		if i > 0 {
			p.w.WriteString(p.sep)
		}
		p.w.WriteString(d.Name)
	}
	return p.w.WriteByte('\n')
}

func (p *fieldsPrinter) end() error { return nil }

func (p *fieldsPrinter) frame(f *capture.Frame) error {
	if p.col == nil {
		return p.frameSimple(f)
	}
	r := f.Fields()
	for i := range p.cols {
		p.cols[i] = p.cols[i][:0]
	}
	for j, id := range r.IDs {
		if int(id) >= len(p.col) || p.col[id] < 0 {
			continue
		}
		c := p.col[id]
		if len(p.cols[c]) > 0 {
			p.cols[c] = append(p.cols[c], ',')
		}
		p.cols[c] = r.Vals[j].Append(p.cols[c], p.defs[c].Kind)
	}
	b := p.line[:0]
	for i, c := range p.cols {
		if i > 0 {
			b = append(b, p.sep...)
		}
		b = append(b, c...)
	}
	b = append(b, '\n')
	p.line = b
	_, err := p.w.Write(b)
	return err
}

// frameSimple scans the record once per column (any column list).
func (p *fieldsPrinter) frameSimple(f *capture.Frame) error {
	r := f.Fields()
	b := p.line[:0]
	for i, d := range p.defs {
		if i > 0 {
			b = append(b, p.sep...)
		}
		first := true
		for j, id := range r.IDs {
			if id != d.ID {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = r.Vals[j].Append(b, d.Kind)
		}
	}
	b = append(b, '\n')
	p.line = b
	_, err := p.w.Write(b)
	return err
}

// writeGlossary prints -G fields: every catalogue field as
// name, type and description, tab separated, sorted by name.
func writeGlossary(w *bufio.Writer) {
	for _, d := range decode.Fields() {
		w.WriteString(d.Name)
		w.WriteByte('\t')
		w.WriteString(d.Kind.String())
		w.WriteByte('\t')
		w.WriteString(d.Desc)
		w.WriteByte('\n')
	}
}
