package decode

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// Which of the folds may run: icrcFoldX needs PCLMULQDQ and SSE4.1,
// icrcFoldZ AVX-512 and its VPCLMULQDQ (whose OS support cpu checks).
var (
	haveFold  = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE41
	haveFoldZ = haveFold && cpu.X86.HasAVX && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VPCLMULQDQ
	// icrcDirectZ also loads bytes under a mask (AVX512BW) and shifts
	// by a register without flags (BMI2).
	haveDirectZ = haveFoldZ && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2
)

// directSum returns the ICRC of a RoCEv2 packet over IPv4 without
// options, pkt being the packet from its IP header to its ICRC (at least
// 40 bytes, at most 16*foldMax-20), read in place (icrcDirectZ), and
// whether it could: not where the bytes its loads leave out (up to 19
// before pkt, up to 63 after it, none of them read) lie on another page
// than pkt's first or last byte. A masked load whose left-out bytes fall
// on a page not mapped in does not fault, but takes a microcode assist of
// some 150 ns (the page after a packet a reader has not yet touched); a
// page of the packet's own is present by the time it is checked.
func directSum(pkt []byte) (uint32, bool) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(pkt)))
	e := p + uintptr(len(pkt)) // the message's end
	l := len(pkt) + 4
	first := p - uintptr(4+(-l&15)) // where the padded message would start
	last := first + uintptr((l+(-l&15)+63)&^63) - 1
	if first>>12 != p>>12 || last>>12 != (e-1)>>12 {
		return 0, false
	}
	return ^icrcDirectZ(pkt), true
}

// directMasks[pad] is what icrcDirectZ ORs into the first 64 bytes of a
// message with pad zeros in front: the four bytes of ones, and the IPv4
// type of service, TTL and header checksum, the UDP checksum and the BTH
// byte of FECN, BECN and reserved bits, as RoCEv2 masks them.
//
//lint:ignore U1000 read by icrcDirectZ (icrc_amd64.s)
var directMasks = func() (m [16][64]byte) {
	for pad := range m {
		for _, at := range []int{0, 1, 2, 3, 4 + 1, 4 + 8, 4 + 10, 4 + 11, 4 + 26, 4 + 27, 4 + 28 + 4} {
			m[pad][pad+at] = 0xFF
		}
	}
	return m
}()

//go:noescape
func icrcDirectZ(pkt []byte) uint32

// directSumX is directSum without AVX-512 (icrcDirectX), for a packet of
// at most directXMax bytes: it reads up to 19 bytes before pkt, none
// after, and can only where those lie on the page of pkt's first byte.
func directSumX(pkt []byte) (uint32, bool) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(pkt)))
	first := p - uintptr(4+(-(len(pkt)+4)&15)) // where the padded message starts
	if first>>12 != p>>12 {
		return 0, false
	}
	return ^icrcDirectX(pkt), true
}

// directXMax is the longest packet directSumX takes: past it SSE's fold, a
// chunk a multiply, is slower than crc32's over the body
// (BenchmarkICRCSum), which the copy path hands it.
const directXMax = 192

// directKeep[pad] clears, in the first chunk icrcDirectX loads, the pad
// bytes before the message (directMasks sets the four ones after them).
//
//lint:ignore U1000 read by icrcDirectX (icrc_amd64.s)
var directKeep = func() (m [16][16]byte) {
	for pad := range m {
		for i := pad; i < 16; i++ {
			m[pad][i] = 0xFF
		}
	}
	return m
}()

//go:noescape
func icrcDirectX(pkt []byte) uint32

// foldSum returns crc32.Update(^0, crc32.IEEETable, p1+p2): len(p1) and
// len(p2) are multiples of 16, together from 16 to 16*foldMax bytes.
func foldSum(p1, p2 []byte) uint32 {
	k := &foldRev[foldMax-(len(p1)+len(p2))/16]
	if haveFoldZ {
		return ^icrcFoldZ(p1, p2, k)
	}
	return ^icrcFoldX(p1, p2, k)
}

//go:noescape
func icrcFoldX(p1, p2 []byte, k *[2]uint64) uint32

//go:noescape
func icrcFoldZ(p1, p2 []byte, k *[2]uint64) uint32
