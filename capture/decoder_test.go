package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestDecodeOuterAsLoop: the straight-line decoding of the outer layers
// (decodeOuter: Ethernet by hand, plain IPv4, UDP) leaves a frame exactly
// as decodeChain's loop alone leaves it, layer structs, slices (down to
// where they point into the frame) and verdicts alike, on every frame of
// every Ethernet capture of the repository and on mutations of them: each
// header byte of the outer layers set to values that lead to the other
// paths (802.3 lengths, VLAN tags, IPv4 options, fragments, other
// protocols, UDP lengths of 0, short and long), cuts, and padding.
func TestDecodeOuterAsLoop(t *testing.T) {
	var frames [][]byte
	for _, path := range testutil.AllCaptures(t) {
		fs, lt := testutil.ReadFrames(t, path)
		if lt != layers.LinkTypeEthernet {
			continue
		}
		for _, f := range fs {
			frames = append(frames, f.Data)
		}
	}
	if len(frames) < 1000 {
		t.Fatalf("only %d Ethernet frames", len(frames))
	}
	fast, _ := NewDecoder(layers.LinkTypeEthernet)
	loop, _ := NewDecoder(layers.LinkTypeEthernet)
	checked := map[string]int{}
	check := func(data []byte) {
		t.Helper()
		var a, b Frame
		a.Data, b.Data = data, data
		a.CI.CaptureLength, a.CI.Length = len(data), len(data)
		b.CI = a.CI
		fast.decode(&a, true)
		loop.decode(&b, false)
		if ga, gb := frameState(&a), frameState(&b); ga != gb {
			t.Fatalf("frame %x:\nwith decodeOuter\n%s\nloop alone\n%s", data, ga, gb)
		}
		checked[fmt.Sprint(a.Decoded)]++
		if len(data) >= 14 && int(data[12])<<8|int(data[13]) < 0x600 {
			checked["802.3"]++
		}
	}
	for _, d := range frames {
		check(d)
	}
	// Mutations of a RoCE frame and of a TCP frame, byte by byte through
	// the Ethernet, IPv4 and UDP/TCP headers.
	rng := rand.New(rand.NewPCG(5, 6))
	var roce, tcp []byte
	for _, d := range frames {
		if len(d) > 42 && d[12] == 0x08 && d[13] == 0 && d[23] == 17 && roce == nil {
			roce = d
		}
		if len(d) > 54 && d[12] == 0x08 && d[13] == 0 && d[23] == 6 && tcp == nil {
			tcp = d
		}
	}
	special := []byte{0, 1, 5, 6, 7, 8, 9, 0x11, 0x12, 0x20, 0x3F, 0x40, 0x45, 0x46, 0x4F, 0x81, 0x86, 0xDD, 0xFF}
	for _, orig := range [][]byte{roce, tcp} {
		for i := 0; i < min(len(orig), 14+24+8+2); i++ {
			for _, v := range special {
				d := append([]byte(nil), orig...)
				d[i] = v
				check(d)
			}
			for range 8 {
				d := append([]byte(nil), orig...)
				d[i] = byte(rng.Uint32())
				check(d)
			}
		}
		for n := 0; n <= len(orig); n++ { // every cut
			check(orig[:n])
		}
		for n := 1; n < 30; n++ { // Ethernet padding
			check(append(append([]byte(nil), orig...), make([]byte, n)...))
		}
		// Tagged: 802.1Q, and QinQ.
		check(append(append(append([]byte(nil), orig[:12]...), 0x81, 0, 0, 100), orig[12:]...))
		check(append(append(append([]byte(nil), orig[:12]...), 0x88, 0xa8, 0, 10, 0x81, 0, 0, 100), orig[12:]...))
	}
	// Random damage to random frames.
	for range 5000 {
		d := append([]byte(nil), frames[rng.IntN(len(frames))]...)
		for range 1 + rng.IntN(3) {
			if len(d) > 0 {
				d[rng.IntN(min(len(d), 64))] = byte(rng.Uint32())
			}
		}
		check(d)
	}
	for _, want := range []string{"[Ethernet IPv4 UDP IB-BTH", "[Ethernet IPv4 UDP]", "[Ethernet IPv4 TCP]", "[Ethernet Dot1Q", "[Ethernet IPv6", "802.3"} {
		n := 0
		for k, c := range checked {
			if strings.HasPrefix(k, want) {
				n += c
			}
		}
		if n == 0 {
			t.Errorf("no frame decoded as %s... (%v)", want, checked)
		}
	}
}

// frameState prints what decoding left in f: every layer present (its
// struct, and where its Contents and Payload lie in f.Data), the decoded
// layer types and the verdicts.
// derefs prints what the non-nil pointers point to, not where.
func derefs(ps ...any) string {
	var b strings.Builder
	for _, p := range ps {
		if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && !v.IsNil() {
			fmt.Fprintf(&b, "%#v ", v.Elem().Interface())
		}
	}
	return b.String()
}

func frameState(f *Frame) string {
	var b strings.Builder
	at := func(name string, contents, payload []byte) {
		fmt.Fprintf(&b, "%s contents %d+%d payload %d+%d\n", name,
			cap(f.Data)-cap(contents), len(contents), cap(f.Data)-cap(payload), len(payload))
	}
	fmt.Fprintf(&b, "decoded %v err %v truncated %v icrc %+v smcopt %v\n", f.Decoded, f.Err, f.Truncated, f.ICRC, f.SMCOption)
	if f.Eth != nil {
		l := *f.Eth
		l.BaseLayer = layers.BaseLayer{} // where it lies is below
		fmt.Fprintf(&b, "%#v %v\n", l, f.Eth.NextLayerType())
		at("eth", f.Eth.Contents, f.Eth.Payload)
	}
	for i, v := range f.VLAN {
		at(fmt.Sprint("vlan", i), v.Contents, v.Payload)
		v.BaseLayer = layers.BaseLayer{}
		fmt.Fprintf(&b, "%#v\n", v)
	}
	if f.IPv4 != nil {
		l := *f.IPv4
		l.BaseLayer = layers.BaseLayer{}
		fmt.Fprintf(&b, "%#v %v\n", l, f.IPv4.NextLayerType())
		at("ipv4", f.IPv4.Contents, f.IPv4.Payload)
	}
	if f.IPv6 != nil {
		// Its hop-by-hop header lives in the decoder's own struct, with
		// pointers to options: print what it holds, not where.
		ip := f.IPv6
		fmt.Fprintf(&b, "ipv6 %v %v %v %v %v %v %v %v\n", ip.Version, ip.TrafficClass, ip.FlowLabel,
			ip.Length, ip.NextHeader, ip.HopLimit, ip.SrcIP, ip.DstIP)
		if h := f.IPv6.HopByHop; h != nil {
			fmt.Fprintf(&b, "hop-by-hop %v %x %x\n", h.NextHeader, h.Contents, h.Payload)
		}
		at("ipv6", f.IPv6.Contents, f.IPv6.Payload)
	}
	if f.UDP != nil {
		l := *f.UDP
		l.BaseLayer = layers.BaseLayer{}
		fmt.Fprintf(&b, "%#v %v %v\n", l, f.UDP.NextLayerType(), f.UDP.TransportFlow())
		at("udp", f.UDP.Contents, f.UDP.Payload)
	}
	if f.TCP != nil {
		l := *f.TCP
		l.BaseLayer = layers.BaseLayer{}
		// gopacket decodes an MPTCP option (kind 30) into structs it
		// allocates: %#v would print their addresses, which differ between
		// the two decoders; print what they hold instead.
		l.Options = append([]layers.TCPOption(nil), l.Options...)
		for i := range l.Options {
			o := &l.Options[i]
			fmt.Fprintf(&b, "option %d mptcp: %s\n", i, derefs(o.OptionMPTCPMpCapable, o.OptionMPTCPDss, o.OptionMPTCPMpJoin,
				o.OptionMPTCPMpPrio, o.OptionMPTCPAddAddr, o.OptionMTCPRemAddr, o.OptionMTCPMPFastClose, o.OptionMPTCPMPTcpRst, o.OptionMTCPMPFail))
			o.OptionMPTCPMpCapable, o.OptionMPTCPDss, o.OptionMPTCPMpJoin = nil, nil, nil
			o.OptionMPTCPMpPrio, o.OptionMPTCPAddAddr, o.OptionMTCPRemAddr = nil, nil, nil
			o.OptionMTCPMPFastClose, o.OptionMPTCPMPTcpRst, o.OptionMTCPMPFail = nil, nil, nil
		}
		fmt.Fprintf(&b, "%#v\n", l)
		at("tcp", f.TCP.Contents, f.TCP.Payload)
	}
	if t := f.TCPCut; t != nil {
		fmt.Fprintf(&b, "tcp cut %v %v %v %v %v %d options %v\n", t.SrcPort, t.DstPort, t.Seq, t.Ack, t.DataOffset, len(t.Options), f.TCPWireLen())
		at("tcp cut", t.Contents, t.Payload)
	}
	if f.BTH != nil {
		fmt.Fprintf(&b, "%#v\n", *f.BTH)
	}
	for _, l := range []any{f.RETH, f.AETH, f.ImmDt, f.IETH, f.DETH, f.LLC, f.CDC} {
		fmt.Fprintf(&b, "%#v\n", l)
	}
	return b.String()
}

// TestIPv4VersionBad: a RoCE frame whose IPv4 header says another version
// (its checksum made over it: the sender's) is dropped by its receiver
// (ip_rcv_core): a frame error at the IPv4 header, as Wireshark's "Bogus
// IPv4 version", and no RoCE or SMC layer decoded from it. Each version
// but 4, with a plain header otherwise. One whose checksum verifies with
// version 4 had that byte damaged after it was made (on the way, or in the
// capture's copy, which the wire tells apart): it is read as sent, its
// checksum over the bytes held failing (as its ICRC, which covers the
// byte, does).
func TestIPv4VersionBad(t *testing.T) {
	roce := firstRoCEv4(t)
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for v := range byte(16) {
		data := append([]byte(nil), roce...)
		data[14] = v<<4 | 5
		if v != 4 {
			var f Frame
			f.Data = bytes.Clone(data)
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			if f.Err != nil || f.IPv4 == nil || f.BTH == nil || decode.IPv4HeaderSumOK(f.IPv4.Contents) {
				t.Errorf("version %d damaged: error %v, IPv4 %v, BTH %v: want the frame read as sent, its header's checksum failing", v, f.Err, f.IPv4 != nil, f.BTH != nil)
			}
		}
		resumIPv4(data[14:34])
		var f Frame
		f.Data = data
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(&f, true)
		switch {
		case v == 4 && (f.Err != nil || f.BTH == nil):
			t.Errorf("version 4: error %v, BTH %v", f.Err, f.BTH != nil)
		case v != 4 && (f.Err == nil || !strings.Contains(f.Err.Error(), "version") || f.BTH != nil || f.IPv4 != nil):
			t.Errorf("version %d: error %v, IPv4 %v, BTH %v: want a version error and no layer past Ethernet", v, f.Err, f.IPv4 != nil, f.BTH != nil)
		}
	}
}

// TestRoCEPortDamaged: a RoCEv2 packet whose UDP destination port the
// capture's copy has damaged in one byte is still RoCE: its ICRC verifies
// with 4791, and fails as held, the mend naming the port's byte. With a
// byte of its payload damaged too, it is the UDP datagram it claims.
func TestRoCEPortDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/pingpong.pcap")
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	n := 0
	for _, raw := range fs {
		if len(raw.Data) < 60 || raw.Data[23] != 17 || raw.Data[36] != 0x12 || raw.Data[37] != 0xB7 {
			continue
		}
		for _, c := range []struct {
			off  int
			x    byte
			also bool // a payload byte damaged too
		}{{36, 0x96, false}, {37, 0x01, false}, {36, 0x96, true}} {
			data := append([]byte(nil), raw.Data...)
			data[c.off] ^= c.x
			if c.also {
				data[50] ^= 0x10
			}
			var f Frame
			f.Data = data
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			m, ok := f.ICRCMend()
			switch {
			case c.also && f.BTH != nil:
				t.Errorf("port byte %d and a payload byte damaged: decoded as RoCE", c.off)
			case !c.also && (f.BTH == nil || !f.ICRC.Checked || f.ICRC.OK || !ok || m.Off != c.off || m.Sent != raw.Data[c.off]):
				t.Errorf("port byte %d ^%#x: BTH %v ICRC %+v mend %+v %v", c.off, c.x, f.BTH != nil, f.ICRC, m, ok)
			}
		}
		if n++; n == 20 {
			break
		}
	}
	if n < 20 {
		t.Fatalf("%d RoCE frames", n)
	}
}

// firstRoCEv4 is pingpong.pcap's first UDP frame over IPv4 with a plain
// header: a RoCEv2 packet.
func firstRoCEv4(t *testing.T) []byte {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/pingpong.pcap")
	for _, f := range fs {
		if len(f.Data) > 42 && f.Data[12] == 0x08 && f.Data[13] == 0 && f.Data[23] == 17 {
			return f.Data
		}
	}
	t.Fatal("pingpong.pcap holds no RoCEv2 frame")
	return nil
}

// TestTCPLengthDamaged: a TCP segment (fallback-nosmc.pcap's SYN, its SMC
// option last) whose IPv4 total length the capture's copy has damaged to
// fewer bytes than the frame holds: the header's checksum fails as held
// and verifies with the frame's length, so the segment is read whole (its
// options, the SMC option among them), the length as held kept to show. A
// total length that verifies (Ethernet padding after a short packet) cuts
// the segment as before.
func TestTCPLengthDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/fallback-nosmc.pcap")
	syn := fs[2].Data // frame 3
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, short := range []int{4, 18, 30} {
		data := append([]byte(nil), syn...)
		total := binary.BigEndian.Uint16(data[16:18])
		binary.BigEndian.PutUint16(data[16:18], total-uint16(short))
		var f Frame
		f.Data = data
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(&f, true)
		if f.TCP == nil || !f.TCP.SYN || len(f.TCP.Options) == 0 || f.IPv4 == nil || int(f.IPv4.Length) != int(total)-short {
			t.Errorf("total length %d short: TCP %v, error %v", short, f.TCP != nil, f.Err)
			continue
		}
		if o := f.TCP.Options[len(f.TCP.Options)-1]; o.OptionType != 254 {
			t.Errorf("total length %d short: last option %v, want the SMC option", short, o.OptionType)
		}
		// The checksum fixed for the short length: a packet the frame pads.
		_, want := decode.IPv4HeaderSum(data[14:34])
		binary.BigEndian.PutUint16(data[24:26], want)
		f = Frame{Data: data}
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(&f, true)
		if f.TCP != nil && len(f.TCP.Payload)+len(f.TCP.Contents) > int(total)-short-20 {
			t.Errorf("total length %d short, checksum verifying: the segment read past its length", short)
		}
	}
}

// TestIPProtocolDamaged: a TCP segment (fallback-nosmc.pcap's SYN) and a
// RoCEv2 packet whose IPv4 protocol byte, version and header length byte,
// or flags and fragment offset the capture's copy has damaged: the
// header's checksum fails as held and verifies with TCP or UDP in its
// place, with 0x45, or as a whole packet's, so the packet is read as sent
// (its receiver took the one sent), with a note (ErrIPv4Mended). With the
// checksum fixed for the damaged byte, the byte stands.
func TestIPProtocolDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/fallback-nosmc.pcap")
	syn := fs[2].Data // frame 3
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		name string
		data []byte
		tcp  bool
	}{{"TCP", syn, true}, {"RoCEv2", firstRoCEv4(t), false}} {
		for _, damage := range []struct {
			field string
			off   int
			mask  byte
		}{{"protocol", 9, 0x4f}, {"header length", 0, 0x08}, {"version", 0, 0x20}, {"fragment offset", 6, 0x08}, {"more fragments flag", 6, 0x20}} {
			for _, fix := range []bool{false, true} {
				data := append([]byte(nil), c.data...)
				data[14+damage.off] ^= damage.mask
				if fix {
					_, sum := decode.IPv4HeaderSum(data[14:34])
					binary.BigEndian.PutUint16(data[24:26], sum)
					if !decode.IPv4HeaderSumOK(data[14:34]) {
						t.Fatalf("%s, %s damaged: the checksum made does not verify", c.name, damage.field)
					}
				}
				var f Frame
				f.Data = data
				f.CI.CaptureLength, f.CI.Length = len(data), len(data)
				d.decode(&f, true)
				read := c.tcp && f.TCP != nil && f.TCP.SYN && bytes.Equal(f.TCP.Payload, nil) || !c.tcp && f.BTH != nil
				if read == fix {
					t.Errorf("%s, %s damaged, checksum fixed %v: read as %s %v (error %v)", c.name, damage.field, fix, c.name, read, f.Err)
				}
				noted := len(f.CLCErr) == 1 && errors.Is(f.CLCErr[0], ErrIPv4Mended)
				if noted == fix {
					t.Errorf("%s, %s damaged, checksum fixed %v: notes %v, want one of the field mended: %v", c.name, damage.field, fix, f.CLCErr, !fix)
				}
			}
		}
	}
}

// TestIPProtocolAndSumDamaged: fallback-nosmc.pcap's SYN whose IPv4
// protocol byte and a byte of the header's checksum the capture's copy
// has damaged (editcap -E 0.002 seed 1304: the capture read as no SMC at
// all): no protocol makes the header verify, but the bytes after it
// verify as a TCP segment, so it is read as one, with a note. A byte of
// the segment damaged too leaves it unread.
func TestIPProtocolAndSumDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/fallback-nosmc.pcap")
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		name string
		offs []int
		tcp  bool
	}{{"protocol and checksum", []int{14 + 9, 14 + 10}, true}, {"and the sequence number", []int{14 + 9, 14 + 10, 34 + 5}, false}} {
		data := slices.Clone(fs[2].Data) // frame 3, the SYN
		for _, o := range c.offs {
			data[o] ^= 0x23
		}
		var f Frame
		f.Data = data
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(&f, true)
		read := f.TCP != nil && f.TCP.SYN && f.SMCOption
		noted := slices.ContainsFunc(f.CLCErr, func(e error) bool { return errors.Is(e, ErrIPv4Mended) })
		if read != c.tcp || noted != c.tcp {
			t.Errorf("%s damaged: read as the SMC SYN %v, noted %v (%v); want %v", c.name, read, noted, f.CLCErr, c.tcp)
		}
	}
}

// TestIPv4MendedICRC: a RoCEv2 packet whose IPv4 header the decoder read
// as sent (TestIPProtocolDamaged), or whose total length is 0, still has
// its ICRC checked, which covers those fields: over the packet as sent
// where the version byte was mended (the held one is no IPv4 header to
// compute it over) or the length is 0, so the one damaged field leaves
// the packet good and its held header's checksum failing (a damaged copy,
// as a damaged TTL); over the bytes held for the others, whose failure
// the one byte explains. A second damaged byte, in the BTH, fails the
// ICRC: the packet is not the one sent.
func TestIPv4MendedICRC(t *testing.T) {
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, damage := range []struct {
		field string
		off   int // the damaged byte's offset in the IPv4 header
		apply func(ip []byte)
	}{
		{"version", 0, func(ip []byte) { ip[0] ^= 0x20 }},
		{"header length", 0, func(ip []byte) { ip[0] ^= 0x08 }},
		{"protocol", 9, func(ip []byte) { ip[9] ^= 0x4f }},
		{"fragment offset", 6, func(ip []byte) { ip[6] ^= 0x08 }},
		// A total length of 0, which layers.IPv4 reads as the frame's
		// rest (a segmentation offload's convention no RNIC uses): the
		// ICRC is checked with the frame's length.
		{"total length 0", 2, func(ip []byte) { ip[2], ip[3] = 0, 0 }},
	} {
		for _, more := range []bool{false, true} {
			data := append([]byte(nil), firstRoCEv4(t)...)
			damage.apply(data[14:])
			if more {
				data[14+20+8+5] ^= 0x01 // the BTH's destination QP
			}
			var f Frame
			f.Data = data
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			if !f.ICRC.Checked {
				t.Errorf("%s damaged (and the BTH %v): ICRC not checked", damage.field, more)
				continue
			}
			mend, mended := f.ICRCMend()
			asSent := f.ICRC.IPSumBad || mended && mend.Off == 14+damage.off
			if f.ICRC.OK || asSent == more {
				t.Errorf("%s damaged (and the BTH %v): ICRC %+v, mend %+v %v: want the packet as sent %v", damage.field, more, f.ICRC, mend, mended, !more)
			}
		}
	}
}

// TestEtherTypeDamaged: a TCP segment (fallback-nosmc.pcap's SYN), a
// RoCEv2 packet and a pure ACK padded to Ethernet's 60 bytes whose
// EtherType the capture's copy has damaged, ahead of a whole IPv4 header
// whose checksum verifies: the frame is read as IPv4, with a note naming
// the EtherType held (ErrEtherTypeMended). With the IPv4 header's checksum
// failing too, or 0 (not filled in), it stays an unknown EtherType's.
func TestEtherTypeDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/fallback-nosmc.pcap")
	syn := fs[2].Data // frame 3
	// An ACK of 40 bytes of IPv4, padded to 60 bytes of frame.
	ack := append(append([]byte(nil), syn[:14+20+20]...), make([]byte, 6)...)
	binary.BigEndian.PutUint16(ack[14+2:], 40)
	ack[14+20+12], ack[14+20+13] = 5<<4, 0x10
	_, sum := decode.IPv4HeaderSum(ack[14:34])
	binary.BigEndian.PutUint16(ack[24:26], sum)
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		name string
		data []byte
		tcp  bool
	}{{"SYN", syn, true}, {"RoCEv2", firstRoCEv4(t), false}, {"padded ACK", ack, true}} {
		for _, sum := range []string{"verifying", "failing", "zero"} {
			data := append([]byte(nil), c.data...)
			data[12] ^= 0x5c // 0x0800 -> 0x5400
			switch sum {
			case "failing":
				data[14+8] ^= 0x01 // the TTL
			case "zero":
				data[24], data[25] = 0, 0
			}
			var f Frame
			f.Data = data
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			read := c.tcp && f.TCP != nil || !c.tcp && f.BTH != nil
			noted := len(f.CLCErr) == 1 && errors.Is(f.CLCErr[0], ErrEtherTypeMended) && strings.Contains(f.CLCErr[0].Error(), "0x5400")
			if want := sum == "verifying"; read != want || noted != want || f.Err != nil {
				t.Errorf("%s, IPv4 header checksum %s: read as IPv4 %v, noted %v (%v), error %v; want %v", c.name, sum, read, noted, f.CLCErr, f.Err, want)
			}
			if read && f.Eth.EthernetType != 0x5400 {
				t.Errorf("%s: eth.type %#x, want the one held", c.name, f.Eth.EthernetType)
			}
		}
	}
}

// TestEtherTypeDamagedIPv6: ipv6.pcap's SYN and its client's CLC Decline
// whose EtherType the capture's copy has damaged, ahead of an IPv6 header
// whose TCP segment's checksum verifies: read as IPv6, with a note naming
// the EtherType held. With the
// segment's checksum failing too, or left to the NIC (the
// pseudo-header's sum), it stays an unknown EtherType's; so does a
// RoCEv1 packet (its GRH starts as an IPv6 header does) whose EtherType
// was damaged.
func TestEtherTypeDamagedIPv6(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/ipv6.pcap")
	var syn, decline []byte
	for _, f := range fs {
		if len(f.Data) > 14+40+20 && f.Data[12] == 0x86 && f.Data[13] == 0xdd && f.Data[20] == 6 {
			switch tcp := f.Data[14+40:]; {
			case syn == nil && tcp[13]&0x12 == 0x02:
				syn = f.Data
			case decline == nil && len(tcp) > int(tcp[12]>>4)*4+4 && bytes.Equal(tcp[int(tcp[12]>>4)*4:][:4], []byte{0xe2, 0xd4, 0xc3, 0xd9}):
				decline = f.Data
			}
		}
	}
	if syn == nil || decline == nil {
		t.Fatal("no SYN or CLC message in ipv6.pcap")
	}
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		name string
		data []byte
	}{{"SYN", syn}, {"CLC", decline}} {
		for _, sum := range []string{"verifying", "failing", "offloaded"} {
			data := append([]byte(nil), c.data...)
			data[12] ^= 0x5c // 0x86dd -> 0xdadd
			tcp := data[14+40:]
			switch sum {
			case "failing":
				tcp[14] ^= 0x01 // the window
			case "offloaded":
				p := pseudoSum(data[14+8:14+24], data[14+24:14+40], len(tcp))
				binary.BigEndian.PutUint16(tcp[16:], ^gopacket.FoldChecksum(p))
			}
			var f Frame
			f.Data = data
			f.CI.CaptureLength, f.CI.Length = len(data), len(data)
			d.decode(&f, true)
			read := f.IPv6 != nil && f.TCP != nil
			noted := len(f.CLCErr) == 1 && errors.Is(f.CLCErr[0], ErrEtherTypeMended) && strings.Contains(f.CLCErr[0].Error(), "0xdadd")
			if want := sum == "verifying"; read != want || noted != want || f.Err != nil {
				t.Errorf("%s, TCP checksum %s: read as IPv6 %v, noted %v (%v), error %v; want %v", c.name, sum, read, noted, f.CLCErr, f.Err, want)
			}
		}
	}
	// A RoCEv1 packet: a GRH (IPv6-like, next header 0x1B) then the BTH.
	v1 := append([]byte(nil), syn[:14+40]...)
	v1[12], v1[13] = 0x89, 0x15
	v1[14+6] = 0x1b
	v1 = append(v1, make([]byte, 12+44+4)...)
	binary.BigEndian.PutUint16(v1[14+4:], uint16(len(v1)-14-40))
	v1[12] ^= 0x5c
	var f Frame
	f.Data = v1
	f.CI.CaptureLength, f.CI.Length = len(v1), len(v1)
	d.decode(&f, true)
	if f.IPv6 != nil || len(f.CLCErr) != 0 {
		t.Errorf("a RoCEv1 packet's EtherType damaged: read as IPv6 %v, notes %v", f.IPv6 != nil, f.CLCErr)
	}
}

// TestIPv4LongLengthDamaged: a RoCE packet (pingpong.pcap's ACK at frame
// 27) whose IPv4 total length the capture's copy damaged to claim more than
// the frame holds: the header's checksum fails as held and verifies with
// the frame's length, so the packet is read whole with a note
// (ErrIPv4Mended), its ICRC checked over the length sent and matching.
// With the checksum made for the length held, the packet claims more than
// it carries: a length error, as before.
func TestIPv4LongLengthDamaged(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/samples/pingpong.pcap")
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, fix := range []bool{false, true} {
		data := slices.Clone(fs[26].Data)
		data[16] ^= 0x08
		if fix {
			_, want := decode.IPv4HeaderSum(data[14:34])
			binary.BigEndian.PutUint16(data[24:26], want)
		}
		f := Frame{Data: data}
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(&f, true)
		mended := slices.ContainsFunc(f.CLCErr, func(e error) bool { return errors.Is(e, ErrIPv4Mended) })
		if fix {
			if !f.LengthBad || f.Err == nil || mended {
				t.Errorf("checksum made for the length held: length bad %v, error %v, mended %v; want a length error", f.LengthBad, f.Err, mended)
			}
			continue
		}
		if f.Err != nil || f.LengthBad || !mended || f.BTH == nil || !f.ICRC.Checked || f.ICRC.Got != f.ICRC.Want || !f.ICRC.IPSumBad {
			t.Errorf("length damaged: error %v, length bad %v, mended %v, BTH %v, ICRC %+v; want read whole, ICRC matching, IPv4 checksum failing",
				f.Err, f.LengthBad, mended, f.BTH != nil, f.ICRC)
		}
	}
}
