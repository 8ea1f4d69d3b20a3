package capture

import (
	"strconv"
	"testing"
)

// TestAppendNumber holds the direct path's frame numbers, counted up in
// their last digit from the previous one, to strconv's, across carries,
// jumps and the 8-digit limit.
func TestAppendNumber(t *testing.T) {
	var p DirectPlan
	check := func(n int) {
		t.Helper()
		buf := make([]byte, 0, 16)
		got, ok := p.appendNumber(buf, n)
		if n >= 1e8 {
			if ok {
				t.Fatalf("appendNumber(%d) took a 9-digit number", n)
			}
			return
		}
		if !ok || string(got) != strconv.Itoa(n) {
			t.Fatalf("appendNumber(%d) = %q, %v", n, got, ok)
		}
	}
	for n := 0; n < 12000; n++ {
		check(n)
	}
	for _, n := range []int{99999998, 99999999, 1e8, 5, 6, 1e8 - 1, 1e8} {
		check(n)
	}
}
