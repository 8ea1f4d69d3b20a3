// Package crafted builds damaged captures from the reference ones, for
// tests in several packages that must agree on what the damage is (tests
// only).
package crafted

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// RoCEv2 offsets in pingpong.pcap: Ethernet, IPv4 (no options), UDP, BTH;
// the SMC message follows.
const (
	RoCEIPOff  = 14
	RoCESMCOff = 14 + 20 + 8 + 12
)

// FixICRC recomputes the ICRC of an edited RoCEv2 frame, so that the edit
// is the only thing wrong with it, as if the sender had made it.
func FixICRC(t testing.TB, data []byte) {
	t.Helper()
	ip := data[RoCEIPOff:]
	end := int(binary.BigEndian.Uint16(ip[2:4]))
	crc, _ := decode.ICRCRoCEv2(ip)
	binary.LittleEndian.PutUint32(ip[end-4:end], crc)
	if _, err := decode.ICRCRoCEv2(ip); err != nil {
		t.Fatalf("ICRC still wrong after the fix: %v", err)
	}
}

// Pingpong is the reference capture pingpong.pcap (Linux 6.12, SMC-Rv2).
func Pingpong(t testing.TB) string {
	t.Helper()
	return filepath.Join(testutil.Root(t), "testdata", "reference", "pingpong.pcap")
}

// Malformed frames of MalformedSMC and the errors smcdump reports for them.
const (
	MalformedLLCFrame = 18
	MalformedCDCFrame = 23
	MalformedLLCErr   = "LLC ADD_LINK_V2: offset 1 (length): bad length"
	MalformedCDCErr   = "CDC: offset 1 (length): bad length"
)

// MalformedSMC writes the first 40 frames of pingpong.pcap with two SMC
// messages damaged on the link the CLC handshake announced: the v2
// ADD_LINK request of frame 18 gets length 0xffff, the CDC of frame 23
// length byte 0xff. Both ICRCs are recomputed. It returns the path, in
// t.TempDir().
func MalformedSMC(t testing.TB) string {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, Pingpong(t))
	fs = fs[:40]
	for _, n := range []int{MalformedLLCFrame, MalformedCDCFrame} {
		data := fs[n-1].Data
		m := data[RoCESMCOff:]
		switch n {
		case MalformedLLCFrame:
			if m[0] != byte(decode.LLCAddLinkV2) {
				t.Fatalf("frame %d is not an ADD_LINK_V2: % x", n, m[:4])
			}
			m[1], m[2] = 0xff, 0xff
		case MalformedCDCFrame:
			if m[0] != decode.CDCType || m[1] != 44 {
				t.Fatalf("frame %d is not a CDC: % x", n, m[:2])
			}
			m[1] = 0xff
		}
		FixICRC(t, data)
	}
	return testutil.WriteFrames(t, "malformed-smc.pcap", layers.LinkTypeEthernet, fs)
}

// The frames of CLCLengthSwallows: the Proposal whose length is wrong and
// the Confirm it takes in, and the error the Confirm's frame carries.
const (
	SwallowingFrame = 8
	SwallowedFrame  = 12
	SwallowedErr    = "CLC Confirm: lies inside the CLC Proposal of frame 8 (its bytes 156-335 of the 436 its length says): a receiver reads it as part of that message"
)

// CLCLengthSwallows writes pingpong.pcap with the length field of the
// 156-byte CLC Proposal of frame 8 set to 436: it takes in the client's
// next message, the 180-byte Confirm of frame 12, and 100 bytes more. It
// returns the path, in t.TempDir().
func CLCLengthSwallows(t testing.TB) string {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, Pingpong(t))
	resizeCLC(t, fs, SwallowingFrame, func(m []byte) []byte {
		if len(m) != 156 || m[4] != byte(decode.CLCTypeProposal) {
			t.Fatalf("frame %d is not the 156-byte Proposal: % x", SwallowingFrame, m[:min(8, len(m))])
		}
		binary.BigEndian.PutUint16(m[5:7], 436)
		return m
	})
	return testutil.WriteFrames(t, "clc-len-swallows.pcap", layers.LinkTypeEthernet, fs)
}
