package decode

// Small wire helpers shared by every layer of this package.

func u24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }
