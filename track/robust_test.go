package track

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
)

// feedBytes runs a (possibly damaged) pcap image through capture and the
// tracker, including views and fields: nothing may panic.
func feedBytes(t testing.TB, data []byte) {
	r, err := capture.NewFileReader("fuzz.pcap", bytes.NewReader(data))
	if err != nil {
		return
	}
	tr := New(Options{Timeline: "all", MaxConns: 8, IdleTimeout: 1})
	var rec decode.Record
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) || err != nil {
			break
		}
		tr.Feed(f)
		rec.Reset()
		tr.AppendFields(f, &rec)
	}
	s := tr.Snapshot()
	for _, v := range []any{s.ConnsView(), s.LinkRows(), s.LGRRows(), s.DeclineView()} {
		if _, err := json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range s.Conns {
		if _, err := s.Timeline(strconv.Itoa(c.ID)); err != nil {
			t.Fatalf("timeline of %d: %v", c.ID, err)
		}
	}
}

// TestCorruptedCaptures flips bytes of the real captures at random places
// (fixed seed): decoders reject what they must, the tracker copes with the
// rest (impossible cursors, unknown tokens, bogus LLC) without panicking.
func TestCorruptedCaptures(t *testing.T) {
	for _, name := range []string{"pingpong", "decline-nordma", "no-ueid"} {
		orig, err := os.ReadFile(refDir + name + ".pcap")
		if err != nil {
			t.Fatal(err)
		}
		// Frame bytes only: a damaged record header ends the file early and
		// would test the reader instead of the tracker.
		var spans [][2]int
		for off := 24; off+16 <= len(orig); {
			n := int(binary.LittleEndian.Uint32(orig[off+8:]))
			spans = append(spans, [2]int{off + 16, off + 16 + n})
			off += 16 + n
		}
		rng := rand.New(rand.NewPCG(1, uint64(len(orig))))
		rounds := 20
		if testing.Short() {
			rounds = 5
		}
		for range rounds {
			data := bytes.Clone(orig)
			for range 1 + rng.IntN(200) {
				sp := spans[rng.IntN(len(spans))]
				i := sp[0] + 14 + rng.IntN(sp[1]-sp[0]-14) // past Ethernet, so frames stay IP
				data[i] ^= byte(1 + rng.IntN(255))
			}
			feedBytes(t, data)
		}
	}
}

func FuzzTrackCapture(f *testing.F) {
	for _, name := range []string{"decline-nordma", "no-ueid", "fallback-nosmc"} {
		data, err := os.ReadFile(refDir + name + ".pcap")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) { feedBytes(t, data) })
}

// TestOddFrames: frames without IP (ARP, LLDP), a nil frame, and fields for
// a frame that was never fed do nothing.
func TestOddFrames(t *testing.T) {
	tr := New(Options{})
	tr.Feed(nil)
	var rec decode.Record
	tr.AppendFields(nil, &rec)
	eachFrame(t, refDir+"pingpong.pcap", func(f *capture.Frame) {
		if f.IPv4 == nil && f.IPv6 == nil {
			tr.Feed(f)
		}
	})
	s := tr.Snapshot()
	if s.Stats.Frames == 0 || s.Stats.Other != s.Stats.Frames || len(s.Conns)+len(s.Links) != 0 || len(rec.IDs) != 0 {
		t.Errorf("non-IP frames: %+v, %d conns, %d links", s.Stats, len(s.Conns), len(s.Links))
	}
}
