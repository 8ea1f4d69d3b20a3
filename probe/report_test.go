package probe

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.golden")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name(), name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update once)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s:\n%s", name, path, got)
	}
}

// summaryUS builds a Summary from microsecond values in sockperf's order.
func summaryUS(n int, v ...float64) Summary {
	d := make([]time.Duration, len(v))
	for i, x := range v {
		d[i] = time.Duration(x * 1000)
	}
	return Summary{N: n, Min: d[0], Mean: d[1], Stddev: d[2], P50: d[3], P90: d[4], P99: d[5], P999: d[6], P9999: d[7], Max: d[8]}
}

// TestReportGolden renders a report whose proofs come from the lab's
// ground truth (pingpong and decline-nordma client logs) and whose
// statistics are those of a two-guest SMC-R run over rxe (Linux 6.12, TCG).
func TestReportGolden(t *testing.T) {
	smcr, _ := diagFromLog(t, "pingpong.client.log")
	smcr.Link.LGRID, smcr.Link.HasLGRID = 0x100, true
	fb, _ := diagFromLog(t, "decline-nordma.client.log")
	r := &Report{Target: "10.10.0.1:5000", Proto: "smc", hists: map[string][]Bucket{}}
	r.Conns = []ConnReport{
		connReport(ProtoSMC, smcr.Src.String(), smcr.Dst.String(), SocketID{Inode: 400}, Proof{Mode: smcr.Mode, Link: smcr.Link}),
		connReport(ProtoSMC, fb.Src.String(), fb.Dst.String(), SocketID{Inode: 401}, Proof{Mode: fb.Mode, Reason: fb.Reason, PeerDiagnosis: fb.PeerDiagnosis}),
		connReport(ProtoTCP, "10.10.0.2:50930", "10.10.0.1:5001", SocketID{Inode: 402}, Proof{Mode: ModeTCP}),
	}
	s1 := summaryUS(400, 2027.719, 4828.897, 1261.818, 4494.752, 6460.824, 8507.334, 11852.903, 11852.903, 11852.903)
	s2 := summaryUS(400, 778.570, 2492.680, 1277.216, 2295.033, 3869.127, 5903.425, 13031.249, 13031.249, 13031.249)
	r.Results = []Result{
		{Proto: "smc", Mode: "mixed", Size: 64, RTT: s1, HalfRTT: s1.Half()},
		{Proto: "tcp", Mode: "TCP", Size: 64, RTT: s2, HalfRTT: s2.Half()},
	}
	r.Ratios = []Ratio{{Proto: "smc", Size: 64, P50: float64(s1.P50) / float64(s2.P50), Mean: float64(s1.Mean) / float64(s2.Mean), P99: float64(s1.P99) / float64(s2.P99)}}
	r.BW = []BWResult{{Proto: "smc", Size: 65536, Conns: 1, Messages: 192, Bytes: 192 * 65536, Seconds: 3.001, MBPerSec: 4.19, MsgsPerSec: 64}}
	for _, out := range []string{"text", "json"} {
		o := Options{Output: out, Parallel: 2, Count: 200}
		var b bytes.Buffer
		if err := r.writeHeader(&b, o); err != nil {
			t.Fatal(err)
		}
		if err := r.writeBody(&b, o); err != nil {
			t.Fatal(err)
		}
		golden(t, out, b.Bytes())
	}
}
