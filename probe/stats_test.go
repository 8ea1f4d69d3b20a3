//go:build linux

package probe

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// bruteRank is the nearest-rank percentile by definition: the smallest
// sample v such that at least p% of the samples are <= v, with p given in
// hundredths of a percent so no float rounding is involved.
func bruteRank(samples []time.Duration, pHundredths int) time.Duration {
	best := time.Duration(math.MaxInt64)
	for _, v := range samples {
		le := 0
		for _, x := range samples {
			if x <= v {
				le++
			}
		}
		if le*10000 >= pHundredths*len(samples) && v < best {
			best = v
		}
	}
	return best
}

// bruteStddev uses exact rational arithmetic and the E[x²]-E[x]² form, a
// different route from the two-pass float code under test.
func bruteStddev(samples []time.Duration) float64 {
	n := big.NewRat(int64(len(samples)), 1)
	sum, sq := new(big.Rat), new(big.Rat)
	for _, s := range samples {
		v := big.NewRat(int64(s), 1)
		sum.Add(sum, v)
		sq.Add(sq, new(big.Rat).Mul(v, v))
	}
	mean := new(big.Rat).Quo(sum, n)
	vr := new(big.Rat).Sub(new(big.Rat).Quo(sq, n), new(big.Rat).Mul(mean, mean))
	f, _ := vr.Float64()
	return math.Sqrt(f)
}

// latencyLike draws a body around base with a long tail and many ties
// (samples rounded to 10 ns), the shape of real ping-pong RTTs.
func latencyLike(r *rand.Rand, n int, base time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		v := float64(base) * math.Exp(r.NormFloat64()*0.15)
		if r.IntN(100) == 0 {
			v *= 5 + 20*r.Float64() // scheduler hiccups
		}
		out[i] = time.Duration(v) / 10 * 10
	}
	return out
}

func checkAgainstBrute(t *testing.T, samples []time.Duration) {
	t.Helper()
	ref := slices.Clone(samples)
	got := Summarize(slices.Clone(samples))
	want := map[string][2]time.Duration{
		"p50":    {got.P50, bruteRank(ref, 5000)},
		"p90":    {got.P90, bruteRank(ref, 9000)},
		"p99":    {got.P99, bruteRank(ref, 9900)},
		"p99.9":  {got.P999, bruteRank(ref, 9990)},
		"p99.99": {got.P9999, bruteRank(ref, 9999)},
		"min":    {got.Min, slices.Min(ref)},
		"max":    {got.Max, slices.Max(ref)},
	}
	for name, gw := range want {
		if gw[0] != gw[1] {
			t.Errorf("n=%d %s = %v, brute force %v", len(samples), name, gw[0], gw[1])
		}
	}
	var sum time.Duration
	for _, s := range ref {
		sum += s
	}
	if m := float64(sum) / float64(len(ref)); math.Abs(float64(got.Mean)-m) > 1 {
		t.Errorf("n=%d mean = %v, want %.1f ns", len(samples), got.Mean, m)
	}
	if sd := bruteStddev(ref); math.Abs(float64(got.Stddev)-sd) > 1 {
		t.Errorf("n=%d stddev = %v, want %.1f ns", len(samples), got.Stddev, sd)
	}
	if got.N != len(samples) {
		t.Errorf("N = %d, want %d", got.N, len(samples))
	}
}

func TestSummarizeAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Sizes around the ranks where off-by-one errors hide (n*p exact or not).
	for _, n := range []int{1, 2, 3, 7, 10, 99, 100, 101, 999, 1000, 1001, 2500} {
		checkAgainstBrute(t, latencyLike(r, n, 12*time.Microsecond))
	}
}

// TestSummarizeRealLoopback measures real RTTs over loopback TCP and
// checks the statistics of those samples against the brute-force reference.
func TestSummarizeRealLoopback(t *testing.T) {
	srv, addr := startServer(t, ServerConfig{TCPOnly: true})
	_ = srv
	c := dialTCP(t, addr)
	p := NewPinger(c, 64)
	samples := make([]time.Duration, 0, 1500)
	for range cap(samples) {
		rtt, err := p.Ping(64)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, rtt)
	}
	checkAgainstBrute(t, samples)
}

func TestSummarizeEmptyAndHalf(t *testing.T) {
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v, want zero", s)
	}
	s := Summarize([]time.Duration{3, 5, 9})
	h := s.Half()
	if h.Min != 1 || h.Max != 4 || h.P50 != 2 || h.N != 3 {
		t.Errorf("Half = %+v", h)
	}
}

func TestHistogram(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	samples := latencyLike(r, 5000, 20*time.Microsecond)
	slices.Sort(samples)
	bs := Histogram(samples, 20)
	if len(bs) != 20 {
		t.Fatalf("%d buckets, want 20", len(bs))
	}
	total := 0
	for i, b := range bs {
		total += b.Count
		if b.Hi <= b.Lo || (i > 0 && b.Lo < bs[i-1].Lo) {
			t.Errorf("bucket %d [%v, %v) not increasing", i, b.Lo, b.Hi)
		}
	}
	if total != len(samples) {
		t.Errorf("buckets hold %d samples, want %d", total, len(samples))
	}
	if bs[0].Lo != samples[0] || bs[19].Hi <= samples[len(samples)-1] {
		t.Errorf("range [%v, %v) does not cover [%v, %v]", bs[0].Lo, bs[19].Hi, samples[0], samples[len(samples)-1])
	}
	if one := Histogram([]time.Duration{7, 7, 7}, 5); len(one) != 1 || one[0].Count != 3 {
		t.Errorf("equal samples: %+v, want one bucket of 3", one)
	}
}
