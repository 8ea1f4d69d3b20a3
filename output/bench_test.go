package output

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/smcscope/smcscope/output/zview"
)

// benchFields are bench/compare.sh's -T fields columns.
var benchFields = []string{"frame.number", "roce.bth.opcode", "roce.bth.dqpn", "roce.bth.psn", "smc.cdc.seq", "smc.clc.type"}

// BenchmarkDecodePingpong runs the whole smcdump pipeline (read, decode,
// reassemble, ICRC, fields, output), wired as cmd/smcdump wires it (the
// tracker available), over pingpong.pcap repeated to about 100k frames,
// in each output mode bench/compare.sh times and two -q filters besides
// (a plain and a tracker field). Its CPU profile is cmd/smcdump's
// default.pgo (make pgo).
func BenchmarkDecodePingpong(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"fields", Options{All: true, Format: FormatFields, Fields: benchFields}},
		{"fields4", Options{All: true, Format: FormatFields, Fields: benchFields[:4]}},
		{"text", Options{}},
		{"json", Options{All: true, Format: FormatJSON}},
		{"jsonl", Options{All: true, Format: FormatJSONL}},
		{"quiet", Options{Quiet: true}},
		{"conns", Options{Quiet: true, Views: []string{"smc,conns"}}},
		{"filter", Options{Quiet: true, DisplayFilter: "smc.cdc.seq > 5"}},
		{"filter-conn", Options{Quiet: true, DisplayFilter: "smc.conn.id == 1"}},
		// bench/compare.sh's pair: the same frames selected, the second
		// with a tracker field.
		{"filter-seq", Options{DisplayFilter: "smc.cdc.seq == 5"}},
		{"filter-tracked", Options{DisplayFilter: "smc.cdc.seq == 5 and smc.conn.id"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p, frames := bigCapture(b)
			benchRun(b, bc.o, p, frames)
		})
	}
}

func bigCapture(b *testing.B) (string, int) { return repeatedCapture(b, 25) }

// repeatedCapture is pingpong.pcap repeated reps times.
func repeatedCapture(b *testing.B, reps int) (string, int) {
	b.Helper()
	one := readFrames(b, pingpong, -1)
	var all []rawFrame
	for rep := 0; rep < reps; rep++ {
		all = append(all, one...)
	}
	return writeFrames(b, "big.pcap", all), len(all)
}

// BenchmarkParallel compares -j 1 and -j 2 per mode on pingpong.pcap
// repeated to about 400k frames, enough for a run's setup (the workers'
// printers, the batches' buffers growing) to be amortized as on a real
// capture (pin the CPUs with taskset to compare one core and two:
// taskset -c 0 and taskset -c 0,1).
func BenchmarkParallel(b *testing.B) {
	for _, bc := range []struct {
		name string
		o    Options
	}{
		{"fields4", Options{All: true, Format: FormatFields, Fields: benchFields[:4]}},
		{"fields", Options{All: true, Format: FormatFields, Fields: benchFields}},
		{"text", Options{}},
		{"json", Options{All: true, Format: FormatJSON}},
		{"filter", Options{Quiet: true, DisplayFilter: "smc.cdc.seq > 5"}},
		{"conns", Options{Quiet: true, Views: []string{"smc,conns"}}},
		{"fields-conns", Options{All: true, Format: FormatFields, Fields: benchFields[:4], Views: []string{"smc,conns"}}},
	} {
		for _, jobs := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/j%d", bc.name, jobs), func(b *testing.B) {
				p, frames := repeatedCapture(b, 100)
				o := bc.o
				o.Jobs = jobs
				benchRun(b, o, p, frames)
			})
		}
	}
}

// benchRun runs o over capture p (of frames frames) b.N times, with the
// tracker the binary has, reporting frames per second.
func benchRun(b *testing.B, o Options, p string, frames int) {
	o.Read, o.Stdout, o.Stderr = p, io.Discard, io.Discard
	o.NewTracker = func(views []string) (Tracker, error) { return zview.NewTracker(views) }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames*b.N)/b.Elapsed().Seconds(), "frames/s")
	b.ReportMetric(0, "ns/op")
}
