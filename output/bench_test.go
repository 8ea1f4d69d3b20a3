package output

import (
	"context"
	"io"
	"testing"
)

// BenchmarkDecodePingpong runs the whole smcdump pipeline (read, decode,
// reassemble, ICRC, fields, -T fields output) over pingpong.pcap repeated
// to about 100k frames.
func BenchmarkDecodePingpong(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"fields", Options{All: true, Format: FormatFields, Fields: []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"}}},
		{"text", Options{}},
		{"jsonl", Options{All: true, Format: FormatJSONL}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, frames := bigCapture(b)
			o := bc.o
			o.Read, o.Stdout, o.Stderr = p, io.Discard, io.Discard
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := Run(context.Background(), o); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(frames*b.N)/b.Elapsed().Seconds(), "frames/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func bigCapture(b *testing.B) (string, int) {
	b.Helper()
	one := readFrames(b, pingpong, -1)
	var all []rawFrame
	for rep := 0; rep < 25; rep++ {
		all = append(all, one...)
	}
	return writeFrames(b, "big.pcap", all), len(all)
}
