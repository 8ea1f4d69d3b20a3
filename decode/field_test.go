package decode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestFieldOwners: every field names its owner, and its name sits under
// the owner's key, so the -V headings and demand-driven decoding agree
// with the names users type.
func TestFieldOwners(t *testing.T) {
	seen := map[Owner]bool{}
	for _, d := range Fields() {
		if d.Owner == OwnerUnknown || d.Owner >= NumOwners {
			t.Errorf("%s: no owner", d.Name)
			continue
		}
		seen[d.Owner] = true
		if !strings.HasPrefix(d.Name, d.Owner.Key()) {
			t.Errorf("%s: owner %s, whose fields are named %s.*", d.Name, d.Owner.Title(), d.Owner.Key())
		}
	}
	// The layers of this package each fill some field (the rest register
	// in capture and track, whose tests load them).
	for o := OwnerGRH; o <= OwnerCDC; o++ {
		if !seen[o] {
			t.Errorf("owner %s has no field", o.Title())
		}
	}
}

// TestAppendFixed9: the integer formatter of frame.time_epoch writes what
// strconv.AppendFloat(f, 'f', 9, 64) writes, ties and fallbacks included.
func TestAppendFixed9(t *testing.T) {
	fs := []float64{0, 1, 0.5, 0.0009765625, 1.0009765625, 3.0000000005, 1795330658.962938070,
		1795336493.913579, 1 << 33, 1 << 34, 1 << 40, 1e300, -1, math.Inf(1), math.NaN(), 5e-324,
		math.Nextafter(1795330658, 0), math.Nextafter(1795330658, 2e9)}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300000 {
		fs = append(fs, 1.6e9+rng.Float64()*4e8)             // capture times
		fs = append(fs, rng.Float64()*100)                   // relative times
		fs = append(fs, float64(rng.Uint64N(1<<40))/(1<<30)) // exact binary fractions: ties
		fs = append(fs, math.Float64frombits(rng.Uint64()))  // anything
	}
	for _, f := range fs {
		want := strconv.AppendFloat(nil, f, 'f', 9, 64)
		if got := appendFixed9(nil, f); string(got) != string(want) {
			t.Fatalf("%v (%#x): %s, want %s", f, math.Float64bits(f), got, want)
		}
	}
}

func TestAppendHexPad(t *testing.T) {
	for _, c := range []struct {
		v     uint64
		width int
	}{{0, 0}, {0, 6}, {0x11, 6}, {0xFFFFFF, 6}, {0x1000000, 6}, {0xff3da5a383700040, 16}, {1 << 63, 4}, {0xabc, 0}, {5, 20}} {
		want := fmt.Sprintf("%0*x", c.width, c.v)
		if got := string(appendHexPad(nil, c.v, c.width)); got != want {
			t.Errorf("%#x width %d: %s, want %s", c.v, c.width, got, want)
		}
	}
}
