package capture

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestUnixNano: the time a Reader works out per frame is CI.Timestamp's,
// on every capture (pcap and pcapng read as a stream), and on
// record headers whose fraction is out of range (time.Unix carries it
// into the seconds; the sum is the same).
func TestUnixNano(t *testing.T) {
	check := func(t *testing.T, r *Reader) int {
		t.Helper()
		n := 0
		for {
			f, err := r.Next()
			if err != nil {
				return n
			}
			n++
			if got, want := f.UnixNano(), f.CI.Timestamp.UnixNano(); got != want {
				t.Fatalf("frame %d: UnixNano %d, CI.Timestamp %d (%v)", f.Number, got, want, f.CI.Timestamp)
			}
		}
	}
	for _, p := range testutil.AllCaptures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			r, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			if check(t, r) == 0 {
				t.Error("no frames")
			}
			r.Close()
		})
	}
	// Microsecond and nanosecond files, in both byte orders, with
	// fractions up to the largest 32-bit value. Each file's seconds
	// follow each other: a header the reader finds implausible (a
	// fraction of a second past a second) is read as a record where
	// records go on after it, in times that follow (pcapFile.chain).
	for _, magic := range []uint32{0xa1b2c3d4, 0xa1b23c4d} {
		for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
			for _, times := range [][][2]uint32{
				{{1700000000, 0}, {1700000000, 999999}, {1700000000, 1000000}, {1700000001, 0xffffffff}, {1700000002, 0x80000000}},
				{{0, 0}, {12, 0x80000000}},
				{{0xffffffff, 0xffffffff}, {0xffffffff, 0}},
			} {
				var b bytes.Buffer
				hdr := make([]byte, 24)
				order.PutUint32(hdr[0:], magic)
				order.PutUint16(hdr[4:], 2)
				order.PutUint16(hdr[6:], 4)
				order.PutUint32(hdr[16:], 65535)
				order.PutUint32(hdr[20:], 1) // Ethernet
				b.Write(hdr)
				for _, ts := range times {
					rec := make([]byte, 16+14)
					order.PutUint32(rec[0:], ts[0])
					order.PutUint32(rec[4:], ts[1])
					order.PutUint32(rec[8:], 14)
					order.PutUint32(rec[12:], 14)
					b.Write(rec)
				}
				r, err := NewFileReader("ts.pcap", bytes.NewReader(b.Bytes()))
				if err != nil {
					t.Fatal(err)
				}
				if n := check(t, r); n != len(times) {
					t.Errorf("magic %#x %v, times %v: %d frames, want %d", magic, order, times, n, len(times))
				}
			}
		}
	}
}
