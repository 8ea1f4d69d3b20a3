package capture

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// rocev1 rewraps the RoCEv2 packet of a real Ethernet/IPv4/UDP frame as
// RoCEv1: link header, then a GRH with IPv4-mapped GIDs, then the same BTH,
// SMC message and a recomputed ICRC.
func rocev1(t *testing.T, v2 []byte, link []byte) []byte {
	t.Helper()
	ip := v2[14:]
	bth := ip[20+8 : binary.BigEndian.Uint16(ip[2:4])] // BTH .. ICRC
	grh := make([]byte, 40)
	grh[0] = 0x60
	binary.BigEndian.PutUint16(grh[4:6], uint16(len(bth)))
	grh[6], grh[7] = 0x1B, 64 // next header: BTH
	for i, a := range [][]byte{ip[12:16], ip[16:20]} {
		g := grh[8+16*i : 24+16*i]
		g[10], g[11] = 0xff, 0xff
		copy(g[12:], a)
	}
	pkt := slices.Concat(grh, bth)
	crc, _ := decode.ICRCRoCEv1(pkt)
	binary.LittleEndian.PutUint32(pkt[len(pkt)-4:], crc)
	return slices.Concat(link, pkt)
}

// TestRoCEv1Chain: RoCEv1 behind Ethernet, a QinQ VLAN stack and Linux SLL
// is decoded by the one parser chain (the GRH reached through EtherType
// 0x8915), down to the CDC of frame 23 of pingpong.pcap, ICRC verified.
func TestRoCEv1Chain(t *testing.T) {
	v2 := readRaw(t, pingpong)[22].Data
	eth := slices.Clone(v2[:14])
	binary.BigEndian.PutUint16(eth[12:], 0x8915)
	qinq := slices.Concat(v2[:12], []byte{0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x0a, 0x89, 0x15})
	sll := []byte{0, 0, 0, 1, 0, 6, 0x52, 0x54, 0, 0x0a, 0, 0x02, 0, 0, 0x89, 0x15}
	for _, tc := range []struct {
		name string
		lt   layers.LinkType
		link []byte
	}{
		{"Ethernet", layers.LinkTypeEthernet, eth},
		{"QinQ", layers.LinkTypeEthernet, qinq},
		{"SLL", layers.LinkTypeLinuxSLL, sll},
	} {
		d, err := NewDecoder(tc.lt)
		if err != nil {
			t.Fatal(err)
		}
		data := rocev1(t, v2, tc.link)
		f := &Frame{Data: data}
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.Decode(f)
		if f.Err != nil || f.GRH == nil || f.BTH == nil || f.CDC == nil || !f.ICRC.Checked || !f.ICRC.OK || f.CDC.Seq != 1 {
			t.Errorf("%s: err %v GRH %v BTH %v CDC %v ICRC %+v layers %v", tc.name, f.Err, f.GRH != nil, f.BTH != nil, f.CDC != nil, f.ICRC, f.Decoded)
		}
	}
}
