package capture

import (
	"strconv"
	"testing"
)

// TestDecimal holds the direct path's number formatting to strconv's, on
// every length and around every power of ten.
func TestDecimal(t *testing.T) {
	check := func(x uint64) {
		want := strconv.AppendUint([]byte("ab"), x, 10)
		buf := make([]byte, 2, 64)
		copy(buf, "ab")
		if got := appendDec(buf, x); string(got) != string(want) {
			t.Fatalf("appendDec(%d) = %q, want %q", x, got, want)
		}
		if x < 1e8 {
			if got := putDec8(buf[:2], x); string(got) != string(want) {
				t.Fatalf("putDec8(%d) = %q, want %q", x, got, want)
			}
		}
		if n := decLen(x); n != len(want)-2 {
			t.Fatalf("decLen(%d) = %d, want %d", x, n, len(want)-2)
		}
	}
	for x := uint64(0); x < 200000; x++ {
		check(x)
	}
	for p := uint64(1); p <= 1e19 && p != 0; p *= 10 {
		for _, d := range []uint64{p - 1, p, p + 1, 2*p - 1, 9 * p, 9*p + 1} {
			check(d)
		}
		if p == 1e19 {
			break
		}
	}
	check(^uint64(0))
	for x := uint64(1); x < 1e8; x = x*7 + 3 {
		check(x)
		check(x * 13 % 1e8)
	}
	var p DirectPlan
	for n := 0; n < 1200; n++ {
		buf := make([]byte, 0, 16)
		got, _ := p.appendNumber(buf, n)
		if string(got) != strconv.Itoa(n) {
			t.Fatalf("appendNumber(%d) = %q", n, got)
		}
	}
}
