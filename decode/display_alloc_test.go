package decode

import (
	"fmt"
	"testing"
)

// TestEnumsDoNotAllocate: the enum name of a field of the frames that
// make up a capture of SMC-R traffic (all but the CLC handshake's) is
// looked up, not made, for every value it can carry: -V and the browser's
// field pane name one for every such field of every frame.
func TestEnumsDoNotAllocate(t *testing.T) {
	for _, d := range Fields() {
		if d.Enum == nil || d.Owner == OwnerCLC {
			continue
		}
		for _, v := range []uint64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0x10, 0x21, 0x29, 0x64, 0x81, 0xfe, 0xff, 0x100, 0x101, 1 << 16, 0x03030002, 0x03010000, 0x09990000, 1<<32 - 1} {
			if a := testing.AllocsPerRun(10, func() { d.Enum(v) }); a != 0 {
				t.Errorf("%s: %v allocations naming %#x (%q)", d.Name, a, v, d.Enum(v))
			}
		}
	}
}

// TestAppendDisplay: Display's hex form is fmt's %0*x behind 0x, with the
// enum name after it.
func TestAppendDisplay(t *testing.T) {
	for _, w := range []int{0, 1, 2, 4, 8} {
		for _, v := range []uint64{0, 1, 0xf, 0x10, 0xabc, 0x03030002, 1<<64 - 1} {
			d := FieldDef{Kind: KindUint, Hex: true, HexDigits: w}
			val := Value{U: v}
			if got, want := val.Display(d), fmt.Sprintf("0x%0*x", w, v); got != want {
				t.Errorf("width %d value %#x: %q, want %q", w, v, got, want)
			}
		}
	}
	d := FieldDef{Kind: KindUint, Enum: func(v uint64) string { return map[uint64]string{1: "one"}[v] }}
	if got := (Value{U: 1}).Display(d); got != "1 (one)" {
		t.Errorf("enum: %q, want %q", got, "1 (one)")
	}
	if got := (Value{U: 2}).Display(d); got != "2" {
		t.Errorf("enum without a name: %q, want %q", got, "2")
	}
}
