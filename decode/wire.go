package decode

import "github.com/smcscope/smcscope/internal/numfmt"

// Small wire helpers shared by every layer of this package.

func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// appendHexPad appends v in lower-case hex, zero-padded to width digits
// (numfmt.AppendHexPadded; the BTH's QPN and PSN take AppendHex24).
func appendHexPad(dst []byte, v uint64, width int) []byte {
	return numfmt.AppendHexPadded(dst, v, width)
}

const lowerHex = "0123456789abcdef"
