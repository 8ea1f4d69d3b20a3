package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestRoCEPathDoesNotAllocate: decoding a RoCE frame (WRITE, CDC SEND, ACK,
// LLC SEND) and filling its field record must not touch the heap once the
// reader is warm; the ICRC check (decode.ICRCRoCEv2) is measured apart so
// that a failure names the culprit.
func TestRoCEPathDoesNotAllocate(t *testing.T) {
	t.Run("decode+fields", func(t *testing.T) { testRoCEAllocs(t, false) })
	t.Run("decode+fields+icrc", func(t *testing.T) { testRoCEAllocs(t, true) })
}

func testRoCEAllocs(t *testing.T, icrc bool) {
	raw := readRaw(t, pingpong)
	for _, i := range []int{13, 21, 22, 23} { // frames 14 (LLC), 22 (WRITE), 23 (CDC), 24 (ACK)
		src := &sliceSource{frames: []rawFrame{raw[i]}}
		r, err := NewReader("a", src, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		r.SetICRCCheck(icrc)
		run := func() {
			src.i = 0
			f, err := r.Next()
			if err != nil || f.BTH == nil {
				t.Fatalf("frame %d: %v", i+1, err)
			}
			if f.ICRC.Checked != icrc {
				t.Fatalf("frame %d: ICRC checked %v, want %v", i+1, f.ICRC.Checked, icrc)
			}
			f.Fields()
		}
		run()
		if n := testing.AllocsPerRun(200, run); n != 0 {
			t.Errorf("frame %d: %v allocations per frame", i+1, n)
		}
	}
}
