package filter

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/smcscope/smcscope/decode"
)

// Filter is a compiled display filter. It is immutable, so one Filter may
// be shared by goroutines that each match their own Records.
type Filter struct {
	root node
	ids  []decode.FieldID
	late bool // some test reads a field Late adds (a lateNode)
	// frame: some test searches the frame's bytes (decode.Record.Frame).
	frame bool
	// first is the leftmost operand of the top "and" chain when it reads
	// no late field: where it fails, so does the filter, and MatchLate
	// says so without its walk (see MatchLate).
	first node
}

// Compile parses expr and resolves its field names through the decode
// catalogue. Errors are *SyntaxError.
func Compile(expr string) (*Filter, error) {
	toks, err := lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{expr: expr, toks: toks}
	if toks[0].kind == tEOF {
		return nil, errAt(expr, toks[0].pos, "empty filter")
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		msg := "unexpected " + t.describe()
		switch t.kind {
		case tRParen:
			msg = `unexpected ")" without matching "("`
		case tWord, tString, tLParen, tNot:
			msg += `: expected "and", "or" or end of filter`
		}
		return nil, errAt(expr, t.pos, msg)
	}
	f := &Filter{root: root, ids: p.ids, late: hasLate(root), frame: p.frame}
	if n, ok := root.(*andNode); ok && f.late {
		for {
			l, ok := n.l.(*andNode)
			if !ok {
				break
			}
			n = l
		}
		if !hasLate(n.l) {
			f.first = n.l
		}
	}
	return f, nil
}

// hasLate reports whether n holds a test of a late field.
func hasLate(n node) bool {
	switch n := n.(type) {
	case *andNode:
		return hasLate(n.l) || hasLate(n.r)
	case *orNode:
		return hasLate(n.l) || hasLate(n.r)
	case *notNode:
		return hasLate(n.x)
	case *lateNode:
		return true
	}
	return false
}

// Match reports whether the frame's fields satisfy the filter. It does not
// allocate.
func (f *Filter) Match(r *decode.Record) bool {
	return f.root.match(r)
}

// Late adds to a record the fields that frame decoding does not produce
// (the connection tracker's, decode.Owner.Tracker), for MatchLate. It is
// called once per test that reads such a field, so it must add them only
// the first time for a given record.
type Late interface {
	AppendLate(r *decode.Record)
}

// MatchLate is Match for a record that holds only the decoded frame's
// fields: before a test that reads a tracker field, late adds those. Each
// "and" and "or" stops at its first operand when that decides, so a filter
// such as "smc.cdc.seq == 5 and smc.conn.id" asks for the tracker's fields
// only on the frames with that sequence number; the result is the one
// Match gives on the record with every field added up front. A filter
// without tracker fields is matched as by Match.
//
// A filter whose first "and" operand reads no tracker field
// ("smc.cdc.seq == 5 and ...") is decided by that operand alone on most
// frames: MayMatch tries it first, and only where it holds does the walk
// run (from the top, which tries it again: tests have no side effects).
// On every frame, the walk's type switches and calls cost half as much as
// following the frame through the tracker.
func (f *Filter) MatchLate(r *decode.Record, late Late) bool {
	if !f.MayMatch(r) {
		return false
	}
	if f.late && late != nil {
		return matchLate(f.root, r, late)
	}
	return f.root.match(r)
}

// MayMatch reports false when the filter's leading "and" operand without
// tracker fields (see MatchLate) fails on r: the filter fails then,
// whatever fields Late would add. It is small enough to be inlined where
// a frame loop calls it, so that most frames cost what Match costs them.
func (f *Filter) MayMatch(r *decode.Record) bool {
	return f.first == nil || f.first.match(r)
}

// matchLate evaluates n as its match method does, with late's fields
// added before each lateNode. It is a walk of its own, not a parameter of
// every match method, so that Match (and MatchLate on a filter without
// tracker fields) runs exactly as before.
func matchLate(n node, r *decode.Record, late Late) bool {
	switch n := n.(type) {
	case *andNode:
		return matchLate(n.l, r, late) && matchLate(n.r, r, late)
	case *orNode:
		return matchLate(n.l, r, late) || matchLate(n.r, r, late)
	case *notNode:
		return !matchLate(n.x, r, late)
	case *lateNode:
		late.AppendLate(r)
	}
	return n.match(r)
}

// String returns the filter in canonical form: keywords spelled out ("and",
// "==") and parentheses only where precedence needs them. Compiling it
// yields an equivalent filter.
func (f *Filter) String() string {
	return string(f.root.appendTo(nil))
}

// ReadsFrame reports whether the filter searches the frame's bytes
// ("frame contains"): the caller must set decode.Record.Frame.
func (f *Filter) ReadsFrame() bool { return f.frame }

// Fields lists the catalogue fields the filter reads (a protocol prefix
// contributes all of its fields), in order of first use, so a caller can
// tell whether a lazy decoder must produce them.
func (f *Filter) Fields() []decode.FieldID {
	return append([]decode.FieldID(nil), f.ids...)
}

// node is one compiled sub-expression.
type node interface {
	match(r *decode.Record) bool
	appendTo(b []byte) []byte
}

// lateField reports whether frame decoding leaves id out of a record and
// Late adds it.
func lateField(id decode.FieldID) bool { return decode.Def(id).Owner.Tracker() }

// lateNode marks a test that reads late fields: matchLate has them added
// first; on a record that has every field, it is the test itself.
type lateNode struct{ x node }

func (n *lateNode) match(r *decode.Record) bool { return n.x.match(r) }
func (n *lateNode) appendTo(b []byte) []byte    { return n.x.appendTo(b) }

type andNode struct{ l, r node }

func (n *andNode) match(r *decode.Record) bool { return n.l.match(r) && n.r.match(r) }
func (n *andNode) appendTo(b []byte) []byte {
	b = appendOperand(b, n.l, true)
	b = append(b, " and "...)
	return appendOperand(b, n.r, true)
}

type orNode struct{ l, r node }

func (n *orNode) match(r *decode.Record) bool { return n.l.match(r) || n.r.match(r) }
func (n *orNode) appendTo(b []byte) []byte {
	b = appendOperand(b, n.l, false)
	b = append(b, " or "...)
	return appendOperand(b, n.r, false)
}

type notNode struct{ x node }

func (n *notNode) match(r *decode.Record) bool { return !n.x.match(r) }
func (n *notNode) appendTo(b []byte) []byte {
	b = append(b, "not "...)
	switch n.x.(type) {
	case *andNode, *orNode:
		b = append(b, '(')
		b = n.x.appendTo(b)
		return append(b, ')')
	}
	return n.x.appendTo(b)
}

// appendOperand writes an operand of "and"/"or", parenthesising an "or"
// under an "and" (where precedence would otherwise regroup it).
func appendOperand(b []byte, x node, inAnd bool) []byte {
	if _, isOr := x.(*orNode); isOr && inAnd {
		b = append(b, '(')
		b = x.appendTo(b)
		return append(b, ')')
	}
	return x.appendTo(b)
}

// fieldIDs are the fields a test reads: one field twice, or the two
// targets of an alias such as ip.addr. A fixed pair keeps the scan of the
// record to one pass without a slice to range over.
type fieldIDs [2]decode.FieldID

func (f *fieldIDs) has(id decode.FieldID) bool { return id == f[0] || id == f[1] }

// late reports whether one of f is a field Late adds.
func (f *fieldIDs) late() bool { return lateField(f[0]) || lateField(f[1]) }

// presentNode tests that a field occurs in the frame.
type presentNode struct {
	ids  fieldIDs
	name string
}

func (n *presentNode) match(r *decode.Record) bool {
	for _, id := range r.IDs {
		if n.ids.has(id) {
			return true
		}
	}
	return false
}
func (n *presentNode) appendTo(b []byte) []byte { return append(b, n.name...) }

// prefixNode tests that any field under a protocol prefix (smc.cdc, roce)
// occurs; a bitset over FieldIDs keeps this one load per record entry.
type prefixNode struct {
	bits []uint64
	name string
}

func (n *prefixNode) match(r *decode.Record) bool {
	for _, id := range r.IDs {
		if w := int(id >> 6); w < len(n.bits) && n.bits[w]&(1<<(id&63)) != 0 {
			return true
		}
	}
	return false
}
func (n *prefixNode) appendTo(b []byte) []byte { return append(b, n.name...) }

type op uint8

const (
	opEq    op = iota // any value equal
	opNe              // present, and no value equal (Wireshark's "!=", all_ne)
	opAnyNe           // any value not equal (Wireshark's "~=")
	opLt
	opLe
	opGt
	opGe
	opContains
	opMatches // regular expression, case-insensitive as in Wireshark
)

var opText = [...]string{"==", "!=", "~=", "<", "<=", ">", ">=", "contains", "matches"}

// cmpNode compares every value of a field with a literal.
type cmpNode struct {
	ids  fieldIDs
	kind decode.Kind
	op   op
	lit  literal
	name string
	text string // the literal as typed, for String
}

func (n *cmpNode) match(r *decode.Record) bool {
	seen := false
	for i, id := range r.IDs {
		if !n.ids.has(id) {
			continue
		}
		seen = true
		v := &r.Vals[i]
		var hit bool
		switch n.op {
		case opEq, opNe:
			hit = equalLiteral(n.kind, v, &n.lit)
			if n.op == opNe {
				if hit {
					return false
				}
				continue
			}
		case opAnyNe:
			hit = !equalLiteral(n.kind, v, &n.lit)
		case opLt:
			hit = compareValue(n.kind, v, &n.lit.v) < 0
		case opLe:
			hit = compareValue(n.kind, v, &n.lit.v) <= 0
		case opGt:
			hit = compareValue(n.kind, v, &n.lit.v) > 0
		case opGe:
			hit = compareValue(n.kind, v, &n.lit.v) >= 0
		case opMatches:
			hit = n.lit.re.MatchString(v.S)
		case opContains:
			if n.kind == decode.KindString {
				hit = strings.Contains(v.S, n.lit.v.S)
			} else {
				hit = bytes.Contains(v.B, n.lit.v.B)
			}
		}
		if hit {
			return true
		}
	}
	return n.op == opNe && seen
}

func (n *cmpNode) appendTo(b []byte) []byte {
	b = append(b, n.name...)
	b = append(b, ' ')
	b = append(b, opText[n.op]...)
	b = append(b, ' ')
	return append(b, n.text...)
}

// frameNode searches the frame's bytes: "frame contains" a byte string
// or "frame matches" a regular expression.
type frameNode struct {
	b    []byte
	re   *regexp.Regexp
	text string
}

func (n *frameNode) match(r *decode.Record) bool {
	if n.re != nil {
		return n.re.Match(r.Frame)
	}
	return bytes.Contains(r.Frame, n.b)
}

func (n *frameNode) appendTo(b []byte) []byte {
	if n.re != nil {
		b = append(b, "frame matches "...)
	} else {
		b = append(b, "frame contains "...)
	}
	return append(b, n.text...)
}

// inNode tests whether any value of a field is in a set of literals.
type inNode struct {
	ids   fieldIDs
	kind  decode.Kind
	set   []literal
	name  string
	texts []string
}

func (n *inNode) match(r *decode.Record) bool {
	for i, id := range r.IDs {
		if !n.ids.has(id) {
			continue
		}
		for j := range n.set {
			if equalLiteral(n.kind, &r.Vals[i], &n.set[j]) {
				return true
			}
		}
	}
	return false
}

func (n *inNode) appendTo(b []byte) []byte {
	b = append(b, n.name...)
	b = append(b, " in {"...)
	for i, t := range n.texts {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, t...)
	}
	return append(b, '}')
}
