package capture

import (
	"bytes"

	"github.com/smcscope/smcscope/decode"
)

// Span is a byte range of a frame's Data; N == 0 means none.
type Span struct{ Off, N int }

// FieldSpan is where one value of a frame's record sits in the frame.
type FieldSpan struct {
	// Field holds the value's own bytes (its catalogue place, decode.At),
	// or nothing when the field has no fixed place or its bytes are not
	// in this frame.
	Field Span
	// Layer holds the bytes of the layer instance the value belongs to
	// (the part of it in this frame, for a CLC message completed by this
	// segment), or nothing: frame-reader fields that belong to no layer's
	// bytes, tracker fields.
	Layer Span
	// Place says how Field's bytes hold the value (bits, byte order).
	Place decode.Place
}

// FieldSpans says, for every value of f.Fields() (same index), where its
// bytes and its layer's bytes are in f.Data. It is meant for a user
// looking at one frame (the capture browser's hex pane), not for the
// per-frame path: it allocates.
//
// Occurrences are counted per layer instance, as the layers add them: an
// owner's first field coming back starts the next instance (the inner
// VLAN tag, the second CLC message of a segment), as in the -V tree.
func (f *Frame) FieldSpans() []FieldSpan {
	r := f.Fields()
	out := make([]FieldSpan, len(r.IDs))
	type state struct {
		inst  int            // instance of the owner's layer, -1 before its first field
		first decode.FieldID // the owner's first field in this frame
		start int            // where in f.Data the instance's bytes begin
		at    Span           // the instance's bytes in this frame
		bytes []byte         // the instance's bytes as decoded (Locate reads its layout)
		occ   map[decode.FieldID]int
	}
	var st [decode.NumOwners]state
	for i := range st {
		st[i].inst = -1
	}
	clcFrom := 0 // where the next CLC message is looked for in the TCP payload
	for i, id := range r.IDs {
		d := decode.Def(id)
		s := &st[d.Owner]
		if s.inst < 0 || id == s.first {
			if s.inst < 0 {
				s.first = id
			}
			s.inst++
			s.start, s.at, s.bytes = f.layerAt(d.Owner, s.inst, &clcFrom)
			s.occ = map[decode.FieldID]int{}
		}
		k := s.occ[id]
		s.occ[id] = k + 1
		out[i].Layer = s.at
		if s.bytes == nil {
			continue
		}
		p, off, ok := d.Locate(s.bytes, k)
		if !ok {
			continue
		}
		// Only bytes that are in this frame: a CLC message reassembled
		// from several segments has only its tail here.
		if lo := s.start + off; lo >= s.at.Off && lo+p.Size <= s.at.Off+s.at.N {
			out[i].Field, out[i].Place = Span{lo, p.Size}, p
		}
	}
	return out
}

// layerAt finds instance inst of o's layer: where its bytes start in
// f.Data (negative for a CLC message that began in an earlier segment),
// the part of them in the frame, and the bytes as decoded. Zero values
// mean the layer has no bytes in the frame.
func (f *Frame) layerAt(o decode.Owner, inst int, clcFrom *int) (start int, at Span, b []byte) {
	var c []byte
	switch o {
	case decode.OwnerFrame:
		return 0, Span{0, len(f.Data)}, nil
	case decode.OwnerEthernet:
		if f.Eth != nil {
			c = f.Eth.Contents
		}
	case decode.OwnerVLAN:
		if inst < len(f.VLAN) {
			c = f.VLAN[inst].Contents
		}
	case decode.OwnerIP:
		switch {
		case f.IPv4 != nil:
			c = f.IPv4.Contents
		case f.IPv6 != nil:
			c = f.IPv6.Contents
		}
	case decode.OwnerTCP:
		if t := f.TCPHeader(); t != nil {
			c = t.Contents
		}
	case decode.OwnerUDP:
		if f.UDP != nil {
			c = f.UDP.Contents
		}
	case decode.OwnerGRH:
		if f.GRH != nil {
			c = f.GRH.Contents
		}
	case decode.OwnerBTH:
		if f.BTH != nil {
			c = f.BTH.Contents
		}
	case decode.OwnerRDETH, decode.OwnerXRCETH:
		// Folded into the BTH layer: the 4 bytes after the 12-byte BTH.
		if f.BTH != nil && len(f.BTH.Contents) > 12 {
			c = f.BTH.Contents[12:]
		}
	case decode.OwnerRETH:
		if f.RETH != nil {
			c = f.RETH.Contents
		}
	case decode.OwnerAETH:
		if f.AETH != nil {
			c = f.AETH.Contents
		}
	case decode.OwnerImmDt:
		if f.ImmDt != nil {
			c = f.ImmDt.Contents
		}
	case decode.OwnerRWWI:
		if f.RWWI != nil && f.BTH != nil {
			c = f.BTH.ImmBytes()
		}
	case decode.OwnerDump:
		if f.Dump != nil {
			c = f.Dump.Contents
		}
	case decode.OwnerIETH:
		if f.IETH != nil {
			c = f.IETH.Contents
		}
	case decode.OwnerDETH:
		if f.DETH != nil {
			c = f.DETH.Contents
		}
	case decode.OwnerICRC, decode.OwnerICRCCheck:
		// The BTH keeps its payload without pad and ICRC; the ICRC
		// follows the pad (IBTA vol. 1 §9.2, PadCnt).
		if b := f.BTH; b != nil {
			if off, ok := f.offsetOf(b.Contents); ok {
				off += len(b.Contents) + len(b.Payload) + int(b.PadCount)
				if off+4 <= len(f.Data) {
					c = f.Data[off : off+4]
				}
			}
		}
	case decode.OwnerLLC:
		if f.LLC != nil {
			c = f.LLC.Contents
		}
	case decode.OwnerCDC:
		if f.CDC != nil {
			c = f.CDC.Contents
		}
	case decode.OwnerCLC:
		if inst < len(f.CLC) {
			return f.clcAt(f.CLC[inst].Contents, clcFrom)
		}
	}
	off, ok := f.offsetOf(c)
	if !ok {
		return 0, Span{}, nil
	}
	return off, Span{off, len(c)}, c
}

// offsetOf finds b in f.Data by capacity arithmetic (every layer's
// Contents is a subslice of f.Data, as checkICRC relies on), confirmed by
// comparing addresses: a slice that is not part of f.Data has no offset.
func (f *Frame) offsetOf(b []byte) (int, bool) {
	off := cap(f.Data) - cap(b)
	if len(b) == 0 || off < 0 || off+len(b) > len(f.Data) || &f.Data[off] != &b[0] {
		return 0, false
	}
	return off, true
}

// clcAt finds a CLC message in this frame's TCP payload. The reassembler
// hands the message over as a copy, so it is looked for by its bytes from
// *from on (messages of one segment come in stream order): the whole of
// it, or, for a message this segment completed, its tail at the start of
// what is left. A tail must hold the trailer (struct smc_clc_msg_trail,
// an eyecatcher): a shorter one could match by chance.
func (f *Frame) clcAt(msg []byte, from *int) (start int, at Span, b []byte) {
	if f.TCP == nil {
		return 0, Span{}, nil
	}
	pay := f.TCP.Payload
	base, ok := f.offsetOf(pay)
	if !ok || *from > len(pay) {
		return 0, Span{}, nil
	}
	rest := pay[*from:]
	if i := bytes.Index(rest, msg); i >= 0 {
		off := base + *from + i
		*from += i + len(msg)
		return off, Span{off, len(msg)}, msg
	}
	for n := min(len(msg)-1, len(rest)); n >= 4; n-- {
		if bytes.Equal(rest[:n], msg[len(msg)-n:]) {
			off := base + *from
			*from += n
			return off - (len(msg) - n), Span{off, n}, msg
		}
	}
	return 0, Span{}, nil
}
