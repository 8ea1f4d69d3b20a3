// Package textcache hands out strings for byte texts that repeat from
// frame to frame: the EIDs of CLC Proposals and Accepts, an FCE's
// hostname. A capture carries few distinct ones, and a string made per
// message was most of the garbage of a capture of short connections
// (hundreds of thousands of handshakes), which made the peak memory of a
// run grow with its length until the first collection.
package textcache

// Cache keeps the last few texts. The zero value is ready to use; a
// Cache is not safe for concurrent use.
type Cache struct {
	s    [4]string
	next int
}

// String returns b as a string: one of the kept ones when it is equal
// (no allocation), else a new one, which replaces the oldest kept.
func (c *Cache) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	for _, s := range c.s {
		if s == string(b) { // compared in place: no string is made
			return s
		}
	}
	s := string(b)
	c.s[c.next] = s
	c.next = (c.next + 1) % len(c.s)
	return s
}
