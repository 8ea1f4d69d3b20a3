package track

// Cursor is a CDC producer or consumer cursor: Count is a byte offset in an
// RMBE and Wrap counts completed passes over it (union smc_host_cursor,
// net/smc/smc_cdc.h).
type Cursor struct {
	Wrap  uint16
	Count uint32
}

// Sub returns how many bytes lie between prev and c in an RMBE of size
// bytes. The wrap counter is 16 bits and may itself wrap, so the wrap
// difference is taken modulo 2^16. ok is false when the difference cannot
// be known (size unknown and the wrap moved) or when c is behind prev,
// which a well-behaved peer never sends.
func (c Cursor) Sub(prev Cursor, size uint32) (n uint64, ok bool) {
	dw := uint64(uint16(c.Wrap - prev.Wrap))
	if dw == 0 {
		if c.Count < prev.Count {
			return 0, false
		}
		return uint64(c.Count - prev.Count), true
	}
	if size == 0 || dw >= 0x8000 {
		return 0, false
	}
	d := int64(dw)*int64(size) + int64(c.Count) - int64(prev.Count)
	if d < 0 {
		return 0, false
	}
	return uint64(d), true
}

// IsZero reports whether c is the all-zero cursor of a fresh connection
// (and of failover-validation CDCs).
func (c Cursor) IsZero() bool { return c.Wrap == 0 && c.Count == 0 }

// advance moves c on by n bytes in an RMBE of size bytes (0: unknown, no
// wrap), as smc_curs_add does (net/smc/smc_cdc.h).
func (c Cursor) advance(n, size uint32) Cursor {
	c.Count += n
	for size != 0 && c.Count >= size {
		c.Count -= size
		c.Wrap++
	}
	return c
}

// psnDiff compares two 24-bit packet sequence numbers the way an RC
// responder does: d > 0 means a is d packets ahead of b, d < 0 behind.
func psnDiff(a, b uint32) int32 {
	d := (a - b) & 0xFFFFFF
	if d >= 0x800000 {
		return int32(d) - 0x1000000
	}
	return int32(d)
}

// seqDiff is psnDiff for the 16-bit CDC sequence number, which Linux
// compares with the same serial-number rule.
func seqDiff(a, b uint16) int16 { return int16(a - b) }
