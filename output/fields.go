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
