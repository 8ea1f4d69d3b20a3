package filter

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/decode"
)

// parser is a recursive-descent parser over the token slice. Precedence,
// lowest first: or, and, not; as in Wireshark.
type parser struct {
	expr string
	toks []token
	i    int
	ids  []decode.FieldID
	seen map[decode.FieldID]bool
	cur  fieldIDs // the field(s) of the comparison being parsed
	// frame: a test searches the frame's bytes ("frame contains").
	frame bool
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// isKeyword reports whether t is the bare word kw (keywords are case-insensitive).
func isKeyword(t token, kw string) bool {
	return t.kind == tWord && strings.EqualFold(t.text, kw)
}

func (p *parser) parseOr() (node, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tOr && !isKeyword(t, "or") {
			return l, nil
		}
		p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &orNode{l, r}
	}
}

func (p *parser) parseAnd() (node, error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != tAnd && !isKeyword(t, "and") {
			return l, nil
		}
		p.next()
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = &andNode{l, r}
	}
}

func (p *parser) parseUnary() (node, error) {
	t := p.peek()
	if t.kind == tNot || isKeyword(t, "not") {
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return &notNode{x}, nil
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (node, error) {
	t := p.next()
	switch t.kind {
	case tLParen:
		x, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.kind != tRParen {
			if c.kind == tEOF {
				return nil, errAt(p.expr, t.pos, `unclosed "(": missing ")"`)
			}
			return nil, errAt(p.expr, c.pos, "unexpected "+c.describe()+`: expected ")", "and" or "or"`)
		}
		p.next()
		return x, nil
	case tWord:
		if isReserved(t.text) {
			return nil, errAt(p.expr, t.pos, "expected a field name, got keyword "+t.describe())
		}
		n, err := p.parseField(t)
		if err != nil {
			return nil, err
		}
		if readsLate(n) {
			n = &lateNode{n}
		}
		return n, nil
	case tEOF:
		return nil, errAt(p.expr, t.pos, "expected a field name or \"(\", got end of filter")
	}
	return nil, errAt(p.expr, t.pos, "expected a field name, got "+t.describe())
}

// readsLate reports whether a test reads a field that Late supplies.
func readsLate(n node) bool {
	switch n := n.(type) {
	case *presentNode:
		return n.ids.late()
	case *cmpNode:
		return n.ids.late()
	case *inNode:
		return n.ids.late()
	case *prefixNode:
		for w, bits := range n.bits {
			for b := range 64 {
				if bits&(1<<b) != 0 && lateField(decode.FieldID(w<<6|b)) {
					return true
				}
			}
		}
	}
	return false
}

func isReserved(w string) bool {
	switch strings.ToLower(w) {
	case "and", "or", "not", "contains", "matches", "in", "eq", "ne", "lt", "le", "gt", "ge", "any_ne":
		return true
	}
	return false
}

// wordOps maps the spelled-out comparison operators to symbols.
var wordOps = map[string]op{
	"eq": opEq, "ne": opNe, "any_ne": opAnyNe, "lt": opLt, "le": opLe, "gt": opGt, "ge": opGe,
	"==": opEq, "!=": opNe, "~=": opAnyNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe,
	"contains": opContains, "matches": opMatches,
}

// parseField handles "name", "name OP value" and "name in {...}".
func (p *parser) parseField(name token) (node, error) {
	def, isField := decode.LookupField(name.text)
	prefixIDs := fieldsUnder(name.text)
	if !isField && len(prefixIDs) == 0 {
		if targets := aliasTargets(name.text); targets != nil {
			return p.parseField1(name, targets[0], true, nil, targets)
		}
		if c := name.text[0]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return nil, errAt(p.expr, name.pos, "expected a field name, got "+name.describe())
		}
		return nil, errAt(p.expr, name.pos, "unknown field "+strconv.Quote(name.text))
	}
	return p.parseField1(name, def, isField, prefixIDs, nil)
}

// parseField1 parses what follows a resolved name. For an alias, def is
// its first target renamed to the alias, and targets lists them all.
func (p *parser) parseField1(name token, def decode.FieldDef, isField bool, prefixIDs []decode.FieldID, targets []decode.FieldDef) (node, error) {
	p.cur = fieldIDs{def.ID, def.ID}
	if targets != nil {
		def.Name = name.text
		p.cur = fieldIDs{targets[0].ID, targets[1].ID}
		p.use(targets[1].ID)
	}
	opTok := p.peek()
	o, isOp := op(0), false
	switch opTok.kind {
	case tOp:
		o, isOp = wordOps[opTok.text], true
	case tWord:
		o, isOp = wordOps[strings.ToLower(opTok.text)]
	}
	isIn := isKeyword(opTok, "in")
	if !isOp && !isIn {
		return p.presence(name, def, isField, prefixIDs), nil
	}
	p.next()
	if name.text == "frame" && (o == opContains || o == opMatches) {
		return p.parseFrameBytes(opTok, o)
	}
	if !isField {
		return nil, errAt(p.expr, name.pos, strconv.Quote(name.text)+
			" is a protocol, not a field: it can only be tested for presence")
	}
	p.use(def.ID)
	if isIn {
		return p.parseSet(def)
	}

	v := p.peek()
	if v.kind != tWord && v.kind != tString {
		return nil, errAt(p.expr, opTok.pos, "expected value after "+strconv.Quote(opTok.text))
	}
	if v.kind == tWord && isReserved(v.text) {
		return nil, errAt(p.expr, opTok.pos, "expected value after "+strconv.Quote(opTok.text)+", got keyword "+v.describe())
	}
	p.next()
	switch o {
	case opContains:
		switch def.Kind {
		case decode.KindString, decode.KindBytes, decode.KindMAC:
		default:
			return nil, errAt(p.expr, opTok.pos, `"contains" needs a string or byte field; `+
				def.Name+" is "+def.Kind.String())
		}
	case opMatches:
		if def.Kind != decode.KindString {
			return nil, errAt(p.expr, opTok.pos, `"matches" needs a string field; `+def.Name+" is "+def.Kind.String())
		}
		if v.kind != tString {
			return nil, errAt(p.expr, v.pos, `"matches" needs a quoted regular expression`)
		}
		re, err := regexp.Compile("(?i)" + v.text)
		if err != nil {
			return nil, errAt(p.expr, v.pos, "bad regular expression: "+err.Error())
		}
		return &cmpNode{ids: p.cur, kind: def.Kind, op: o, lit: literal{re: re}, name: def.Name, text: v.raw}, nil
	case opLt, opLe, opGt, opGe:
		if def.Kind == decode.KindBool {
			return nil, errAt(p.expr, opTok.pos, "a boolean field ("+def.Name+") can only be compared with == or !=")
		}
	}
	lit, msg := parseLiteral(def, v, false)
	if msg != "" {
		return nil, errAt(p.expr, v.pos, msg)
	}
	if lit.isPrefix && o != opEq && o != opNe && o != opAnyNe {
		return nil, errAt(p.expr, v.pos, "an address prefix can only be compared with == or !=")
	}
	return &cmpNode{ids: p.cur, kind: def.Kind, op: o, lit: lit, name: def.Name, text: v.raw}, nil
}

// parseFrameBytes parses what follows "frame contains" or "frame
// matches": the frame's bytes searched for a byte string ("SMCR",
// e2:d4:c3:d9, 0xe2d4c3d9) or a regular expression, as in Wireshark.
func (p *parser) parseFrameBytes(opTok token, o op) (node, error) {
	v := p.next()
	if v.kind != tWord && v.kind != tString {
		return nil, errAt(p.expr, opTok.pos, "expected value after "+strconv.Quote(opTok.text))
	}
	p.frame = true
	if o == opMatches {
		if v.kind != tString {
			return nil, errAt(p.expr, v.pos, `"matches" needs a quoted regular expression`)
		}
		re, err := regexp.Compile("(?i)" + v.text)
		if err != nil {
			return nil, errAt(p.expr, v.pos, "bad regular expression: "+err.Error())
		}
		return &frameNode{re: re, text: v.raw}, nil
	}
	lit, msg := parseLiteral(decode.FieldDef{Name: "frame", Kind: decode.KindBytes}, v, false)
	if msg != "" {
		return nil, errAt(p.expr, v.pos, msg)
	}
	return &frameNode{b: lit.v.B, text: v.raw}, nil
}

// parseSet reads "{v1 v2 lo..hi}" (commas optional) after "in".
func (p *parser) parseSet(def decode.FieldDef) (node, error) {
	open := p.next()
	if open.kind != tLBrace {
		return nil, errAt(p.expr, open.pos, `expected "{" after "in", got `+open.describe())
	}
	n := &inNode{ids: p.cur, kind: def.Kind, name: def.Name}
	for {
		t := p.next()
		switch t.kind {
		case tRBrace:
			if len(n.set) == 0 {
				return nil, errAt(p.expr, open.pos, "empty set")
			}
			return n, nil
		case tComma:
			if len(n.set) == 0 {
				return nil, errAt(p.expr, t.pos, `unexpected ","`)
			}
			continue
		case tWord, tString:
			lit, msg := parseLiteral(def, t, true)
			if msg != "" {
				return nil, errAt(p.expr, t.pos, msg)
			}
			n.set = append(n.set, lit)
			n.texts = append(n.texts, t.raw)
		case tEOF:
			return nil, errAt(p.expr, open.pos, `unclosed "{": missing "}"`)
		default:
			return nil, errAt(p.expr, t.pos, "unexpected "+t.describe()+" in set")
		}
	}
}

// presence tests for a field, or for any field under a protocol prefix.
func (p *parser) presence(name token, def decode.FieldDef, isField bool, under []decode.FieldID) node {
	if isField && len(under) == 0 {
		p.use(def.ID)
		return &presentNode{ids: p.cur, name: def.Name}
	}
	if isField {
		under = append(under, def.ID)
	}
	var hi decode.FieldID
	for _, id := range under {
		p.use(id)
		hi = max(hi, id)
	}
	bits := make([]uint64, int(hi>>6)+1)
	for _, id := range under {
		bits[id>>6] |= 1 << (id & 63)
	}
	return &prefixNode{bits: bits, name: name.text}
}

func (p *parser) use(id decode.FieldID) {
	if p.seen == nil {
		p.seen = make(map[decode.FieldID]bool)
	}
	if !p.seen[id] {
		p.seen[id] = true
		p.ids = append(p.ids, id)
	}
}

// fieldsUnder returns the catalogue fields whose names, or Wireshark
// names, continue name with a dot: "smc.cdc" covers "smc.cdc.seq", not
// "smc.cdcx"; "infiniband" covers infiniband.bth.psn (roce.bth.psn).
func fieldsUnder(name string) []decode.FieldID {
	var ids []decode.FieldID
	pre := name + "."
	for _, d := range decode.Fields() {
		if strings.HasPrefix(d.Name, pre) || strings.HasPrefix(d.Wireshark, pre) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// aliases are Wireshark's either-direction fields. Each stands for its two
// targets as long as the catalogue has both, with one Kind, and does not
// define the alias name itself. A comparison on an alias reads the values
// of both fields as one multi-valued field, which gives Wireshark's
// meaning: "ip.addr == a" holds if either address is a, "ip.addr != a" if
// there is an address and neither is a.
var aliases = map[string][2]string{
	"eth.addr": {"eth.src", "eth.dst"},
	"ip.addr":  {"ip.src", "ip.dst"},
	"tcp.port": {"tcp.srcport", "tcp.dstport"},
	"udp.port": {"udp.srcport", "udp.dstport"},
}

func aliasTargets(name string) []decode.FieldDef {
	names, ok := aliases[name]
	if !ok {
		return nil
	}
	defs := make([]decode.FieldDef, 0, len(names))
	for _, n := range names {
		d, ok := decode.LookupField(n)
		if !ok || (len(defs) > 0 && d.Kind != defs[0].Kind) {
			return nil
		}
		defs = append(defs, d)
	}
	return defs
}
