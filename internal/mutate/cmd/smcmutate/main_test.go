package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestRunNames: every mutation's file lands in the output directory, also
// those whose names hold a path separator ("thin 10/2").
func TestRunNames(t *testing.T) {
	in := filepath.Join(testutil.Root(t), "samples", "pingpong.pcap")
	for _, m := range []string{"thin 10/2", "late 5+3", "flip 27:66^0x40", "oneway 1"} {
		dir := t.TempDir()
		if err := run(in, 1, 1, dir, false, m); err != nil {
			t.Fatalf("%q: %v", m, err)
		}
		if es, err := os.ReadDir(dir); err != nil || len(es) != 1 || es[0].IsDir() {
			t.Errorf("%q: wrote %v (%v), want one file", m, es, err)
		}
	}
}
