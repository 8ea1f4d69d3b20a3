package track

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/smcscope/smcscope/capture"
)

// The tracker's cost is measured against decoding alone on the same
// in-memory capture: BenchmarkDecodeAndTrack / BenchmarkDecodeOnly should
// stay at or below 1.3.
func benchCapture(b *testing.B, track bool) {
	data, err := os.ReadFile(refDir + "pingpong.pcap")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	frames := 0
	for b.Loop() {
		r, err := capture.NewFileReader("pingpong.pcap", bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		var tr *Tracker
		if track {
			tr = New(Options{})
		}
		for {
			f, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			frames++
			if track {
				tr.Feed(f)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

func BenchmarkDecodeOnly(b *testing.B)     { benchCapture(b, false) }
func BenchmarkDecodeAndTrack(b *testing.B) { benchCapture(b, true) }

// BenchmarkFeed is the tracker alone on a frame mix replayed from memory:
// the hot path (RoCE WRITE/CDC/ACK) should not allocate.
func BenchmarkFeedRoCE(b *testing.B) {
	tr := New(Options{})
	var frames []input
	eachFrame(b, refDir+"pingpong.pcap", func(f *capture.Frame) {
		var in input
		fill(&in, f)
		in.clc = append([]clcIn(nil), in.clc[:in.clcN]...)
		frames = append(frames, in)
	})
	// Prime the tracker with the handshake and link setup.
	for i := range frames[:30] {
		tr.feed(&frames[i])
	}
	data := frames[30:4100]
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		in := &data[i%len(data)]
		tr.feed(in)
	}
}
