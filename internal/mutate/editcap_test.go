package mutate_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestEditcapCopies holds docs/smcdump.md's count: Wireshark's own fuzzer,
// editcap -E at 0.01 and 0.02 (its fuzz rate), seeds 21 to 25, on eight
// samples: no copy fails a connection or has more fall back than the
// whole capture, smcdump and smctop say the same of each (checkVariant),
// and all 80 list the whole capture's number of connections.
func TestEditcapCopies(t *testing.T) {
	if testing.Short() {
		t.Skip("80 damaged copies: skipped with -short")
	}
	editcap, err := exec.LookPath("editcap")
	if err != nil {
		t.Skip("editcap not installed: run make test-deps")
	}
	const want = 80
	dir := t.TempDir()
	kept, copies := 0, 0
	for _, name := range damagedSamples {
		rel := "samples/" + name + ".pcap"
		src := filepath.Join(testutil.Root(t), rel)
		frames, lt, err := mutate.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		base := feed(t, rel, lt, frames)
		for _, rate := range []string{"0.01", "0.02"} {
			for seed := 21; seed <= 25; seed++ {
				out := filepath.Join(dir, fmt.Sprintf("%s-%s-%d.pcap", name, rate, seed))
				if b, err := exec.Command(editcap, "-E", rate, "--seed", fmt.Sprint(seed), src, out).CombinedOutput(); err != nil {
					t.Fatalf("editcap: %v: %s", err, b)
				}
				vf, vlt, err := mutate.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				vname := fmt.Sprintf("%s editcap -E %s --seed %d", rel, rate, seed)
				v := checkVariant(t, vname, vlt, vf) // smcdump and smctop agreeing too
				copies++
				if len(v.snap.Conns) == len(base.snap.Conns) {
					kept++
				}
				noneFailed(t, vname, v)
				if got, want := fallbacks(v.snap), fallbacks(base.snap); got > want {
					t.Errorf("%s: %d connections fell back, the whole capture's %d: damage in the capture is no fallback of the hosts'", vname, got, want)
				}
			}
		}
	}
	if kept < want {
		t.Errorf("%d of %d copies list the whole capture's connections, want %d at least", kept, copies, want)
	}
	t.Logf("%d of %d copies list the whole capture's connections", kept, copies)
}
