package decode

import (
	"testing"

	"github.com/gopacket/gopacket"
)

// BenchmarkCLC measures DecodeFromBytes per message kind on real bytes.
func BenchmarkCLC(b *testing.B) {
	for _, tc := range []struct{ name, file string }{
		{"Proposal/v1", "clc_v1_smcr_proposal_ipv6.hex"},
		{"Accept/v1", "clc_v1_smcr_accept_ipv4.hex"},
		{"Decline/v1", "clc_v1_smcr_decline_nosmcdev.hex"},
	} {
		msg := clcReadVector(b, tc.file)
		b.Run(tc.name, func(b *testing.B) { benchCLC(b, msg) })
	}
	for _, tc := range []struct {
		name, file string
		frame      int
	}{
		{"Proposal/v2", "pingpong.pcap", 8},
		{"Accept/v2", "pingpong.pcap", 10},
		{"Confirm/v2", "pingpong.pcap", 12},
		{"Decline/v2", "decline-nordma.pcap", 10},
	} {
		msg := clcFrames(b, "reference/"+tc.file)[tc.frame]
		b.Run(tc.name, func(b *testing.B) { benchCLC(b, msg) })
	}
}

func benchCLC(b *testing.B, msg []byte) {
	var c CLC
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := c.DecodeFromBytes(msg, gopacket.NilDecodeFeedback); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCLCSummary measures the one-line rendering with a reused buffer.
func BenchmarkCLCSummary(b *testing.B) {
	msg := clcFrames(b, "reference/pingpong.pcap")[10]
	var c CLC
	if err := c.DecodeFromBytes(msg, gopacket.NilDecodeFeedback); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = c.AppendSummary(buf[:0])
	}
}

// BenchmarkCLCAppendFields measures field emission into a reused Record.
func BenchmarkCLCAppendFields(b *testing.B) {
	msg := clcFrames(b, "reference/pingpong.pcap")[12]
	var c CLC
	if err := c.DecodeFromBytes(msg, gopacket.NilDecodeFeedback); err != nil {
		b.Fatal(err)
	}
	var r Record
	b.ReportAllocs()
	for b.Loop() {
		r.Reset()
		c.AppendFields(&r)
	}
}
