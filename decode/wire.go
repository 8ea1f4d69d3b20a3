package decode

import "strconv"

// Small wire helpers shared by every layer of this package.

func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// appendHexPad appends v in lower-case hex, zero-padded to width digits.
func appendHexPad(dst []byte, v uint64, width int) []byte {
	var buf [16]byte
	s := strconv.AppendUint(buf[:0], v, 16)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}
