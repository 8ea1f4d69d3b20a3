// Package numfmt formats integers into byte slices as strconv does, for
// the per-frame output paths (text lines, -T json), where strconv's
// AppendUint was a fifth of the JSON writer: it formats into a 64-byte
// buffer on the stack, one or two digits at a time with a general
// division, and then copies the digits out. The functions here size the
// number first and write the digits in place, two at a time, with
// divisions by constants (multiplications), in 32-bit arithmetic where
// the value allows.
//
// Every function is tested against strconv on values around each power
// of the base and on random values (numfmt_test.go).
package numfmt

import "math/bits"

// digits2 holds "00" to "99": the two digits of n are digits2[2n:2n+2].
const digits2 = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

const hexDigits = "0123456789abcdef"

var pow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// DecimalLen is the number of decimal digits of u (1 for 0).
func DecimalLen(u uint64) int {
	// bits.Len64(u)*1233>>12 is floor(log10(2^len)), the digit count of
	// the smallest number of that bit length, less one; one comparison
	// corrects it.
	n := bits.Len64(u) * 1233 >> 12
	if u >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// grow extends dst by n bytes and returns the extended slice.
func grow(dst []byte, n int) []byte {
	l := len(dst)
	if cap(dst)-l < n {
		dst = append(dst, make([]byte, n)...) // growslice without a temporary
		return dst
	}
	return dst[:l+n]
}

// AppendUint is strconv.AppendUint(dst, u, 10). A single digit (flags,
// small counts: a third of the numbers of a JSON frame) is written by the
// inlined caller.
func AppendUint(dst []byte, u uint64) []byte {
	if u < 10 {
		return append(dst, byte('0'+u))
	}
	return appendUint(dst, u)
}

func appendUint(dst []byte, u uint64) []byte {
	if u < 100 {
		if u < 10 {
			return append(dst, byte('0'+u))
		}
		return append(dst, digits2[2*u], digits2[2*u+1])
	}
	n := DecimalLen(u)
	dst = grow(dst, n)
	b := dst[len(dst)-n:]
	i := n
	for u >= 1e8 {
		q := u / 1e8
		put8(b[i-8:i], uint32(u-q*1e8))
		u = q
		i -= 8
	}
	// The same digits as putDecimal, without its padding: u has i digits.
	v := uint32(u)
	for v >= 100 {
		r := v % 100
		v /= 100
		i -= 2
		b[i], b[i+1] = digits2[2*r], digits2[2*r+1]
	}
	if v >= 10 {
		b[0], b[1] = digits2[2*v], digits2[2*v+1]
	} else {
		b[0] = byte('0' + v)
	}
	return dst
}

// AppendInt is strconv.AppendInt(dst, i, 10).
func AppendInt(dst []byte, i int64) []byte {
	if i < 0 {
		return AppendUint(append(dst, '-'), -uint64(i))
	}
	return AppendUint(dst, uint64(i))
}

// AppendPadded appends u in decimal with leading zeros to width digits
// (more digits when u needs them), as fmt's %0*d does for non-negative u.
func AppendPadded(dst []byte, u uint64, width int) []byte {
	n := max(DecimalLen(u), width)
	dst = grow(dst, n)
	putDecimal(dst[len(dst)-n:], u)
	return dst
}

// putDecimal writes u right-aligned into b, filling what the digits leave
// on the left with zeros.
func putDecimal(b []byte, u uint64) {
	i := len(b)
	for u >= 1e8 && i >= 8 {
		// Eight digits at a time in 32 bits: q is the rest.
		q := u / 1e8
		put8(b[i-8:i], uint32(u-q*1e8))
		u = q
		i -= 8
	}
	v := uint32(u)
	for v >= 100 && i >= 2 {
		r := v % 100
		v /= 100
		i -= 2
		b[i], b[i+1] = digits2[2*r], digits2[2*r+1]
	}
	for i > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
}

// put8 writes v (below 1e8) as exactly eight digits into b[:8].
func put8(b []byte, v uint32) {
	_ = b[7]
	hi, lo := v/10000, v%10000
	h1, h0 := hi/100, hi%100
	l1, l0 := lo/100, lo%100
	b[0], b[1] = digits2[2*h1], digits2[2*h1+1]
	b[2], b[3] = digits2[2*h0], digits2[2*h0+1]
	b[4], b[5] = digits2[2*l1], digits2[2*l1+1]
	b[6], b[7] = digits2[2*l0], digits2[2*l0+1]
}

// HexLen is the number of lowercase hex digits of u (1 for 0).
func HexLen(u uint64) int {
	return max((bits.Len64(u)+3)/4, 1)
}

// AppendHex is strconv.AppendUint(dst, u, 16).
func AppendHex(dst []byte, u uint64) []byte {
	return AppendHexPadded(dst, u, 1)
}

// AppendHexPadded appends u in lowercase hex with leading zeros to width
// digits (more digits when u needs them), as fmt's %0*x.
func AppendHexPadded(dst []byte, u uint64, width int) []byte {
	n := max(HexLen(u), width)
	dst = grow(dst, n)
	b := dst[len(dst)-n:]
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = hexDigits[u&15]
		u >>= 4
	}
	return dst
}

// AppendIPv4 appends the dotted-quad form of ip, as netip.Addr.AppendTo
// does for an IPv4 address (without making the Addr).
func AppendIPv4(dst []byte, ip [4]byte) []byte {
	for i, b := range ip {
		if i > 0 {
			dst = append(dst, '.')
		}
		switch {
		case b >= 100:
			r := b % 100
			dst = append(dst, '0'+b/100, digits2[2*int(r)], digits2[2*int(r)+1])
		case b >= 10:
			dst = append(dst, digits2[2*int(b)], digits2[2*int(b)+1])
		default:
			dst = append(dst, '0'+b)
		}
	}
	return dst
}
