package output

import (
	"bufio"
	"encoding/binary"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/numfmt"
)

// jsonPrinter writes one JSON object per frame: the frame's fields by name
// (a field with several values becomes an array, in wire order) and
// "_summary", the text lines. With array set the objects form one JSON
// array (-T json), whose closing bracket end always writes, so output cut
// by an error or an interrupt is still valid; otherwise one object per line
// (-T jsonl).
type jsonPrinter struct {
	w     *bufio.Writer
	array bool
	// inObject wraps the array as {"frames": [...]: the -z views close it.
	inObject bool
	n        int
	b        []byte
	// dst, when set, is where frame appends a frame's JSON, in place of
	// building it in b and writing it to w: a -j worker's batch output,
	// the copy there cost about 5 % of -j 2 JSON.
	dst    *outBuf
	line   []byte
	val    []byte      // text of the current non-numeric value
	fields []jsonField // per field ID: what the catalogue says, made once
	// seen[id] == gen: field id was written in the frame being written.
	// A generation per frame spares clearing the table.
	seen  []uint32
	gen   uint32
	count []uint16 // per field ID: values not yet written (records with repeated fields)
	base  *time.Time
	// shapes are the lists of fields met so far (up to maxShapes), the
	// one met last first.
	shapes    []*jsonShape
	maxShapes int
}

// jsonShape is one list of fields, in order: the frames of a capture
// have a few such lists between them (an ACK's, a CDC's, a WRITE's), so a
// record with one is written from the shape's entries, one after the
// other, without looking each field up or checking it for a second value.
type jsonShape struct {
	ids  []decode.FieldID
	ents []jsonEnt
	// repeats: a field occurs more than once (appendGrouped writes it).
	repeats bool
}

// jsonEnt is a field of a jsonShape: its key (jsonField.key32 and keyN,
// copied here so that the entries are read in one run), how its value is
// written and its catalogue entry.
type jsonEnt struct {
	key32 [32]byte
	keyN  uint8
	op    jsonOp
	fd    *jsonField
}

// jsonOp is how a jsonEnt's value is written: a number or a flag at
// once, anything else by appendJSONValue.
type jsonOp uint8

const (
	jsonOpValue jsonOp = iota
	jsonOpUint
	jsonOpBool
)

// maxJSONShapes bounds the shapes a printer keeps: a capture with more
// kinds of frames writes the others field by field.
const maxJSONShapes = 32

// jsonField is what the writer needs of a field's catalogue entry: copying
// the whole FieldDef for every value cost more than writing the value.
type jsonField struct {
	key []byte // a comma, the quoted name and a colon: ,"name":
	// key32 is key in a block of 32 bytes when it fits (keyN its
	// length, 0 when it does not): copied as one block, where appending
	// key called memmove for every field of every frame (a tenth of
	// -T json).
	key32 [32]byte
	keyN  uint8
	kind  decode.Kind
	// named: written as its enum name, a JSON string (decode.FieldDef.Named)
	named *decode.FieldDef
}

// newJSONPrinter makes the writer's table of every field of the
// catalogue (complete once the packages are initialised).
func newJSONPrinter(w *bufio.Writer, array, inObject bool, base *time.Time) *jsonPrinter {
	p := &jsonPrinter{w: w, array: array, inObject: inObject, base: base, maxShapes: maxJSONShapes}
	defs := decode.Fields()
	n := 0
	for _, d := range defs {
		n = max(n, int(d.ID)+1)
	}
	p.fields = make([]jsonField, n)
	for _, d := range defs {
		key := append(appendJSONString([]byte{','}, d.Name), ':')
		p.fields[d.ID] = jsonField{key: key, kind: d.Kind}
		if len(key) <= len(p.fields[d.ID].key32) {
			copy(p.fields[d.ID].key32[:], key)
			p.fields[d.ID].keyN = uint8(len(key))
		}
		if d.Named && d.Enum != nil {
			p.fields[d.ID].named = &d
		}
	}
	p.seen = make([]uint32, n)
	p.count = make([]uint16, n)
	return p
}

func (p *jsonPrinter) begin() error {
	if p.inObject {
		p.w.WriteString(`{"frames":`)
	}
	if p.array {
		p.w.WriteByte('[')
	}
	return nil
}

func (p *jsonPrinter) end() error {
	if p.array {
		if p.n > 0 {
			p.w.WriteByte('\n')
		}
		if p.inObject {
			p.w.WriteByte(']') // the views follow, then the closing brace
		} else {
			p.w.WriteString("]\n")
		}
	}
	return nil
}

func (p *jsonPrinter) frame(f *capture.Frame) error {
	r := f.Fields()
	b := p.b[:0]
	if p.dst != nil {
		b = p.dst.b
	}
	if p.array {
		if p.n > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  "...)
	}
	p.n++
	// Every field is written with a comma in front; the first comma
	// becomes the brace.
	start := len(b)
	switch sh := p.shapeOf(r.IDs); {
	case sh == nil:
		b = p.appendFields(b, r)
	case sh.repeats:
		b = p.appendGrouped(b, r)
	default:
		b = sh.append(b, r, &p.val)
	}
	if len(b) == start {
		b = append(b, `{"_summary":[`...)
	} else {
		b[start] = '{'
		b = append(b, `,"_summary":[`...)
	}
	lines := max(1, len(f.CLC))
	for i := 0; i < lines; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		clc := i
		if len(f.CLC) == 0 {
			clc = -1
		}
		b = appendSummary(b, f, *p.base, clc, &p.line)
	}
	b = append(b, "]}"...)
	if !p.array {
		b = append(b, '\n')
	}
	if p.dst != nil {
		p.dst.b = b
		return nil
	}
	p.b = b
	_, err := p.w.Write(b)
	return err
}

// appendFields appends the fields of r, each with a comma in front (a
// record of no shape kept): a field with several values (two CLC
// messages, a list) makes them one array (appendGrouped), which one pass
// cannot know in advance.
func (p *jsonPrinter) appendFields(b []byte, r *decode.Record) []byte {
	start := len(b)
	p.gen++
	if p.gen == 0 { // wrapped: stamps of 2^32 frames ago would match
		clear(p.seen)
		p.gen = 1
	}
	gen := p.gen
	for i, id := range r.IDs {
		if p.seen[id] == gen {
			return p.appendGrouped(b[:start], r)
		}
		p.seen[id] = gen
		fd := &p.fields[id]
		if l := len(b); fd.keyN != 0 && cap(b)-l >= len(fd.key32) {
			*(*[32]byte)(b[l : l+32]) = fd.key32
			b = b[:l+int(fd.keyN)]
		} else {
			b = append(b, fd.key...)
		}
		b = appendJSONValue(b, fd, &r.Vals[i], &p.val)
	}
	return b
}

// shapeOf returns the shape of the field list ids, made on first sight,
// or nil when maxShapes are kept and ids is none of them.
func (p *jsonPrinter) shapeOf(ids []decode.FieldID) *jsonShape {
	for i, sh := range p.shapes {
		if !slices.Equal(sh.ids, ids) {
			continue
		}
		if i > 0 { // to the front: frames of one kind come in runs
			copy(p.shapes[1:i+1], p.shapes[:i])
			p.shapes[0] = sh
		}
		return sh
	}
	if len(p.shapes) >= p.maxShapes {
		return nil
	}
	sh := &jsonShape{ids: slices.Clone(ids), ents: make([]jsonEnt, len(ids))}
	seen := map[decode.FieldID]bool{}
	for i, id := range ids {
		fd := &p.fields[id]
		sh.repeats = sh.repeats || seen[id]
		seen[id] = true
		op := jsonOpValue
		switch {
		case fd.named != nil:
		case fd.kind == decode.KindUint:
			op = jsonOpUint
		case fd.kind == decode.KindBool:
			op = jsonOpBool
		}
		sh.ents[i] = jsonEnt{key32: fd.key32, keyN: fd.keyN, op: op, fd: fd}
	}
	p.shapes = append([]*jsonShape{sh}, p.shapes...)
	return sh
}

// append appends the fields of r, a record of shape sh, each with a comma
// in front.
func (sh *jsonShape) append(b []byte, r *decode.Record, scratch *[]byte) []byte {
	vals := r.Vals[:len(sh.ents)]
	for i := range sh.ents {
		e := &sh.ents[i]
		if l := len(b); e.keyN != 0 && cap(b)-l >= 32 {
			*(*[32]byte)(b[l : l+32]) = e.key32
			b = b[:l+int(e.keyN)]
		} else {
			b = append(b, e.fd.key...)
		}
		v := &vals[i]
		switch {
		case e.op == jsonOpUint:
			b = numfmt.AppendUint(b, v.U)
		case e.op == jsonOpValue:
			b = appendJSONValue(b, e.fd, v, scratch)
		case v.U != 0:
			b = append(b, "true"...)
		default:
			b = append(b, "false"...)
		}
	}
	return b
}

// appendGrouped appends the fields of r, each with a comma in front, the
// values of a field that occurs more than once as an array (in wire order)
// at the place of its first value.
func (p *jsonPrinter) appendGrouped(b []byte, r *decode.Record) []byte {
	// One pass counts each field's values, so a field with one value (the
	// common case) is written without looking at the rest of the record.
	for _, id := range r.IDs {
		p.count[id]++
	}
	for i, id := range r.IDs {
		n := int(p.count[id])
		if n == 0 {
			continue // written with its first value
		}
		p.count[id] = 0
		fd := &p.fields[id]
		b = append(b, fd.key...)
		if n == 1 {
			b = appendJSONValue(b, fd, &r.Vals[i], &p.val)
			continue
		}
		b = append(b, '[')
		k := 0
		for j := i; j < len(r.IDs) && k < n; j++ {
			if r.IDs[j] != id {
				continue
			}
			if k > 0 {
				b = append(b, ',')
			}
			k++
			b = appendJSONValue(b, fd, &r.Vals[j], &p.val)
		}
		b = append(b, ']')
	}
	return b
}

func appendJSONValue(b []byte, fd *jsonField, v *decode.Value, scratch *[]byte) []byte {
	kind := fd.kind
	if fd.named != nil {
		*scratch = fd.named.AppendOut((*scratch)[:0], v)
		return appendJSONString(b, *scratch)
	}
	switch kind {
	case decode.KindUint:
		return numfmt.AppendUint(b, v.U)
	case decode.KindBool:
		if v.U != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case decode.KindTime:
		// A JSON number with the capture's decimals, as -T fields prints it.
		return v.Append(b, kind)
	case decode.KindAddr, decode.KindMAC, decode.KindBytes:
		// Digits, dots, colons: nothing to escape, so no second copy.
		b = append(b, '"')
		return append(v.Append(b, kind), '"')
	}
	// scratch holds the text form between frames: no allocation per value.
	*scratch = v.Append((*scratch)[:0], kind)
	return appendJSONString(b, *scratch)
}

// appendSummary appends the text line of f (clc as for AppendLine) as a
// JSON string. The line is written in place and only copied through the
// escaper when it holds a byte that needs it (a decline's peer text, an
// error): a copy of every line cost a tenth of the JSON writer.
func appendSummary(b []byte, f *capture.Frame, base time.Time, clc int, scratch *[]byte) []byte {
	b = append(b, '"')
	n := len(b)
	b = AppendLine(b, f, base, clc)
	b = b[:len(b)-1] // the newline
	if needsEscape(b[n:]) {
		*scratch = append((*scratch)[:0], b[n:]...)
		return appendJSONString(b[:n-1], *scratch)
	}
	return append(b, '"')
}

// needsEscape reports whether s holds a byte that a JSON string must not
// carry as it is (a control byte, a quote, a backslash) or that needs a
// UTF-8 check (any byte from 0x80). Eight bytes at a time: each test
// below is nonzero exactly when some byte of x is below n, by the borrow
// it leaves in that byte's top bit (exact for n up to 0x80).
func needsEscape(s []byte) bool {
	const ones, tops = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		x := binary.LittleEndian.Uint64(s)
		q, bs := x^('"'*ones), x^('\\'*ones)
		if ((x-0x20*ones)&^x|(q-ones)&^q|(bs-ones)&^bs|x)&tops != 0 {
			return true
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// appendJSONString quotes s per RFC 8259 (strconv.Quote's \x escapes are
// not JSON); invalid UTF-8 becomes U+FFFD.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	// Most values (addresses, names, summaries) need no escape: copy the
	// run of plain ASCII at once.
	plain := 0
	for plain < len(s) {
		c := s[plain]
		if c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		plain++
	}
	b = append(b, s[:plain]...)
	for i := plain; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, `\u00`...)
				b = append(b, hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
