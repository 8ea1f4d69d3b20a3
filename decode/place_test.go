package decode

import (
	"math/bits"
	"testing"
)

// placed builds a definition the way Field does, without registering it.
func placed(o Owner, opts ...FieldOpt) FieldDef {
	d := FieldDef{Owner: o}
	for _, f := range opts {
		f(&d)
	}
	return d
}

// TestLocate: occurrences walk the places in order (a place holds one,
// a place with Every all that remain), layouts select places, negative
// offsets count from the end, and a place beyond the layer is no place.
func TestLocate(t *testing.T) {
	// CONFIRM RKEY's rkeys: its own at 5, the other links' at 18, 31.
	rkey := placed(OwnerLLC, At(5, 4, In(0x06, 0x26)), At(18, 4, Every(13), In(0x06, 0x26)), At(8, 4, Every(4), In(0x09)))
	msg := make([]byte, 44)
	msg[0] = 0x26
	for k, want := range []int{5, 18, 31} {
		if _, off, ok := rkey.Locate(msg, k); !ok || off != want {
			t.Errorf("CONFIRM RKEY rkey %d at %d (%v), want %d", k, off, ok, want)
		}
	}
	if _, _, ok := rkey.Locate(msg, 3); ok {
		t.Error("CONFIRM RKEY rkey 3 lies beyond the message, yet was located")
	}
	msg[0] = 0x09
	if _, off, ok := rkey.Locate(msg, 2); !ok || off != 16 {
		t.Errorf("DELETE RKEY rkey 2 at %d (%v), want 16", off, ok)
	}
	msg[0] = 0x07 // TEST LINK carries no rkey
	if _, _, ok := rkey.Locate(msg, 0); ok {
		t.Error("TEST LINK has no rkey, yet one was located")
	}

	trailer := placed(OwnerCLC, At(-4, 4))
	if _, off, ok := trailer.Locate(make([]byte, 28), 0); !ok || off != 24 {
		t.Errorf("trailer of a 28-byte Decline at %d (%v), want 24", off, ok)
	}

	src := placed(OwnerIP, At(12, 4, In(4)), At(8, 16, In(6)))
	v6 := make([]byte, 40)
	v6[0] = 0x60
	if p, off, ok := src.Locate(v6, 0); !ok || off != 8 || p.Size != 16 {
		t.Errorf("IPv6 source at %d size %d (%v), want 8 size 16", off, p.Size, ok)
	}
	if _, _, ok := src.Locate(v6[:20], 0); ok {
		t.Error("a place beyond the layer's bytes was located")
	}
	if _, _, ok := placed(OwnerTCP).Locate(make([]byte, 20), 0); ok {
		t.Error("a field without At was located")
	}
}

// TestPlacesWellFormed: every registered place can hold its field: the
// mask fits the bytes, repeats do not overlap, and the kinds without a
// number (addresses, bytes, text) take whole bytes.
func TestPlacesWellFormed(t *testing.T) {
	for _, d := range Fields() {
		for _, p := range d.Places {
			switch {
			case p.Size > 8 && (d.Kind == KindUint || d.Kind == KindBool):
				t.Errorf("%s: a number of %d bytes", d.Name, p.Size)
			case p.Mask != 0 && bits.Len64(p.Mask) > 8*p.Size:
				t.Errorf("%s: mask %#x wider than %d bytes", d.Name, p.Mask, p.Size)
			case p.Stride != 0 && p.Stride < p.Size:
				t.Errorf("%s: stride %d shorter than the field (%d)", d.Name, p.Stride, p.Size)
			case (p.Mask != 0 || p.Value != nil || p.LittleEndian || p.HostOrder) && d.Kind != KindUint && d.Kind != KindBool:
				t.Errorf("%s: bit or number options on a %s field", d.Name, d.Kind)
			case d.Kind == KindAddr && p.Size != 4 && p.Size != 16:
				t.Errorf("%s: an address of %d bytes", d.Name, p.Size)
			case d.Kind == KindMAC && p.Size != 6:
				t.Errorf("%s: a MAC of %d bytes", d.Name, p.Size)
			}
		}
	}
}
