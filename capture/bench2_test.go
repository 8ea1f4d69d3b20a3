package capture

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
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

// compareColumns is the plan of bench/compare.sh's six -T fields columns
// and their ids.
func compareColumns(b *testing.B) (*DirectPlan, []decode.FieldID) {
	var ids []decode.FieldID
	for _, n := range []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"} {
		d, _ := decode.LookupField(n)
		ids = append(ids, d.ID)
	}
	plan, ok := CompileDirect(ids)
	if !ok {
		b.Fatal("no plan")
	}
	return plan, ids
}

// BenchmarkDirectFile is -T fields' direct path over a 17 MB pcap file
// (pingpong 40 times) read by read(2) into the stream's buffer (Open: the
// lines from the buffer, appendBuffered), as one-CPU smcdump reads it.
func BenchmarkDirectFile(b *testing.B) {
	var frames []rawFrame
	for range 40 {
		frames = append(frames, readRaw(b, pingpong)...)
	}
	path := writePcap(b, b.TempDir(), "x.pcap", layers.LinkTypeEthernet, frames)
	b.ReportAllocs()
	buf := make([]byte, 0, 1<<16)
	for b.Loop() {
		r, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		plan, ids := compareColumns(b)
		r.SetFieldDemand(ids)
		r.SetDepth(DemandDepth(ids))
		r.SetDirect(plan)
		n := 0
		for {
			out, lines, f, err := r.AppendDirect(buf[:0], "\t", 0, 0)
			buf = out
			n += lines
			if err != nil {
				break
			}
			if f != nil {
				n++ // a frame the general path reads
			}
		}
		r.Close()
		if n != len(frames) {
			b.Fatalf("%d frames of %d", n, len(frames))
		}
	}
	b.ReportMetric(float64(len(frames)*b.N)/b.Elapsed().Seconds(), "frames/s")
}

// BenchmarkDirect is the direct path of -T fields for the six columns of
// bench/compare.sh, without the file read.
func BenchmarkDirect(b *testing.B) {
	raw := readRaw(b, pingpong)
	plan, ids := compareColumns(b)
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

// BenchmarkReadBatch is the reader's side of -j N and of the browser's
// whole-file filter: ReadBatch over a file in chunks with no visit (the
// frames decoded on other goroutines), what is left on one goroutine
// however many CPUs decode. Its frames/s bounds those runs' speed.
func BenchmarkReadBatch(b *testing.B) {
	for _, name := range []string{"pingpong", "multiconn"} {
		b.Run(name, func(b *testing.B) {
			raw := readRaw(b, filepath.Join(testutil.SamplesDir(b), name+".pcap"))
			var all []rawFrame
			for len(all) < 200_000 {
				all = append(all, raw...)
			}
			p := testutil.WriteFrames(b, "big.pcap", layers.LinkTypeEthernet, all)
			var batch Batch
			b.ReportAllocs()
			for b.Loop() {
				r, err := Open(p)
				if err != nil {
					b.Fatal(err)
				}
				for batch.Err == nil || batch.Err == io.EOF && batch.Len() > 0 {
					r.ReadBatch(&batch, 2048, nil)
				}
				if batch.Err != io.EOF {
					b.Fatal(batch.Err)
				}
				batch.Err = nil
				r.Close()
			}
			b.ReportMetric(float64(len(all)*b.N)/b.Elapsed().Seconds(), "frames/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(all)*b.N), "ns/frame")
		})
	}
}
