package output

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestAppendSeconds: the integer formatter of the text lines' time column
// writes what strconv.AppendFloat(d.Seconds(), 'f', 6) writes, including
// the ties and large and negative times it hands to the float path.
func TestAppendSeconds(t *testing.T) {
	ds := []time.Duration{0, 1, 499, 500, 501, 999, 1000, 1500, 999_999_499, 999_999_500, 999_999_999,
		time.Second, 3*time.Second + 500, 86400 * time.Second, 1<<62 + 123456789, -1, -1500, -time.Second}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		ds = append(ds, time.Duration(rng.Int64N(int64(48*time.Hour))))
		ds = append(ds, time.Duration(rng.Int64N(2e9)/1000*1000+500)) // ties
		ds = append(ds, time.Duration(rng.Int64N(1<<50)))
	}
	for _, d := range ds {
		want := strconv.AppendFloat(nil, d.Seconds(), 'f', 6, 64)
		if got := appendSeconds(nil, d); string(got) != string(want) {
			t.Fatalf("%d ns: %s, want %s", int64(d), got, want)
		}
	}
}

// TestSince: the capture-time difference is time.Time.Sub's, near zero,
// across seconds and both ways, and beyond the shortcut's range.
func TestSince(t *testing.T) {
	base := time.Unix(1795330658, 962938070).UTC()
	for _, d := range []time.Duration{0, 1, -1, 999_999_999, -999_999_999, time.Second, 90 * 24 * time.Hour,
		-90 * 24 * time.Hour, 100 * 365 * 24 * time.Hour, 200 * 365 * 24 * time.Hour, -200 * 365 * 24 * time.Hour} {
		ts := base.Add(d)
		if got, want := since(ts, base), ts.Sub(base); got != want {
			t.Errorf("%v: %v, want %v", d, got, want)
		}
	}
	far := time.Unix(1<<40, 5)
	if got, want := since(far, base), far.Sub(base); got != want {
		t.Errorf("far: %v, want %v", got, want)
	}
}

// TestNeedsEscape: the eight-bytes-at-a-time test agrees with a byte
// loop on every byte value at every position, and on random text.
func TestNeedsEscape(t *testing.T) {
	slow := func(s []byte) bool {
		for _, c := range s {
			if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				return true
			}
		}
		return false
	}
	base := []byte("38  0.564140  10.10.0.1 -> 10.10.0.2  RoCE  RC ACK")
	for i := range base {
		for c := 0; c < 256; c++ {
			s := append([]byte(nil), base...)
			s[i] = byte(c)
			if got, want := needsEscape(s), slow(s); got != want {
				t.Fatalf("byte %#x at %d: %v, want %v", c, i, got, want)
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		s := make([]byte, rng.IntN(40))
		for i := range s {
			s[i] = byte(0x20 + rng.IntN(0x60))
			if rng.IntN(50) == 0 {
				s[i] = byte(rng.IntN(256))
			}
		}
		if got, want := needsEscape(s), slow(s); got != want {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
	}
}
