package decode

// Small wire helpers shared by every layer of this package.

func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// appendHexPad appends v in lower-case hex, zero-padded to width digits.
// Every summary line has a QPN and a PSN in hex: digits straight from the
// nibbles cost a fraction of strconv's general path.
func appendHexPad(dst []byte, v uint64, width int) []byte {
	n := 1
	if width > 0 && width < 16 && v < 1<<(4*uint(width)) {
		n = width // the usual case: the value fits the width
	}
	for x := v >> (4 * uint(n)); x != 0; x >>= 4 {
		n++
	}
	n = max(n, width)
	for s := (n - 1) * 4; s >= 0; s -= 4 {
		dst = append(dst, lowerHex[v>>uint(s)&15])
	}
	return dst
}

const lowerHex = "0123456789abcdef"
