package probe_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/smcscope/smcscope/probe"
)

func ExampleSummarize() {
	// RTTs of ten pings, one of them delayed.
	rtts := []time.Duration{12, 11, 13, 12, 95, 12, 11, 14, 12, 13}
	for i := range rtts {
		rtts[i] *= time.Microsecond
	}
	s := probe.Summarize(rtts)
	fmt.Println("n", s.N, "min", s.Min, "p50", s.P50, "p90", s.P90, "max", s.Max)
	fmt.Println("one way p50", s.Half().P50)
	// Output:
	// n 10 min 11µs p50 12µs p90 14µs max 95µs
	// one way p50 6µs
}

func ExampleFallbackError() {
	// What --require smc returns for the decline-nordma lab scenario.
	var err error = &probe.FallbackError{Reason: 0x05000000, PeerDiagnosis: 0x03030002}
	var fe *probe.FallbackError
	if errors.As(err, &fe) {
		fmt.Printf("fallback %s, peer said %s\n", fe.Reason, fe.PeerDiagnosis)
	}
	// Output:
	// fallback PEERDECL, peer said NOSMCRDEV
}
