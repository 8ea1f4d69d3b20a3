package capture

import (
	"encoding/binary"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestGuessLinkType: the first frame of a capture of each link type a
// Decoder has is told for what it is, from a declared link type one bit
// off it or one with no decoder at all; frames of no such shape, or
// that fit two link types as near the declared one, are not.
func TestGuessLinkType(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, pingpong)
	var eth []byte
	for _, f := range fs {
		if len(f.Data) > 14+20 && binary.BigEndian.Uint16(f.Data[12:]) == 0x0800 {
			eth = f.Data
			break
		}
	}
	ip := eth[14:]
	sll := append([]byte{0, 4, 0, 1, 0, 6, 0x52, 0x54, 0, 0x0a, 0, 2, 0, 0, 0x08, 0x00}, ip...)
	sll2 := append([]byte{0x08, 0x00, 0, 0, 0, 0, 0, 2, 0, 1, 4, 6, 0x52, 0x54, 0, 0x0a, 0, 2, 0, 0}, ip...)
	vlan := append(append(append([]byte(nil), eth[:12]...), 0x81, 0x00, 0, 5), eth[12:]...)
	for _, c := range []struct {
		name     string
		declared layers.LinkType
		data     []byte
		want     layers.LinkType
		ok       bool
	}{
		{"Ethernet, one bit off", layers.LinkTypeEthernet ^ 8, eth, layers.LinkTypeEthernet, true},
		{"Ethernet, VLAN", 147, vlan, layers.LinkTypeEthernet, true},
		{"SLL, one bit off", layers.LinkTypeLinuxSLL ^ 2, sll, layers.LinkTypeLinuxSLL, true},
		{"SLL2, one bit off", layers.LinkTypeLinuxSLL2 ^ 0x100, sll2, layers.LinkTypeLinuxSLL2, true},
		{"raw IP, one bit off", layers.LinkTypeRaw ^ 1, ip, layers.LinkTypeRaw, true},
		{"raw IP, IPv4's neighbour", layers.LinkTypeIPv4 ^ 0x20, ip, layers.LinkTypeIPv4, true},
		{"not a frame", 147, []byte{0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99, 0x99}, 0, false},
		{"cut before the IP header", 147, eth[:20], 0, false},
		{"IPv4 longer than the frame", 147, append(append([]byte(nil), eth[:16]...), 0xff, 0xff), 0, false},
	} {
		wire := len(c.data)
		if c.name == "IPv4 longer than the frame" {
			c.data = append(c.data, ip[4:]...)
			wire = len(c.data)
		}
		got, ok := guessLinkType(c.declared, c.data, wire)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
