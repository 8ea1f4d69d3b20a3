package track

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// The tracker's cost is measured against decoding alone on the same
// in-memory capture: BenchmarkDecodeAndTrack / BenchmarkDecodeOnly should
// stay at or below 1.1. DecodeAndTrack feeds the tracker as smcdump does
// (one goroutine, Options.Unshared); DecodeAndTrackLocked as smctop does,
// taking the mutex that lets another goroutine take snapshots.
func benchCapture(b *testing.B, opts *Options) {
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
		if opts != nil {
			tr = New(*opts)
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
			if tr != nil {
				tr.Feed(f)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}

func BenchmarkDecodeOnly(b *testing.B)           { benchCapture(b, nil) }
func BenchmarkDecodeAndTrack(b *testing.B)       { benchCapture(b, &Options{Unshared: true}) }
func BenchmarkDecodeAndTrackLocked(b *testing.B) { benchCapture(b, &Options{}) }

// BenchmarkTrackOnly is what BenchmarkDecodeAndTrack adds to decoding:
// the same capture, replayed from memory into a new tracker each time.
func BenchmarkTrackOnly(b *testing.B) {
	frames := replay(b, refDir+"pingpong.pcap")
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		tr := New(Options{Unshared: true})
		for i := range frames {
			tr.feed(&frames[i])
		}
		n += len(frames)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/frame")
}

// BenchmarkFeed is the tracker alone on a frame mix replayed from memory:
// the hot path (RoCE WRITE/CDC/ACK) should not allocate.
func BenchmarkFeedRoCE(b *testing.B) {
	tr := New(Options{})
	frames := replay(b, refDir+"pingpong.pcap")
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

// TestFeedDoesNotMalloc: the per-frame path (RoCE WRITE, CDC, ACK of a
// known connection, and its -Y fields) allocates nothing.
func TestFeedDoesNotMalloc(t *testing.T) {
	frames := replay(t, refDir+"pingpong.pcap")
	tr := New(Options{})
	for i := range frames[:30] {
		tr.feed(&frames[i])
	}
	data := frames[30:4100]
	var rec decode.Record
	var f capture.Frame
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		in := &data[i%len(data)]
		i++
		tr.mu.Lock()
		tr.feed(in)
		tr.mu.Unlock()
		f.Number = in.number
		rec.Reset()
		tr.AppendFields(&f, &rec)
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per frame, want 0", allocs)
	}
	if len(rec.IDs) == 0 {
		t.Error("no tracker fields added: the test measures nothing")
	}
}
