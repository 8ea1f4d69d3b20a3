package filter

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is a filter that does not compile, with the place to blame,
// so that the CLI can underline it (see Caret).
type SyntaxError struct {
	Col int    // 1-based column in characters (runes), not bytes
	Msg string // e.g. `unknown field "smc.foo"`
}

func (e *SyntaxError) Error() string {
	return "column " + strconv.Itoa(e.Col) + ": " + e.Msg
}

// Caret returns expr with a second line whose "^" stands under column Col.
// Tabs before the column are kept so that the caret lines up in a terminal.
func (e *SyntaxError) Caret(expr string) string {
	var b strings.Builder
	b.WriteString(expr)
	b.WriteByte('\n')
	col := 1
	for _, r := range expr {
		if col >= e.Col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		col++
	}
	for ; col < e.Col; col++ { // past the end: the error is at end of input
		b.WriteByte(' ')
	}
	b.WriteByte('^')
	return b.String()
}

// errAt builds a SyntaxError for byte offset off of expr.
func errAt(expr string, off int, msg string) *SyntaxError {
	if off > len(expr) {
		off = len(expr)
	}
	return &SyntaxError{Col: utf8.RuneCountInString(expr[:off]) + 1, Msg: msg}
}
