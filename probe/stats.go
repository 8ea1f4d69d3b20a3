package probe

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Summary holds sockperf-style statistics of round-trip samples.
type Summary struct {
	N      int           `json:"n"`
	Min    time.Duration `json:"min_ns"`
	Mean   time.Duration `json:"mean_ns"`
	Stddev time.Duration `json:"stddev_ns"`
	P50    time.Duration `json:"p50_ns"`
	P90    time.Duration `json:"p90_ns"`
	P99    time.Duration `json:"p99_ns"`
	P999   time.Duration `json:"p99_9_ns"`
	P9999  time.Duration `json:"p99_99_ns"`
	Max    time.Duration `json:"max_ns"`
}

// Summarize sorts samples in place and computes their statistics. The
// standard deviation is the population one (divide by N), as sockperf's.
func Summarize(samples []time.Duration) Summary {
	n := len(samples)
	if n == 0 {
		return Summary{}
	}
	slices.Sort(samples)
	var sum float64
	for _, s := range samples {
		sum += float64(s)
	}
	mean := sum / float64(n)
	var sq float64
	for _, s := range samples {
		d := float64(s) - mean
		sq += d * d
	}
	return Summary{
		N:      n,
		Min:    samples[0],
		Mean:   time.Duration(math.Round(mean)),
		Stddev: time.Duration(math.Round(math.Sqrt(sq / float64(n)))),
		P50:    Percentile(samples, 50),
		P90:    Percentile(samples, 90),
		P99:    Percentile(samples, 99),
		P999:   Percentile(samples, 99.9),
		P9999:  Percentile(samples, 99.99),
		Max:    samples[n-1],
	}
}

// Percentile returns the nearest-rank p-th percentile of sorted samples:
// the smallest sample such that at least p% of all samples are <= it. With
// fewer than 10000 samples p99.99 is therefore the maximum, never an
// invented value between two samples.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// The 1e-9 keeps 99.9% of 1000 at rank 999 despite binary rounding.
	rank := int(math.Ceil(p/100*float64(n) - 1e-9))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Half divides every time by two: the one-way estimate RTT/2 that sockperf
// and perftest report as latency.
func (s Summary) Half() Summary {
	h := s
	for _, d := range []*time.Duration{&h.Min, &h.Mean, &h.Stddev, &h.P50, &h.P90, &h.P99, &h.P999, &h.P9999, &h.Max} {
		*d /= 2
	}
	return h
}

// Bucket is one histogram bar: samples in [Lo, Hi).
type Bucket struct {
	Lo, Hi time.Duration
	Count  int
}

// Histogram spreads sorted samples over n buckets of equal width on a log
// scale between the minimum and the maximum, so that a long tail does not
// squash the body into one bar.
func Histogram(sorted []time.Duration, n int) []Bucket {
	if len(sorted) == 0 || n <= 0 {
		return nil
	}
	lo, hi := float64(max(sorted[0], 1)), float64(max(sorted[len(sorted)-1], 1))
	if hi <= lo {
		return []Bucket{{Lo: sorted[0], Hi: sorted[len(sorted)-1] + 1, Count: len(sorted)}}
	}
	step := math.Log(hi/lo) / float64(n)
	out := make([]Bucket, n)
	for i := range out {
		out[i].Lo = time.Duration(lo * math.Exp(step*float64(i)))
		out[i].Hi = time.Duration(lo * math.Exp(step*float64(i+1)))
	}
	out[0].Lo = sorted[0]
	out[n-1].Hi = sorted[len(sorted)-1] + 1
	for _, s := range sorted {
		i := int(math.Log(float64(max(s, 1))/lo) / step)
		i = min(max(i, 0), n-1)
		out[i].Count++
	}
	return out
}

// WriteHistogram prints buckets as text bars 50 characters wide at most.
func WriteHistogram(w io.Writer, bs []Bucket) error {
	most := 0
	for _, b := range bs {
		most = max(most, b.Count)
	}
	for _, b := range bs {
		bar := 0
		if most > 0 {
			bar = (b.Count*50 + most - 1) / most
		}
		if _, err := fmt.Fprintf(w, "  %10s - %-10s %8d %s\n", usec(b.Lo), usec(b.Hi), b.Count, strings.Repeat("#", bar)); err != nil {
			return err
		}
	}
	return nil
}

// usec renders a duration in microseconds with 3 decimals, the unit of
// sockperf's report.
func usec(d time.Duration) string {
	return fmt.Sprintf("%.3f", float64(d)/float64(time.Microsecond))
}
