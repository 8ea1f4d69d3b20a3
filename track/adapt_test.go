package track

import (
	"testing"

	"github.com/smcscope/smcscope/capture"
)

// SMCQP takes the QP key straight from the frame; it must agree with the
// key that fill builds for Feed, and answer false for an unknown QP.
func TestSMCQPMatchesFill(t *testing.T) {
	tr := feedFile(t, refDir+"pingpong.pcap", Options{}, 0)
	known := 0
	eachFrame(t, refDir+"pingpong.pcap", func(f *capture.Frame) {
		if f.BTH == nil {
			return
		}
		var in input
		fill(&in, f)
		_, want := tr.byQP[qpKey{in.roce.src, in.roce.dst, in.roce.destQP}]
		want = want && in.isRoCE
		if got := tr.SMCQP(f); got != want {
			t.Fatalf("frame %d: SMCQP = %v, fill's key says %v", f.Number, got, want)
		}
		if want {
			known++
			g, b := *f, *f.BTH
			b.DestQP ^= 0xffffff
			g.BTH = &b
			if tr.SMCQP(&g) {
				t.Fatalf("frame %d: SMCQP true for unknown QP %#x", f.Number, b.DestQP)
			}
		}
	})
	if known == 0 {
		t.Fatal("no RoCE frame on a known QP: the comparison proved nothing")
	}
}
