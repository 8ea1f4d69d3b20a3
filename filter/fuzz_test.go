package filter

import (
	"errors"
	"testing"
)

// FuzzCompile checks that no expression panics the compiler, that every
// error is a *SyntaxError inside the expression, and that an accepted
// filter's canonical form compiles to itself.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"filtertest.u == 4 and filtertest.flag",
		"filtertest.u in {1, 2 3..5} || !filtertest.sub",
		`filtertest.s contains "a\x41\"" or filtertest.bytes == e2:d4:c3:d9`,
		"filtertest.addr == ::ffff:10.10.0.2 && filtertest.addr != 10.0.0.0/8",
		"filtertest.mac == 52:54:00:0a:00:01 and filtertest.f >= 1.5",
		"((filtertest.u eq decline) or not (filtertest.hex gt 0x03030000))",
		"filtertest.u ==", `"unterminated`, "(((", "}{", "filtertest.u in {",
	} {
		f.Add(s)
	}
	rec := testRecord()
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Compile(expr)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) returned %T, want *SyntaxError", expr, err)
			}
			if se.Col < 1 || se.Col > len([]rune(expr))+1 {
				t.Fatalf("Compile(%q): column %d outside the expression", expr, se.Col)
			}
			_ = se.Caret(expr)
			return
		}
		want := flt.Match(rec)
		g, err := Compile(flt.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not compile: %v", flt.String(), expr, err)
		}
		if g.String() != flt.String() || g.Match(rec) != want {
			t.Fatalf("canonical form %q of %q is not stable", flt.String(), expr)
		}
	})
}
