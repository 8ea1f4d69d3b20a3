package browser

import (
	"context"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
)

// FuzzFilterDirect puts one frame amid pingpong.pcap's (after its
// handshakes, so that its queue pairs are known) and holds the
// whole-file filter, which matches the commonest SMC-R frames on the
// values read at their fixed offsets, to the pass that decodes every
// frame whole, for filters on every kind of value that path reads; the
// seeds are the capture's own frames.
func FuzzFilterDirect(f *testing.F) {
	frames, _ := testutil.ReadFrames(f, filepath.Join(testutil.SamplesDir(f), "pingpong.pcap"))
	for i, p := range frames {
		if (i >= 8 && i < 24) || i%100 == 0 { // the handshake, then every shape of RoCE frame
			f.Add(p.Data)
		}
	}
	var flts []*filter.Filter
	for _, e := range []string{"smc.cdc.seq >= 1", "roce.bth.opcode == 17 and roce.aeth.msn > 2", "roce.reth.len == 64 or roce.reth.rkey > 0",
		"ip.dst == 10.10.0.1 and eth.src == 52:54:00:0a:00:02", "smc.cdc.flags.peer_conn_closed or roce.bth.ackreq", "frame.len < 100 and roce.icrc != 0",
		"udp.srcport > 1 and roce.bth.psn > 7864351", "smc.llc or tcp or frame.error",
		"smc.conn.id == 1 and smc.cdc.seq > 2 or smc.expert"} {
		flt, err := filter.Compile(e)
		if err != nil {
			f.Fatal(err)
		}
		flts = append(flts, flt)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2)) // the batched pass too
		mid := slices.Clone(frames)
		mid = slices.Insert(mid, 60, testutil.Packet{CI: gopacket.CaptureInfo{Timestamp: mid[59].CI.Timestamp, CaptureLength: len(data), Length: len(data)}, Data: data})
		p := testutil.WriteFrames(t, "mid.pcap", layers.LinkTypeEthernet, mid)
		direct, general := indexAs(t, p, false), indexAs(t, p, true)
		for _, flt := range flts {
			got, err1 := direct.Filter(context.Background(), flt)
			want, err2 := general.Filter(context.Background(), flt)
			if !slices.Equal(got, want) || (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s: %v (%v), decoding every frame %v (%v)", flt, got, err1, want, err2)
			}
		}
	})
}
