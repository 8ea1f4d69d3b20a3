package lab

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
)

// digestLine is smcping --digest's end-of-run line: what one connection's
// application wrote (c2s) and read (s2c), bytes and SHA-256.
var digestLine = regexp.MustCompile(`^digest conn \d+ (\S+): src=(\S+) dst=(\S+) c2s_bytes=(\d+) c2s_sha256=([0-9a-f]{64}) s2c_bytes=(\d+) s2c_sha256=([0-9a-f]{64})$`)

type appTruth struct {
	proto, src, dst string
	bytes           [2]uint64
	sha             [2]string
}

// guestDigests reads every --digest line the client of scen wrote (its
// step outputs and client.log), one per connection by "CLIENT SERVER".
func guestDigests(t *testing.T, dir, scen string) map[string]appTruth {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, scen, "client", "*.txt"))
	return readDigests(append(files, filepath.Join(dir, scen, "client", "client.log")))
}

// readDigests reads the --digest lines of files (a missing one has none).
func readDigests(files []string) map[string]appTruth {
	out := map[string]appTruth{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			m := digestLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
			if m == nil {
				continue
			}
			a := appTruth{proto: m[1], src: m[2], dst: m[3], sha: [2]string{m[5], m[7]}}
			a.bytes[0], _ = strconv.ParseUint(m[4], 10, 64)
			a.bytes[1], _ = strconv.ParseUint(m[6], 10, 64)
			out[a.src+" "+a.dst] = a
		}
		f.Close()
	}
	return out
}

// streamHashes is a track.StreamSink that hashes every stream, by client
// and server address and direction, and counts its gaps.
type streamHashes struct {
	h map[string]*[2]hashed
}

type hashed struct {
	h    hash.Hash
	n    uint64
	gaps int
}

func (s *streamHashes) StreamChunk(ch *track.StreamChunk) {
	// By 4-tuple: a client port is used again towards another server
	// port (e2e-smc's background ping).
	k := ch.Conn.Client.String() + " " + ch.Conn.Server.String()
	x := s.h[k]
	if x == nil {
		x = &[2]hashed{{h: sha256.New()}, {h: sha256.New()}}
		s.h[k] = x
	}
	d := &x[ch.Dir]
	switch {
	case ch.End:
	case ch.Cause != track.GapNone:
		d.gaps++
	default:
		d.h.Write(ch.Data)
		d.n += uint64(len(ch.Data))
	}
}

// TestStreamDigests: the application bytes smcdump reassembles from the
// wire (RDMA WRITEs into the RMBE, released by CDC cursors) are, for every
// SMC-R connection smcping --digest ran, exactly what the application in
// the guest wrote and read: the same number of bytes and the same SHA-256
// each way, no gap. e2e-smc has a ping-pong of two sizes and a one-way
// stream of multi-packet WRITEs that wraps the RMBE; multilink has a
// connection whose link fails while it runs (it goes on over the other
// link) and one made after the failover; the sample scenarios, when the
// run has them, a long ping-pong that wraps the RMBE and a bulk stream
// (long), four connections at once (multiconn), a reader that lets the
// RMBE fill (slow-reader) and a lossy path whose requests are sent again
// (lossy).
func TestStreamDigests(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		// e2e-smc and multilink are in every e2e run; a run dir may hold
		// more scenarios with digests (lab/run --out DIR/K e2e pingpong
		// long multiconn slow-reader lossy), checked alike.
		scens := []string{"e2e-smc", "multilink"}
		for _, s := range []string{"pingpong", "teardown", "long", "multiconn", "slow-reader", "lossy"} {
			if _, err := os.Stat(filepath.Join(dir, s, "capture.pcap")); err == nil {
				scens = append(scens, s)
			}
		}
		for _, scen := range scens {
			t.Run(scen, func(t *testing.T) {
				skipKernelTimedOut(t, dir, scen)
				truth := guestDigests(t, dir, scen)
				if len(truth) == 0 {
					t.Fatalf("no smcping --digest line in %s", filepath.Join(dir, scen, "client"))
				}
				checkDigests(t, filepath.Join(dir, scen, "capture.pcap"), truth)
			})
		}
	})
}

// TestHTTPExport: e2e-smc's HTTP exchange (smclab http-get against smclab http-serve,
// Go's HTTP client and server on AF_SMC sockets) is an SMC-R connection in the capture,
// its bytes RDMA WRITEs; smcdump --export-tcp gives it back as the TCP connection the
// applications saw, and tshark's HTTP dissector reads the request and the answer the
// guests logged.
func TestHTTPExport(t *testing.T) {
	tshark := testutil.NeedTool(t, "tshark")
	bin := testutil.GoBuild(t, "../cmd/smcdump", "smcdump")
	eachKernel(t, func(t *testing.T, dir string) {
		if got := readFile(t, filepath.Join(dir, "e2e-smc", "client", "smclab-http.txt")); !strings.Contains(got, `200 OK "hello over SMC-R\n"`) {
			t.Fatalf("the guest's http-get: %q", got)
		}
		cap := filepath.Join(dir, "e2e-smc", "capture.pcap")
		conns, err := exec.Command(bin, "-q", "-r", cap, "-z", "smc,conns").Output()
		if err != nil {
			t.Fatalf("smcdump -z smc,conns: %v", err)
		}
		if !regexp.MustCompile(`10\.10\.0\.1:5080 +SMC-R `).Match(conns) {
			t.Fatalf("the HTTP connection is not SMC-R in the capture:\n%s", conns)
		}
		out := filepath.Join(t.TempDir(), "tcp.pcapng")
		if b, err := exec.Command(bin, "-r", cap, "--export-tcp", out).CombinedOutput(); err != nil {
			t.Fatalf("smcdump --export-tcp: %v\n%s", err, b)
		}
		b, err := exec.Command(tshark, "-r", out, "-d", "tcp.port==5080,http", "-Y", "http", "-T", "fields",
			"-e", "http.request.method", "-e", "http.request.uri", "-e", "http.response.code", "-e", "http.content_length_header").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		got := string(b)
		for _, want := range []string{"GET\t/smc", "\t200\t" + strconv.Itoa(len("hello over SMC-R\n"))} {
			if !strings.Contains(got, want) {
				t.Errorf("tshark's HTTP of the export lacks %q:\n%s", want, got)
			}
		}
	})
}

// checkDigests reassembles the streams of the capture at path and wants
// each SMC connection of truth in it with the application's bytes both
// ways, no gap.
func checkDigests(t *testing.T, path string, truth map[string]appTruth) {
	t.Helper()
	s := &streamHashes{h: map[string]*[2]hashed{}}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := track.New(track.Options{Unshared: true, Stream: s})
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Feed(f)
	}
	checked := 0
	for conn, a := range truth {
		if a.proto == "tcp" {
			continue // a TCP baseline connection carries its bytes in TCP
		}
		got := s.h[conn]
		if got == nil {
			t.Errorf("%s: smcping wrote %d B and read %d B, the capture has no SMC-R stream of it", conn, a.bytes[0], a.bytes[1])
			continue
		}
		for d := range 2 {
			g := &got[d]
			if sum := hex.EncodeToString(g.h.Sum(nil)); g.n != a.bytes[d] || sum != a.sha[d] || g.gaps != 0 {
				t.Errorf("%s %v: reassembled %d B sha256 %s with %d gaps; the application: %d B sha256 %s",
					conn, track.Dir(d), g.n, sum[:16], g.gaps, a.bytes[d], a.sha[d][:16])
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatalf("no SMC connection among the digests %v", truth)
	}
	t.Logf("%d connections: reassembled streams equal what the applications wrote and read", checked)
}

// TestStreamSampleDigests: the published sample shows it without a lab
// run: long.client.log holds what smcping wrote and read on each
// connection of samples/long.pcap (a ping-pong whose cursors wrap the
// RMBE, a 1 MiB stream of multi-packet WRITEs), bytes and SHA-256, and
// the streams reassembled from the capture are exactly that.
func TestStreamSampleDigests(t *testing.T) {
	dir := testutil.SamplesDir(t)
	truth := readDigests([]string{filepath.Join(dir, "long.client.log")})
	if len(truth) != 2 {
		t.Fatalf("%d digest lines in long.client.log, want 2 (ping-pong and bulk)", len(truth))
	}
	checkDigests(t, filepath.Join(dir, "long.pcap"), truth)
}
