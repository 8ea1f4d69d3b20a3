package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestTCPHeaderCut: a SYN (fallback-nosmc.pcap's, its SMC option last)
// and a data segment cut by a snap length inside the TCP header's options
// have their header read (TCPCut, TCP nil: the tracker and the CLC
// reassembler read whole headers only), the options whole in the capture
// kept, tcp.len the payload's length on the wire; tcp.smc_option is
// there only where the option itself was kept. Below the fixed 20 bytes
// there is no header.
func TestTCPHeaderCut(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/fallback-nosmc.pcap")
	decodeCut := func(data []byte, snap int) *Frame {
		raw := rawFrame{Data: data[:snap]}
		raw.CI.CaptureLength, raw.CI.Length = snap, len(data)
		r, err := NewReader("cut", &sliceSource{frames: []rawFrame{raw}}, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	syn := fs[2].Data // frame 3: 14 + 20 + 48 bytes, the SMC option at 76..81
	for _, c := range []struct {
		snap, options int
		smc           string // tcp.smc_option: "" absent
	}{
		{53, -1, ""}, {54, 0, ""}, {64, 2, ""}, {68, 2, ""}, {74, 5, ""},
		{80, 7, ""}, {81, 7, ""}, {82, -2, "1"},
	} {
		f := decodeCut(syn, c.snap)
		if f.Err != nil {
			t.Errorf("SYN cut at %d: error %v", c.snap, f.Err)
			continue
		}
		switch c.options {
		case -1:
			if f.TCPHeader() != nil {
				t.Errorf("SYN cut at %d: a TCP header from fewer than 20 bytes", c.snap)
			}
			continue
		case -2:
			if f.TCP == nil || f.TCPCut != nil {
				t.Errorf("SYN whole: TCP %v, TCPCut %v", f.TCP != nil, f.TCPCut != nil)
			}
		default:
			if f.TCP != nil || f.TCPCut == nil || len(f.TCPCut.Options) != c.options {
				t.Errorf("SYN cut at %d: TCP %v, TCPCut %v, want %d options", c.snap, f.TCP != nil, f.TCPCut, c.options)
				continue
			}
		}
		h := f.TCPHeader()
		if h.SrcPort != 38896 || h.DstPort != 5000 || !h.SYN || h.ACK || h.Seq != 3975348743 || h.DataOffset != 12 || f.TCPWireLen() != 0 {
			t.Errorf("SYN cut at %d: header %v:%v seq %d syn %v ack %v offset %d wire len %d", c.snap,
				h.SrcPort, h.DstPort, h.Seq, h.SYN, h.ACK, h.DataOffset, f.TCPWireLen())
		}
		if got := fieldText(f, "tcp.smc_option"); got != c.smc {
			t.Errorf("SYN cut at %d: tcp.smc_option %q, want %q", c.snap, got, c.smc)
		}
		if f.SMCOption != (c.snap >= 82) {
			t.Errorf("SYN cut at %d: SMCOption %v", c.snap, f.SMCOption)
		}
	}
	data := fs[4].Data // frame 5: 14 + 20 + 32 bytes of header, 64 of payload
	for _, snap := range []int{54, 60, 65, 66, 80} {
		f := decodeCut(data, snap)
		if h := f.TCPHeader(); h == nil || !h.PSH || f.TCPWireLen() != 64 || fieldText(f, "tcp.len") != "64" {
			t.Errorf("data segment cut at %d: header %v, wire len %d, tcp.len %q", snap, h != nil, f.TCPWireLen(), fieldText(f, "tcp.len"))
		}
		if (f.TCPCut != nil) != (snap < 66) {
			t.Errorf("data segment cut at %d: TCPCut %v", snap, f.TCPCut != nil)
		}
	}
}

// fieldText is the text of field name's first value in f's record, "" when
// absent.
func fieldText(f *Frame, name string) string {
	d, ok := decode.LookupField(name)
	if !ok {
		panic("no field " + name)
	}
	r := f.Fields()
	if v, ok := r.First(d.ID); ok {
		return v.Format(d.Kind)
	}
	return ""
}
