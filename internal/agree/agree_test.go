package agree

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
)

// TestCaptures: smcdump's views and smctop's wire rows agree on every
// capture of samples/ and testdata/.
func TestCaptures(t *testing.T) {
	for _, p := range testutil.AllCaptures(t) {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			Agree(t, p, data)
		})
	}
}

// TestCutCaptures: they agree on captures people take: started
// mid-stream (editcap -r multilink.pcap out 40-7204), stopped mid-handshake
// (pingpong cut after each of frames 3..16), stopped after a failover.
func TestCutCaptures(t *testing.T) {
	type cut struct {
		name     string
		from, to int // frames from..to (1-based, to 0: the end)
	}
	cuts := map[string][]cut{
		"multilink.pcap": {{"mid-stream", 40, 0}, {"mid-stream-short", 40, 1200}, {"after-failover", 1, 1000}, {"late", 4000, 0}},
		"pingpong.pcap":  {{"mid-stream", 30, 0}},
		"lossy.pcap":     {{"mid-stream", 500, 0}},
		"multiconn.pcap": {{"mid-stream", 2000, 0}},
	}
	for n := 3; n <= 16; n++ {
		cuts["pingpong.pcap"] = append(cuts["pingpong.pcap"], cut{"handshake-" + strconv.Itoa(n), 1, n})
	}
	for file, cs := range cuts {
		frames, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), file))
		for _, c := range cs {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				to := c.to
				if to == 0 || to > len(frames) {
					to = len(frames)
				}
				Agree(t, c.name, testutil.PcapNanos(t, lt, frames[c.from-1:to]))
			})
		}
	}
}

// TestDisagreementFound: the comparison is not blind: two different
// captures disagree on connections, links, history and findings.
func TestDisagreementFound(t *testing.T) {
	snap := func(file string) *track.Snapshot {
		tr := track.New(track.Options{})
		frames, lt := testutil.ReadFrames(t, filepath.Join(testutil.SamplesDir(t), file))
		r, err := capture.NewFileReader(file, bytes.NewReader(testutil.PcapNanos(t, lt, frames)))
		if err != nil {
			t.Fatal(err)
		}
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			tr.Feed(f)
		}
		s := tr.Snapshot()
		return &s
	}
	diffs := Snapshots(snap("pingpong.pcap"), snap("multilink.pcap"))
	var what []string
	for _, d := range diffs {
		what = append(what, d.What)
	}
	all := strings.Join(what, "\n")
	for _, want := range []string{"conn wire:1 bytes", "conn wire:2", "link group wire-lgr:1 links", "link group wire-lgr:1 history", "findings"} {
		if !strings.Contains(all, want) {
			t.Errorf("no disagreement on %q among:\n%s", want, all)
		}
	}
}

// BenchmarkBytes is one comparison of multilink.pcap (7204 frames), the
// unit of the mutation runs.
func BenchmarkBytes(b *testing.B) {
	data, err := os.ReadFile(filepath.Join(testutil.SamplesDir(b), "multilink.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Bytes("multilink", data); err != nil {
			b.Fatal(err)
		}
	}
}
