package decode

import "slices"

// Where a field's value sits on the wire. The place belongs to the field's
// registration (At), relative to the start of the layer that owns the
// field, because that is how the kernel structs and IBTA define them; the
// frame reader knows where each layer starts in a frame
// (capture.Frame.FieldSpans). The capture browser highlights the selected
// field's bytes with it, as Wireshark does. Fields computed from several
// bytes or by the tracker, and fields behind variable-length parts (CLC v2
// extensions, TCP options), have no place: a browser falls back to the
// layer's bytes.

// Place is where one value of a field sits in its layer's bytes.
type Place struct {
	// Off is the offset from the start of the layer's header; a negative
	// offset counts from the layer's end (the CLC trailer is at -4).
	Off int
	// Size is the number of bytes. Fields of a few bits share their
	// byte(s) with their neighbours (Mask says which bits are theirs).
	Size int
	// Mask selects the field's bits in the Size bytes read as one
	// number; 0 means all of them.
	Mask uint64
	// LittleEndian: the bytes are read least significant first (the ICRC
	// trailer); otherwise in network order.
	LittleEndian bool
	// HostOrder: the sender wrote the number in its own byte order (the
	// LLC v2 length and ADD LINK v2 rkey count), so it reads either way.
	HostOrder bool
	// Stride > 0: the field repeats; occurrence k of this place sits at
	// Off + k*Stride (rkey and GID lists).
	Stride int
	// Variants limits the place to these layouts of the layer (see
	// Variant); nil means every layout.
	Variants []int
	// Value converts the selected bits to the value the field shows (a
	// compressed RMBE size to bytes); nil: the bits are the value.
	Value func(uint64) uint64
}

// PlaceOpt adjusts a Place given to At.
type PlaceOpt func(*Place)

// At places a field size bytes at off from the start of its layer's header
// (negative: from its end). Several At options give the places of the
// layer's layouts (In) or of successive occurrences, in order: the first
// place that applies takes occurrence 0, the next occurrence 1, and a
// place with Every takes all that remain. A size below 1 is a programming
// error and panics at start-up.
func At(off, size int, opts ...PlaceOpt) FieldOpt {
	if size < 1 {
		panic("decode: At with a size below 1")
	}
	p := Place{Off: off, Size: size}
	for _, o := range opts {
		o(&p)
	}
	return func(d *FieldDef) { d.Places = append(d.Places, p) }
}

// Bits says which bits of the place are the field's (read as one number in
// the place's byte order).
func Bits(mask uint64) PlaceOpt { return func(p *Place) { p.Mask = mask } }

// LE reads the place least significant byte first.
func LE() PlaceOpt { return func(p *Place) { p.LittleEndian = true } }

// HostOrder marks a number written in the sender's byte order.
func HostOrder() PlaceOpt { return func(p *Place) { p.HostOrder = true } }

// Every repeats the place every stride bytes, one occurrence each.
func Every(stride int) PlaceOpt { return func(p *Place) { p.Stride = stride } }

// In limits the place to layouts of the layer (values of Variant).
func In(variants ...int) PlaceOpt {
	return func(p *Place) { p.Variants = append(p.Variants, variants...) }
}

// Via converts the place's bits to the field's value.
func Via(f func(uint64) uint64) PlaceOpt { return func(p *Place) { p.Value = f } }

// Applies reports whether the place holds the field in layout variant
// (Variant).
func (p *Place) Applies(variant int) bool {
	return p.Variants == nil || slices.Contains(p.Variants, variant)
}

// Variant names the layout of one instance of o's layer, given its bytes,
// for fields whose place differs between layouts: the IP version (4 or 6),
// the LLC type byte (the message types place link IDs, QPNs and rkeys
// differently, and v1 and v2 their length), the CLC layout (CLCLayout:
// Accept/Confirm put the EID and the first-contact extension apart for
// SMC-R and SMC-D). Other layers have one layout, 0. It is -1 when layer
// is too short to say.
func Variant(o Owner, layer []byte) int {
	switch o {
	case OwnerIP, OwnerLLC:
		if len(layer) < 1 {
			return -1
		}
		if o == OwnerIP {
			return int(layer[0] >> 4)
		}
		return int(layer[0])
	case OwnerCLC:
		// struct smc_clc_msg_hdr: type at 4, typev1 in the low bits of 7.
		if len(layer) < clcHeaderLen {
			return -1
		}
		return CLCLayout(CLCType(layer[4]), SMCType(layer[7]&0x03))
	}
	return 0
}

// CLCLayout is the Variant of a CLC message of type t whose header names
// SMC type path (the chosen type of an Accept or Confirm).
func CLCLayout(t CLCType, path SMCType) int { return int(t)<<2 | int(path&0x03) }

// Locate finds occurrence k (0-based, counted within one instance of the
// owner's layer) of field d in layer, that instance's bytes from its
// header on. It returns the place and the value's offset in layer; ok is
// false when the field has no fixed place in this layout or the place
// does not fit in layer.
func (d FieldDef) Locate(layer []byte, k int) (p Place, off int, ok bool) {
	v := Variant(d.Owner, layer)
	for _, p := range d.Places {
		if !p.Applies(v) {
			continue
		}
		switch {
		case p.Stride > 0:
			off = p.Off + k*p.Stride
		case k > 0:
			k-- // this place holds one occurrence: the next place holds k-1
			continue
		default:
			off = p.Off
		}
		if off < 0 {
			off += len(layer)
		}
		if off < 0 || off+p.Size > len(layer) {
			return Place{}, 0, false
		}
		return p, off, true
	}
	return Place{}, 0, false
}
