package filter

import (
	"strconv"
	"strings"
)

type tokKind uint8

const (
	tEOF    tokKind = iota
	tWord           // field name or bare literal; which one depends on where it stands
	tString         // double-quoted literal, already unescaped
	tLParen
	tRParen
	tLBrace
	tRBrace
	tComma
	tOp  // == != ~= < > <= >=
	tAnd // &&
	tOr  // ||
	tNot // !
)

type token struct {
	kind tokKind
	text string // the source text (for tString: the unescaped value)
	raw  string // the source text as typed, quotes included
	pos  int    // byte offset in the expression
}

// describe names a token in error messages the way the user typed it.
func (t token) describe() string {
	if t.kind == tEOF {
		return "end of filter"
	}
	return strconv.Quote(t.raw)
}

// isWordByte reports whether c may appear in a bare word. Colons, dots,
// slashes and dashes belong to words so that IPv6 addresses, GIDs, MACs,
// byte strings, CIDR prefixes and ranges (1..5) lex as one literal, as in
// Wireshark.
func isWordByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '.', '_', '-', ':', '/', '%': // % so that a zoned IPv6 address is rejected whole
		return true
	}
	return c >= 0x80 // let the parser reject non-ASCII with a column
}

// lex splits expr into tokens; the only lexical errors are unterminated
// strings and characters that cannot start any token.
func lex(expr string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '"':
			s, n, err := lexString(expr, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: s, raw: expr[i : i+n], pos: i})
			i += n
			continue
		case isWordByte(c):
			j := i
			for j < len(expr) && isWordByte(expr[j]) {
				j++
			}
			toks = append(toks, token{kind: tWord, text: expr[i:j], raw: expr[i:j], pos: i})
			i = j
			continue
		}
		two := ""
		if i+1 < len(expr) {
			two = expr[i : i+2]
		}
		var k tokKind
		n := 1
		switch {
		case two == "==" || two == "!=" || two == "~=" || two == "<=" || two == ">=":
			k, n = tOp, 2
		case two == "&&":
			k, n = tAnd, 2
		case two == "||":
			k, n = tOr, 2
		case c == '<' || c == '>':
			k = tOp
		case c == '!':
			k = tNot
		case c == '(':
			k = tLParen
		case c == ')':
			k = tRParen
		case c == '{':
			k = tLBrace
		case c == '}':
			k = tRBrace
		case c == ',':
			k = tComma
		case c == '=':
			return nil, errAt(expr, i, `unexpected "=": comparison is "=="`)
		default:
			return nil, errAt(expr, i, "unexpected character "+strconv.QuoteRune(rune(c)))
		}
		toks = append(toks, token{kind: k, text: expr[i : i+n], raw: expr[i : i+n], pos: i})
		i += n
	}
	toks = append(toks, token{kind: tEOF, pos: len(expr)})
	return toks, nil
}

// lexString reads the double-quoted string starting at expr[start] and
// returns its value and source length. Escapes follow Wireshark: \" \\ \n
// \t \r and \xHH.
func lexString(expr string, start int) (string, int, error) {
	var b strings.Builder
	i := start + 1
	for i < len(expr) {
		c := expr[i]
		switch c {
		case '"':
			return b.String(), i + 1 - start, nil
		case '\\':
			if i+1 >= len(expr) {
				return "", 0, errAt(expr, start, "unterminated string")
			}
			e := expr[i+1]
			switch e {
			case '"', '\\':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'x':
				if i+3 >= len(expr) {
					return "", 0, errAt(expr, i, `bad escape: \x needs two hex digits`)
				}
				v, err := strconv.ParseUint(expr[i+2:i+4], 16, 8)
				if err != nil {
					return "", 0, errAt(expr, i, `bad escape: \x needs two hex digits`)
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				return "", 0, errAt(expr, i, "bad escape "+strconv.Quote(expr[i:i+2]))
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	return "", 0, errAt(expr, start, "unterminated string")
}
