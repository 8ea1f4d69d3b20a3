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

// TestStringValueEscapes: a string value off the wire (an EID, a host
// name) is written with its control characters, invalid UTF-8 and
// backslashes escaped (-T fields, -V): raw, an escape sequence would act
// on the terminal and a tab or newline break a fields line.
func TestStringValueEscapes(t *testing.T) {
	for in, want := range map[string]string{
		"SMC-LAB-UEID":       "SMC-LAB-UEID",
		"%\x00C-LAB-UEID":    `%\x00C-LAB-UEID`,
		"a\x1b[2Jb":          `a\x1b[2Jb`,
		"tab\there\nnl\x7f":  `tab\x09here\x0anl\x7f`,
		`back\slash`:         `back\\slash`,
		"caf\u00e9 \u00b5s":  "caf\u00e9 \u00b5s",
		"bad\xc3(utf8\xff":   `bad\xc3(utf8\xff`,
		"c1\u009bcontrol":    `c1\xc2\x9bcontrol`,
		"(none)           T": "(none)           T",
	} {
		v := Value{S: in}
		if got := string(v.Append(nil, KindString)); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	v := Value{S: "C->S"}
	buf := make([]byte, 0, 16)
	if a := testing.AllocsPerRun(10, func() { buf = v.Append(buf[:0], KindString) }); a != 0 {
		t.Errorf("%v allocations appending a plain string", a)
	}
}
