package textcache

import (
	"fmt"
	"testing"
)

func TestString(t *testing.T) {
	var c Cache
	for i := range 20 {
		for j := range 6 {
			b := []byte(fmt.Sprintf("eid-%d", (i+j)%6))
			if got := c.String(b); got != string(b) {
				t.Fatalf("String(%q) = %q", b, got)
			}
		}
	}
	if c.String(nil) != "" || c.String([]byte{}) != "" {
		t.Fatal("empty text is not the empty string")
	}
}

// TestNoAlloc: a text equal to a kept one costs nothing.
func TestNoAlloc(t *testing.T) {
	var c Cache
	a, b := []byte("SMC-LAB-UEID"), []byte("OTHER-EID")
	c.String(a)
	c.String(b)
	if n := testing.AllocsPerRun(100, func() {
		c.String(a)
		c.String(b)
	}); n != 0 {
		t.Fatalf("%v allocations per run, want 0", n)
	}
}
