package decode

import (
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
)

// TestSMCPayloadCounts counts the LLC and CDC layers the parser finds in
// every capture. The expected numbers were counted by hand with tshark:
// pingpong.pcap has 1048 RC SEND Only frames, 1023 with payload byte 0xfe
// (CDC) and 25 LLCs (2x 0x21, 2x 0x22, 17x 0x24, 4x 0x29). The public
// rxe captures (perftest, NCCL, rdma_cm, rping, ibv_*_pingpong) carry RC
// SEND First/Only payloads of 4, 8, 16, 56 and 1024 bytes only — none is
// 44 bytes or a v2 LLC — so nothing there may be claimed as SMC.
func TestSMCPayloadCounts(t *testing.T) {
	want := map[string][2]int{ // file -> {LLC, CDC}
		"pingpong.pcap": {25, 1023},
		"erspan.pcap":   {25, 42}, // the frames as sent; their ERSPAN copies are GRE
	}
	for _, path := range roceCaptures(t) {
		name := filepath.Base(path)
		rp := newRoceParser()
		var llc, cdc int
		for i, frame := range roceReadPcap(t, path) {
			if _, _, ok := roceSplit(frame); !ok {
				continue
			}
			if err := rp.decode(frame); err != nil {
				t.Fatalf("%s frame %d: %v", name, i+1, err)
			}
			if rp.has(LayerTypeLLC) {
				llc++
			}
			if rp.has(LayerTypeCDC) {
				cdc++
			}
		}
		if got := [2]int{llc, cdc}; got != want[name] {
			t.Errorf("%s: LLC %d CDC %d, want LLC %d CDC %d", name, llc, cdc, want[name][0], want[name][1])
		}
	}
}

func TestSMCPayloadType(t *testing.T) {
	cdc := roceSendPayload(t, "pingpong.pcap", 23)
	llc44 := roceSendPayload(t, "pingpong.pcap", 14)
	llc88 := roceSendPayload(t, "pingpong.pcap", 18)
	v1 := roceVector(t, "llc_v1_delete_link_req_all_orderly")
	v1cdc := roceVector(t, "cdc_v1_seq1_token3_prod13")
	clone := func(b []byte) []byte { return append([]byte(nil), b...) }
	// The v2 length written big-endian, as an s390 host would (§3.2).
	llc88be := clone(llc88)
	llc88be[1], llc88be[2] = llc88[2], llc88[1]

	cases := []struct {
		name string
		p    []byte
		want gopacket.LayerType
	}{
		{"CDC frame 23", cdc, LayerTypeCDC},
		{"CDC v1 vector", v1cdc, LayerTypeCDC},
		{"LLC v2 44 B", llc44, LayerTypeLLC},
		{"LLC v2 88 B", llc88, LayerTypeLLC},
		{"LLC v2 88 B big-endian length", llc88be, LayerTypeLLC},
		{"LLC v1 vector", v1, LayerTypeLLC},
		{"CDC one byte short", cdc[:43], gopacket.LayerTypePayload},
		{"CDC one byte long", append(clone(cdc), 0), gopacket.LayerTypePayload},
		{"LLC v2 cut (SEND First)", llc88[:64], gopacket.LayerTypePayload},
		{"LLC v1 with v1 length but 45 B", append(clone(v1), 0), gopacket.LayerTypePayload},
		{"empty", nil, gopacket.LayerTypePayload},
	}
	for _, c := range cases {
		if got := SMCPayloadType(c.p); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Every type byte outside the SMC codes is refused, even with a
	// matching length byte.
	for b := range 256 {
		p := clone(cdc)
		p[0] = byte(b)
		got := SMCPayloadType(p)
		smc := b == 0xFE || (b >= 1 && b <= 0x0A) || (b >= 0x21 && b <= 0x29)
		if smc != (got != gopacket.LayerTypePayload) {
			t.Errorf("type byte 0x%02x: %v", b, got)
		}
	}
}

func TestSMCPayloadTypeDoesNotMalloc(t *testing.T) {
	p := roceSendPayload(t, "pingpong.pcap", 18)
	if n := testing.AllocsPerRun(100, func() { SMCPayloadType(p) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
