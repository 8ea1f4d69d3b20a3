package decode

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Test helpers of the RoCE/LLC/CDC tests (prefix roce, so they do not
// collide with the CLC tests of the same package).

// roceCaptureGlobs are every pcap under testdata/ that holds RoCE frames
// (reference: kernel-made SMC-Rv2; public: rxe perftest/NCCL/rdma_cm).
var roceCaptureGlobs = []string{
	"../testdata/reference/*.pcap",
	"../testdata/public/*/*.pcap",
}

// roceCaptures lists every capture file the whole-capture tests walk.
func roceCaptures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, g := range roceCaptureGlobs {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 20 {
		t.Fatalf("found only %d captures under ../testdata", len(out))
	}
	return out
}

// roceReadPcap returns every frame of a capture, index 0 = frame 1.
func roceReadPcap(t testing.TB, path string) [][]byte {
	t.Helper()
	ps, lt := testutil.ReadFrames(t, path)
	if lt != layers.LinkTypeEthernet {
		t.Fatalf("%s: link type %v, want Ethernet", path, lt)
	}
	frames := make([][]byte, len(ps))
	for i, p := range ps {
		frames[i] = p.Data
	}
	return frames
}

// roceFrame returns frame n (1-based, as tshark numbers them) of a
// capture under testdata/reference.
func roceFrame(t testing.TB, file string, n int) []byte {
	t.Helper()
	frames := roceReadPcap(t, "../testdata/reference/"+file)
	if n < 1 || n > len(frames) {
		t.Fatalf("%s has %d frames, want frame %d", file, len(frames), n)
	}
	return frames[n-1]
}

// eachRoCEPacket calls fn with every RoCEv2 packet of the corpus
// (roceCaptures): its capture's name, its frame number, its IP packet and
// BTH on.
func eachRoCEPacket(t testing.TB, fn func(name string, frame int, ip, bth []byte)) {
	t.Helper()
	for _, path := range roceCaptures(t) {
		for i, frame := range roceReadPcap(t, path) {
			if ip, bth, ok := roceSplit(frame); ok {
				fn(filepath.Base(path), i+1, ip, bth)
			}
		}
	}
}

// roceSplit finds the IP header and the BTH of a RoCEv2 frame (Ethernet,
// IPv4/IPv6, UDP destination port 4791) with gopacket's own layers, so
// that the tests do not depend on register.go to find the BTH. ip runs to
// the end of the IP packet, bth from the BTH to the end of the ICRC.
func roceSplit(frame []byte) (ip, bth []byte, ok bool) {
	var eth layers.Ethernet
	var ip4 layers.IPv4
	var ip6 layers.IPv6
	var udp layers.UDP
	if eth.DecodeFromBytes(frame, gopacket.NilDecodeFeedback) != nil {
		return nil, nil, false
	}
	var ipPayload []byte
	switch eth.EthernetType {
	case layers.EthernetTypeIPv4:
		if ip4.DecodeFromBytes(eth.Payload, gopacket.NilDecodeFeedback) != nil || ip4.Protocol != layers.IPProtocolUDP {
			return nil, nil, false
		}
		ip = eth.Payload[:int(ip4.Length)]
		ipPayload = ip4.Payload
	case layers.EthernetTypeIPv6:
		if ip6.DecodeFromBytes(eth.Payload, gopacket.NilDecodeFeedback) != nil || ip6.NextHeader != layers.IPProtocolUDP {
			return nil, nil, false
		}
		ip = eth.Payload[:40+int(ip6.Length)]
		ipPayload = ip6.Payload
	default:
		return nil, nil, false
	}
	if udp.DecodeFromBytes(ipPayload, gopacket.NilDecodeFeedback) != nil || udp.DstPort != 4791 {
		return nil, nil, false
	}
	return ip, udp.Payload, true
}

// roceSendPayload returns the SEND payload (LLC or CDC bytes) of a
// reference frame that is an RC SEND Only: BTH 12 bytes off the front,
// ICRC 4 bytes off the end (no pad in these captures, §5.3).
func roceSendPayload(t testing.TB, file string, n int) []byte {
	t.Helper()
	_, bth, ok := roceSplit(roceFrame(t, file, n))
	if !ok || len(bth) < 16 || bth[0] != byte(OpSendOnly) {
		t.Fatalf("%s frame %d is not an RC SEND Only", file, n)
	}
	return bth[12 : len(bth)-4]
}

// roceVector reads testdata/vectors/NAME.hex (see its SOURCES.md).
func roceVector(t testing.TB, name string) []byte {
	t.Helper()
	return clcReadVector(t, name+".hex")
}

// roceV1Packet puts the hwipl RoCEv1 vectors together the way the
// author's own parser test (hwipl/smc-llc internal/cmd/parse_test.go) did:
// GRH + BTH + CONFIRM RKEY + a zero ICRC (the source zero-filled it; GRH
// PayLen 60 = 12 + 44 + 4). No real RoCEv1 capture exists in testdata.
func roceV1Packet(t testing.TB) []byte {
	t.Helper()
	var p []byte
	p = append(p, roceVector(t, "rocev1_grh_smcr_llc")...)
	p = append(p, roceVector(t, "roce_bth_rc_send_only_smcr")...)
	p = append(p, roceVector(t, "llc_v1_confirm_rkey_req")...)
	return append(p, 0, 0, 0, 0)
}

type roceFeedback struct{ truncated bool }

func (f *roceFeedback) SetTruncated() { f.truncated = true }

// roceLayerTypes returns the layer types NewPacket found, in order.
func roceLayerTypes(p gopacket.Packet) []gopacket.LayerType {
	var out []gopacket.LayerType
	for _, l := range p.Layers() {
		out = append(out, l.LayerType())
	}
	return out
}

func roceTypesString(ts []gopacket.LayerType) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, "/")
}

func TestRegisterEthernetAndUDP(t *testing.T) {
	if got := EtherTypeRoCEv1.LayerType(); got != LayerTypeGRH {
		t.Errorf("EtherType 0x8915 -> %v, want IB-GRH", got)
	}
	if got := UDPPortRoCEv2.LayerType(); got != LayerTypeBTH {
		t.Errorf("UDP port 4791 -> %v, want IB-BTH", got)
	}
}

// TestNewPacketChains checks that gopacket.NewPacket alone, from Ethernet,
// reaches the RoCE and SMC layers of real frames.
func TestNewPacketChains(t *testing.T) {
	cases := []struct {
		frame int
		want  string
	}{
		{14, "Ethernet/IPv4/UDP/IB-BTH/SMC-LLC"},         // CONFIRM_LINK_V2
		{18, "Ethernet/IPv4/UDP/IB-BTH/SMC-LLC"},         // ADD_LINK_V2, 88 bytes
		{22, "Ethernet/IPv4/UDP/IB-BTH/IB-RETH/Payload"}, // WRITE ONLY 24 B
		{23, "Ethernet/IPv4/UDP/IB-BTH/SMC-CDC"},         // CDC
		{24, "Ethernet/IPv4/UDP/IB-BTH/IB-AETH"},         // ACK
		{4126, "Ethernet/IPv4/UDP/IB-BTH/SMC-LLC"},       // DELETE_LINK_V2
	}
	for _, c := range cases {
		p := gopacket.NewPacket(roceFrame(t, "pingpong.pcap", c.frame), layers.LayerTypeEthernet, gopacket.Default)
		if el := p.ErrorLayer(); el != nil {
			t.Errorf("frame %d: %v", c.frame, el.Error())
		}
		if got := roceTypesString(roceLayerTypes(p)); got != c.want {
			t.Errorf("frame %d: layers %s, want %s", c.frame, got, c.want)
		}
	}
}

// TestNewPacketRoCEv1 decodes the hwipl RoCEv1 vectors from the GRH on.
func TestNewPacketRoCEv1(t *testing.T) {
	p := gopacket.NewPacket(roceV1Packet(t), LayerTypeGRH, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatal(el.Error())
	}
	if got, want := roceTypesString(roceLayerTypes(p)), "IB-GRH/IB-BTH/SMC-LLC"; got != want {
		t.Fatalf("layers %s, want %s", got, want)
	}
	l := p.Layer(LayerTypeLLC).(*LLC)
	if l.Type != LLCConfirmRKey || l.ConfirmRKey.RKey != 0x155d {
		t.Errorf("LLC %v rkey %#x, want CONFIRM_RKEY 0x155d", l.Type, l.ConfirmRKey.RKey)
	}
}

// roceParser is the DecodingLayerParser stack the capture package uses.
type roceParser struct {
	eth   layers.Ethernet
	ip4   layers.IPv4
	ip6   layers.IPv6
	udp   layers.UDP
	grh   GRH
	bth   BTH
	reth  RETH
	aeth  AETH
	imm   ImmDt
	ieth  IETH
	deth  DETH
	llc   LLC
	cdc   CDC
	pay   gopacket.Payload
	p     *gopacket.DecodingLayerParser
	types []gopacket.LayerType
}

func newRoceParser() *roceParser {
	r := &roceParser{}
	r.p = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet,
		&r.eth, &r.ip4, &r.ip6, &r.udp, &r.grh, &r.bth, &r.reth, &r.aeth,
		&r.imm, &r.ieth, &r.deth, &r.llc, &r.cdc, &r.pay)
	r.types = make([]gopacket.LayerType, 0, 16)
	return r
}

func (r *roceParser) decode(frame []byte) error {
	return r.p.DecodeLayers(frame, &r.types)
}

func (r *roceParser) has(lt gopacket.LayerType) bool {
	for _, t := range r.types {
		if t == lt {
			return true
		}
	}
	return false
}

// TestWholeCaptures decodes every RoCE frame of every capture under
// testdata with both gopacket.NewPacket and a DecodingLayerParser: no
// error, a BTH each time, and the two paths agree on the layers.
func TestWholeCaptures(t *testing.T) {
	total := 0
	for _, path := range roceCaptures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rp := newRoceParser()
			n := 0
			for i, frame := range roceReadPcap(t, path) {
				if _, _, ok := roceSplit(frame); !ok {
					continue
				}
				n++
				if err := rp.decode(frame); err != nil {
					t.Errorf("frame %d: DecodingLayerParser: %v", i+1, err)
					continue
				}
				if !rp.has(LayerTypeBTH) {
					t.Errorf("frame %d: no BTH in %v", i+1, rp.types)
				}
				p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.NoCopy)
				if el := p.ErrorLayer(); el != nil {
					t.Errorf("frame %d: NewPacket: %v", i+1, el.Error())
				}
				got := roceLayerTypes(p)
				if gs, ws := roceTypesString(got), roceTypesString(rp.types); gs != ws {
					t.Errorf("frame %d: NewPacket %s, parser %s", i+1, gs, ws)
				}
			}
			total += n
		})
	}
	// 4123 RoCE frames in pingpong.pcap, 199 in erspan.pcap (its ERSPAN
	// copies are GRE frames) + 1653 in the public captures (tshark:
	// udp.dstport == 4791 && !gre && !icmp).
	if total != 4123+199+1653 {
		t.Errorf("decoded %d RoCE frames, want %d", total, 4123+199+1653)
	}
}

// TestTruncatedFrames cuts one frame of every kind (opcode, and LLC type
// or CDC) of every capture at every length and runs it through the
// DecodingLayerParser and gopacket.NewPacket with their panic recovery
// switched off, so that a panic in a layer fails the test.
func TestTruncatedFrames(t *testing.T) {
	kinds := 0
	for _, path := range roceCaptures(t) {
		seen := map[[2]byte]bool{}
		for i, frame := range roceReadPcap(t, path) {
			_, bth, ok := roceSplit(frame)
			if !ok {
				continue
			}
			k := [2]byte{bth[0], 0}
			if len(bth) > 12 {
				k[1] = bth[12]
			}
			if seen[k] {
				continue
			}
			seen[k] = true
			kinds++
			rp := newRoceParser()
			rp.p.IgnorePanic = true
			for n := range len(frame) {
				_ = rp.decode(frame[:n])
				p := gopacket.NewPacket(frame[:n], layers.LayerTypeEthernet,
					gopacket.DecodeOptions{NoCopy: true, SkipDecodeRecovery: true})
				if l := p.Layer(LayerTypeBTH); l != nil {
					if b := l.(*BTH); len(b.Contents)+len(b.Payload) > n {
						t.Errorf("%s frame %d cut to %d: BTH reaches past the cut", filepath.Base(path), i+1, n)
					}
				}
			}
		}
	}
	if kinds < 40 {
		t.Errorf("only %d frame kinds", kinds)
	}
}
