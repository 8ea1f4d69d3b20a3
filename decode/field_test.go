package decode

import (
	"fmt"
	"math"
	"math/rand/v2"
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

// TestAppendTime: times print with the decimals asked, digits cut, not
// rounded, exactly (where a float64 of the seconds is 72 ns off, and 238
// ns apart at today's times); the same as fmt on the integer parts.
func TestAppendTime(t *testing.T) {
	for _, c := range []struct {
		ns     int64
		digits uint8
		want   string
	}{
		{1795336493_775685001, 9, "1795336493.775685001"},
		{1795336493_775685000, 6, "1795336493.775685"},
		{1795336493_775685999, 6, "1795336493.775685"},
		{1795336493_775000000, 3, "1795336493.775"},
		{1795336493_775685001, 0, "1795336493"},
		{1795336493_000000007, 9, "1795336493.000000007"},
		{0, 6, "0.000000"},
		{-1_500000000, 9, "-1.500000000"},
		{-500000, 6, "-0.000500"},
		{1795336493_775685001, 12, "1795336493.775685001"},
	} {
		if got := string(AppendTime(nil, c.ns, c.digits)); got != c.want {
			t.Errorf("%d ns, %d digits: %s, want %s", c.ns, c.digits, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		ns := int64(rng.Uint64N(1 << 62))
		d := uint8(rng.UintN(10))
		want := fmt.Sprint(ns / 1e9)
		if d > 0 {
			want += fmt.Sprintf(".%0*d", d, ns%1e9/int64(math.Pow10(9-int(d))))
		}
		if got := string(AppendTime(nil, ns, d)); got != want {
			t.Fatalf("%d ns, %d digits: %s, want %s", ns, d, got, want)
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
