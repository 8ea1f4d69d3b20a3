package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

func BenchmarkReaderStages(b *testing.B) {
	raw := readRaw(b, pingpong)
	for _, bc := range []struct {
		name         string
		icrc, fields bool
	}{{"decode", false, false}, {"decode+icrc", true, false}, {"decode+fields", false, true}, {"all", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			src := &sliceSource{frames: raw, loop: true}
			r, err := NewReader("b", src, layers.LinkTypeEthernet)
			if err != nil {
				b.Fatal(err)
			}
			r.SetICRCCheck(bc.icrc)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
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

// BenchmarkDirect is the direct path of -T fields for the six columns of
// bench/compare.sh, without the file read.
func BenchmarkDirect(b *testing.B) {
	raw := readRaw(b, pingpong)
	var ids []decode.FieldID
	for _, n := range []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"} {
		d, _ := decode.LookupField(n)
		ids = append(ids, d.ID)
	}
	plan, ok := CompileDirect(ids)
	if !ok {
		b.Fatal("no plan")
	}
	src := &sliceSource{frames: raw, loop: true}
	r, err := NewReader("b", src, layers.LinkTypeEthernet)
	if err != nil {
		b.Fatal(err)
	}
	r.SetFieldDemand(ids)
	r.SetDepth(DemandDepth(ids))
	r.SetDirect(plan)
	line := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if f.Direct() {
			line = plan.AppendColumns(line[:0], f, "\t", 0)
		}
	}
}
