package output

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
	"github.com/smcscope/smcscope/track"
)

// TestGoldenANCK locks what smcdump says of each ANCK vector
// (testdata/anck, built by crafted.ANCKVectors and kept byte for byte):
// the text lines, -V, JSON, and the tracker's connection, link group and
// expert views. -V must read right beside ANCK's source.
func TestGoldenANCK(t *testing.T) {
	for _, v := range crafted.ANCKVectors {
		t.Run(v.Name, func(t *testing.T) {
			path := v.Build(t)
			built, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			testutil.GoldenFile(t, filepath.Join("..", "testdata", "anck", v.Name+".pcap"), built)
			for _, c := range []struct {
				name string
				o    Options
			}{
				{"text", Options{}},
				{"verbose", Options{Verbose: true, Count: 40}},
				{"json", Options{Format: "json", Count: 24}},
				{"z", Options{Quiet: true, Views: []string{track.ViewConns, track.ViewLinks, track.ViewLGR, track.ViewExpert}}},
			} {
				o := c.o
				o.Read = path
				o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
				var out, errb bytes.Buffer
				o.Stdout, o.Stderr = &out, &errb
				if err := Run(context.Background(), o); err != nil {
					t.Fatalf("%s: %v\n%s", c.name, err, errb.Bytes())
				}
				testutil.Golden(t, c.name, out.Bytes())
			}
		})
	}
}
