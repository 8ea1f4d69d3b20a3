package probe

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

var digestRE = regexp.MustCompile(`^conn (\d+) tcp: src=(\S+) dst=(\S+) c2s_bytes=(\d+) c2s_sha256=([0-9a-f]{64}) s2c_bytes=(\d+) s2c_sha256=([0-9a-f]{64})$`)

// TestDigest: --digest counts and hashes what each connection's
// application wrote and read: in ping-pong the echo is what was sent
// (warm-up included), in a one-way stream the server's echo of the last
// header only; no two connections' or messages' payloads are alike.
func TestDigest(t *testing.T) {
	o := loopbackOptions(t, ServerConfig{TCPOnly: true, TCPPort: 0})
	o.Digest, o.Parallel, o.Count, o.Sizes = true, 2, 20, []int{64, 1000}
	r := runJSON(t, o)
	if len(r.Digests) != 2 {
		t.Fatalf("digests: %q", r.Digests)
	}
	seen := map[string]bool{}
	for _, l := range r.Digests {
		m := digestRE.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("digest line %q", l)
		}
		want := strconv.Itoa((20 + o.Warmup) * (64 + 1000))
		if m[4] != want || m[6] != want || m[5] != m[7] {
			t.Errorf("%s: want %s bytes each way, the echo's digest the sent one's", l, want)
		}
		if seen[m[5]] {
			t.Errorf("%s: the same bytes as another connection", l)
		}
		seen[m[5]] = true
	}

	o = loopbackOptions(t, ServerConfig{TCPOnly: true})
	o.Digest, o.Bandwidth, o.Count, o.Sizes = true, true, 10, []int{16384}
	r = runJSON(t, o)
	m := digestRE.FindStringSubmatch(r.Digests[0])
	if m == nil || m[4] != fmt.Sprint(10*16384+HeaderLen) || m[6] != fmt.Sprint(HeaderLen) {
		t.Errorf("one-way stream: %q", r.Digests)
	}
}

// TestDigestPayloadsDiffer: with --digest no two messages of a connection
// carry the same payload (a misplaced byte shows in the digest).
func TestDigestPayloadsDiffer(t *testing.T) {
	d := newDigest(1, "", "")
	a, b := make([]byte, 64), make([]byte, 64)
	d.fill(a)
	d.fill(b)
	if string(a) == string(b) {
		t.Error("two payloads alike")
	}
}
