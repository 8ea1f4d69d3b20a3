package output

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
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
	in, err := os.Open(pingpong)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	r, err := pcapgo.NewReader(in)
	if err != nil {
		b.Fatal(err)
	}
	var (
		all [][]byte
		cis []gopacket.CaptureInfo
	)
	for {
		d, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		all, cis = append(all, d), append(cis, ci)
	}
	p := filepath.Join(b.TempDir(), "big.pcap")
	out, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	w := pcapgo.NewWriter(out)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		b.Fatal(err)
	}
	n := 0
	for rep := 0; rep < 25; rep++ {
		for i, d := range all {
			if err := w.WritePacket(cis[i], d); err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	return p, n
}
