package smcnl

import "encoding/binary"

func nativeOrder() binary.ByteOrder { return binary.NativeEndian }

func isLittle() bool {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], 1)
	return b[0] == 1
}
