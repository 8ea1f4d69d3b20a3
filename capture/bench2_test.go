package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func BenchmarkReaderStages(b *testing.B) {
	raw := readRaw(b, pingpong)
	for _, bc := range []struct {
		name         string
		icrc, fields bool
	}{{"decode", false, false}, {"decode+icrc", true, false}, {"decode+fields", false, true}, {"all", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			src := &sliceSource{frames: raw}
			r, err := NewReader("b", src, layers.LinkTypeEthernet)
			if err != nil {
				b.Fatal(err)
			}
			r.SetICRCCheck(bc.icrc)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if src.i == len(raw) {
					src.i = 0
				}
				f, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				if bc.fields {
					f.Fields()
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
