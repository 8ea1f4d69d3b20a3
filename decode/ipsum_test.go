package decode

import (
	"encoding/binary"
	"slices"
	"testing"
)

// TestIPv4HeaderSumOK holds the check to RFC 1071's sum over every header
// of a range of lengths and values, and to its rules for a checksum not
// filled in and a header it cannot read.
func TestIPv4HeaderSumOK(t *testing.T) {
	ref := func(h []byte) uint16 {
		var s uint32
		for i := 0; i < len(h); i += 2 {
			if i != 10 {
				s += uint32(binary.BigEndian.Uint16(h[i:]))
			}
		}
		for s>>16 != 0 {
			s = s>>16 + s&0xFFFF
		}
		return ^uint16(s)
	}
	seed := uint32(1)
	for ihl := 5; ihl <= 15; ihl++ {
		for k := 0; k < 2000; k++ {
			h := make([]byte, ihl*4+8)
			for i := range h {
				seed = seed*1664525 + 1013904223
				h[i] = byte(seed >> 24)
			}
			h[0] = 0x40 | byte(ihl)
			sum := ref(h[:ihl*4])
			if sum == 0 {
				continue // 0 is "not filled in"
			}
			binary.BigEndian.PutUint16(h[10:], sum)
			if ihl == 5 && !IPv4Header20SumOK((*[20]byte)(h)) {
				t.Fatalf("%x verifies by RFC 1071, not by IPv4Header20SumOK", h[:20])
			}
			if !IPv4HeaderSumOK(h) {
				t.Fatalf("ihl %d: %x verifies by RFC 1071, not here", ihl, h[:ihl*4])
			}
			if got, want := IPv4HeaderSum(h); got != sum || want != sum {
				t.Fatalf("ihl %d: IPv4HeaderSum %#x %#x, want %#x twice", ihl, got, want, sum)
			}
			at := 1 + seed%uint32(ihl*4-1)
			h[at] ^= 1 << (seed >> 29)
			if IPv4HeaderSumOK(h) {
				t.Fatalf("ihl %d: a flipped bit in %x still verifies", ihl, h[:ihl*4])
			}
			if ihl == 5 && IPv4Header20SumOK((*[20]byte)(h)) != (h[10]|h[11] == 0) {
				t.Fatalf("a flipped bit in %x: IPv4Header20SumOK disagrees", h[:20])
			}
			if got, want := IPv4HeaderSum(h); want != ref(h[:ihl*4]) || got != binary.BigEndian.Uint16(h[10:]) {
				t.Fatalf("ihl %d: IPv4HeaderSum %#x %#x, want %#x computed", ihl, got, want, ref(h[:ihl*4]))
			}
		}
	}
	h := make([]byte, 20)
	h[0] = 0x45
	h[8] = 64
	if !IPv4HeaderSumOK(h) || !IPv4Header20SumOK((*[20]byte)(h)) {
		t.Error("a checksum of 0 (not filled in) is damage")
	}
	for _, bad := range [][]byte{h[:19], {0x65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, append(append([]byte{0x46}, h[1:]...), 0, 0)} {
		if !IPv4HeaderSumOK(bad) {
			t.Errorf("%x: a header it cannot read is damage", bad)
		}
	}
	// A header of 20 bytes whose first byte is not 0x45 is one a decoder
	// read as plain: its checksum, made for 0x45, fails over the bytes.
	p := slices.Clone(h)
	p[10], p[11] = 0x7a, 0xff // 0x4500 + 0x4000 (TTL 64) + 0x7aff = 0xffff
	if !IPv4HeaderSumOK(p) {
		t.Fatalf("%x: the plain header's checksum fails", p)
	}
	for _, b0 := range []byte{0x46, 0x4d, 0x65, 0x43} {
		p[0] = b0
		if IPv4HeaderSumOK(p) {
			t.Errorf("%x: its first byte damaged, the checksum verifies", p)
		}
	}
}
