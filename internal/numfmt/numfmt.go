// Package numfmt formats integers into byte slices as strconv does, for
// the per-frame output paths (text lines, -T json), where strconv's
// AppendUint was a fifth of the JSON writer: it formats into a 64-byte
// buffer on the stack, one or two digits at a time, and then copies the
// digits out. The functions here size the number first and store its
// digits in place in blocks of eight (two words of a table of four-digit
// words), by divisions by constants (multiplications).
//
// Every function is tested against strconv or fmt on values around each
// power of the base and on random values (numfmt_test.go).
package numfmt

import (
	"encoding/binary"
	"math/bits"
)

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
	if u < 100 { // and 10 or more: AppendUint wrote a single digit
		return append(dst, digits2[2*u], digits2[2*u+1])
	}
	if l := len(dst); u < 1e8 && cap(dst)-l >= 8 {
		// Up to eight digits (nearly every number of a frame): one word
		// stored whole (Word8), without appendDigits' general case.
		w, n := Word8(u)
		binary.LittleEndian.PutUint64(dst[l:l+8], w)
		return dst[:l+n]
	}
	return appendDigits(dst, u, DecimalLen(u))
}

// appendDigits appends u as exactly n decimal digits (n at least u's
// digit count: leading zeros pad it). Up to 16 digits, with 16 bytes of
// room, it writes blocks of eight (put8) without a loop: u scaled to fill
// eight digits (u·10^(8-n)) puts its digits first and zeros after, past
// the returned length; above eight digits the low eight are written over
// those zeros.
func appendDigits(dst []byte, u uint64, n int) []byte {
	l := len(dst)
	if n <= 16 && cap(dst)-l >= 16 {
		w := dst[l : l+16]
		if n <= 8 {
			put8(w[:8], uint32(u*pow10[8-n]))
		} else {
			hi, lo := u/1e8, u%1e8
			put8(w[:8], uint32(hi*pow10[16-n]))
			put8(w[n-8:n], uint32(lo))
		}
		return dst[:l+n]
	}
	dst = grow(dst, n)
	putDecimal(dst[len(dst)-n:], u)
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
	if width < len(pow10) && u < pow10[width] {
		// Padded (a timestamp's nanoseconds on every line): the width
		// is the length, without sizing u.
		return appendDigits(dst, u, max(width, 1))
	}
	return appendDigits(dst, u, max(DecimalLen(u), width))
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
	binary.LittleEndian.PutUint64(b[:8], digits8(v))
}

// digits8 returns the eight decimal digits of v (below 1e8) as the bytes
// of a little-endian word, the first digit in the lowest byte: the two
// halves of four digits from digits4.
func digits8(v uint32) uint64 {
	hi := v / 10000
	return uint64(digits4[hi]) | uint64(digits4[v-hi*10000])<<32
}

// digits4[n] holds the four digits of n (below 10000) as the bytes of a
// little-endian word, the first digit in the lowest byte. It is made once
// at start-up and only read.
var digits4 = func() (t [10000]uint32) {
	for n := range t {
		t[n] = uint32('0'+n/1000) | uint32('0'+n/100%10)<<8 | uint32('0'+n/10%10)<<16 | uint32('0'+n%10)<<24
	}
	return t
}()

// Word8 returns the decimal digits of u (below 1e8) as the bytes of a
// little-endian word, the first digit in the lowest byte and nothing after
// the last, and their count: a caller with eight bytes of room stores the
// whole word and keeps n bytes, one store whatever the length (the -T
// fields direct path writes every column so).
func Word8(u uint64) (w uint64, n int) {
	// The leading zero digits are the word's lowest bytes that are '0':
	// counted from the digits at hand, not sized apart (DecimalLen).
	d := digits8(uint32(u))
	z := min(bits.TrailingZeros64(d^0x3030303030303030)&^7, 56) // 0 keeps one digit
	return d >> z, 8 - z>>3
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
	if l := len(dst); n <= 16 && cap(dst)-l >= 16 {
		// In words of eight digits (hex8), as appendDigits does in
		// decimal: a digit a loop turn was most of a RoCE WRITE's line
		// (its 16-digit VA). u scaled to fill its word puts its digits
		// first and zeros after, past the returned length; above eight
		// digits the low eight are written over those zeros.
		w := dst[l : l+16]
		if n <= 8 {
			binary.BigEndian.PutUint64(w[:8], hex8(uint32(u)<<(4*(8-n))))
		} else {
			binary.BigEndian.PutUint64(w[:8], hex8(uint32(u>>32)<<(4*(16-n))))
			binary.BigEndian.PutUint64(w[n-8:n], hex8(uint32(u)))
		}
		return dst[:l+n]
	}
	dst = grow(dst, n)
	b := dst[len(dst)-n:]
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = hexDigits[u&15]
		u >>= 4
	}
	return dst
}

// AppendHex24 appends the six hex digits of a 24-bit v (a queue pair or
// packet sequence number, two on every RoCE line), zero-padded as
// AppendHexPadded(dst, v, 6). With eight bytes of room the digits are made
// in a word at once (hex8) and stored whole; the two bytes stored past
// them lie beyond the returned length. A larger v goes the general way.
func AppendHex24(dst []byte, v uint32) []byte {
	l := len(dst)
	if v >= 1<<24 || cap(dst)-l < 8 {
		return AppendHexPadded(dst, uint64(v), 6)
	}
	binary.BigEndian.PutUint64(dst[l:l+8], hex8(v<<8))
	return dst[:l+6]
}

// AppendHexBytes appends the lowercase hex of b, two digits a byte, as
// encoding/hex does: each byte's two digits by one look-up (hexPairs),
// four bytes' stored as one word (two look-ups and two stores a byte were
// an eighth of -T json over the payloads of RDMA writes, smc.stream).
func AppendHexBytes(dst []byte, b []byte) []byte {
	l := len(dst)
	dst = grow(dst, 2*len(b))
	out := dst[l:]
	t := &hexPairs
	for len(b) >= 4 && len(out) >= 8 {
		binary.LittleEndian.PutUint64(out, uint64(t[b[0]])|uint64(t[b[1]])<<16|uint64(t[b[2]])<<32|uint64(t[b[3]])<<48)
		b, out = b[4:], out[8:]
	}
	for i, c := range b {
		binary.LittleEndian.PutUint16(out[2*i:], t[c])
	}
	return dst
}

// hexPairs[c] holds the two lowercase hex digits of c as the bytes of a
// little-endian word, the first in the lower byte. It is made once at
// start-up and only read.
var hexPairs = func() (t [256]uint16) {
	for c := range t {
		t[c] = uint16(hexDigits[c>>4]) | uint16(hexDigits[c&15])<<8
	}
	return t
}()

// hex8 returns the eight lowercase hex digits of v as the bytes of a word,
// the first digit in the most significant byte: each nibble is spread to a
// byte of its own, and turned into '0'-'9' or 'a'-'f' without a branch.
func hex8(v uint32) uint64 {
	x := uint64(v)
	x = (x | x<<16) & 0x0000FFFF0000FFFF
	x = (x | x<<8) & 0x00FF00FF00FF00FF
	x = (x<<4 | x) & 0x0F0F0F0F0F0F0F0F // high nibble of each byte pair first
	// A byte of 10 or more gets 'a'-'0'-10 more: adding 6 carries into bit 4.
	letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101
	return x + 0x3030303030303030 + letters*('a'-'0'-10)
}

// AppendIPv4 appends the dotted-quad form of ip, as netip.Addr.AppendTo
// does for an IPv4 address (without making the Addr).
func AppendIPv4(dst []byte, ip [4]byte) []byte {
	for i, b := range ip {
		if i > 0 {
			dst = append(dst, '.')
		}
		// Digits by division of a byte (multiplications), no table:
		// addresses are on every text line and JSON frame.
		switch {
		case b >= 100:
			dst = append(dst, '0'+b/100, '0'+b/10%10, '0'+b%10)
		case b >= 10:
			dst = append(dst, '0'+b/10, '0'+b%10)
		default:
			dst = append(dst, '0'+b)
		}
	}
	return dst
}

// Count writes a count and its noun for a message: "1 frame", "2 frames"
// (the noun's plural made with an s).
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return string(AppendInt(nil, int64(n))) + " " + noun + "s"
}
