package filter_test

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
)

// TestRealCaptures runs filters with the catalogue's real field names over
// the kernel-made reference captures. The expected counts do not come from
// smcdump: they are the ground truth of testdata/reference/README.md (one
// Decline with peer diagnosis 0x03030002, SMC option on SYN and SYN-ACK)
// and tshark 4.0's count of the same frames (1023 CDC messages, 1021 RDMA
// WRITE Only, 25 v2 LLC frames = RC SEND Only frames that are not CDC).
func TestRealCaptures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, expr string
		want       int
	}{
		{"decline-nordma.pcap", "smc.clc.type == 4 and smc.clc.decline.reason == 0x03030002", 1},
		{"decline-nordma.pcap", "smc.clc.decline.reason_name == \"NOSMCRDEV\"", 1},
		{"decline-nordma.pcap", "smc.clc.type in {1 4}", 2},
		{"decline-nordma.pcap", "smc.clc.type == 2", 0},
		{"decline-nordma.pcap", "tcp.smc_option == 1", 2},
		{"fallback-nosmc.pcap", "tcp.smc_option == 1", 1},
		{"fallback-nosmc.pcap", "tcp.smc_option == 0 and tcp.flags.syn", 1},
		{"fallback-nosmc.pcap", "smc.clc", 0},
		{"no-ueid.pcap", "smc.clc.type == 4 && smc.clc.decline.reason == 0x03030000", 1},
		{"pingpong.pcap", "smc.cdc", 1023},
		{"pingpong.pcap", "roce.bth.opcode == 0x0a", 1021},
		{"pingpong.pcap", "roce.bth.opcode == 17", 2054},
		{"pingpong.pcap", "smc.llc.type >= 0x21 and smc.llc.type <= 0x29", 25},
		{"pingpong.pcap", "smc.llc and smc.cdc", 0},
		{"pingpong.pcap", "smc.clc.type == 2 and smc.clc.gid == 10.10.0.1 and smc.clc.mac == 52:54:00:0a:00:01", 1},
		{"pingpong.pcap", "smc.clc.eid contains \"LAB\"", 3},
		{"pingpong.pcap", "roce and not (smc.cdc or smc.llc or roce.bth.opcode in {10 17})", 0},
		// Either-direction aliases; counts from tshark -Y with the same filter.
		{"pingpong.pcap", "tcp.port == 5000", 13},
		{"pingpong.pcap", "udp.port == 4791", 4123},
		{"pingpong.pcap", "ip.addr == 10.10.0.2", 4138},
		{"pingpong.pcap", "ip.addr != 10.10.0.1", 0},
		{"pingpong.pcap", "ip.addr ~= 10.10.0.1", 4138},
		{"pingpong.pcap", "not ip.addr == 10.10.0.1", 2},
		{"pingpong.pcap", "eth.addr == 52:54:00:0a:00:01", 4139},
	}
	for _, tc := range tests {
		t.Run(tc.file+"/"+tc.expr, func(t *testing.T) {
			t.Parallel()
			f, err := filter.Compile(tc.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", tc.expr, err)
			}
			r, err := capture.Open(filepath.Join("..", "testdata", "reference", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			got := 0
			for {
				fr, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if f.Match(fr.Fields()) {
					got++
				}
			}
			if got != tc.want {
				t.Errorf("%s: %q matched %d frames, want %d", tc.file, tc.expr, got, tc.want)
			}
		})
	}
}

// TestAliasForms checks that aliases print as written and report errors
// under their own name.
func TestAliasForms(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"tcp.port == 5000",
		"ip.addr != 10.10.0.0/24",
		"not ip.addr in {10.10.0.1 10.10.0.2} or udp.port",
		"(eth.addr == 52:54:00:0a:00:01 or tcp.port > 1024) and ip.addr",
	} {
		f, err := filter.Compile(expr)
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		if f.String() != expr {
			t.Errorf("Compile(%q).String() = %q", expr, f.String())
		}
	}
	_, err := filter.Compile("tcp.port == http")
	var se *filter.SyntaxError
	if !errors.As(err, &se) || se.Col != 13 || se.Msg != `"http" is not an unsigned number for tcp.port` {
		t.Errorf("Compile(tcp.port == http) = %v", err)
	}
}

// BenchmarkMatchPingpong matches typical filters against the records of
// every frame of the real pingpong capture, as smcdump -Y does.
func BenchmarkMatchPingpong(b *testing.B) {
	r, err := capture.Open(filepath.Join("..", "testdata", "reference", "pingpong.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	var recs []decode.Record
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		// The reader reuses its record and frame bytes: keep deep copies.
		src := fr.Fields()
		rec := decode.Record{IDs: slices.Clone(src.IDs), Vals: slices.Clone(src.Vals)}
		for i := range rec.Vals {
			rec.Vals[i].B = slices.Clone(rec.Vals[i].B)
		}
		recs = append(recs, rec)
	}
	r.Close()
	for _, bc := range []struct{ name, expr string }{
		{"clc-decline", "smc.clc.type == 4 and smc.clc.decline.reason == 0x03030002"},
		{"prefix", "smc.llc"},
		{"alias", "ip.addr == 10.10.0.2 and udp.port == 4791"},
		{"ip-addr", "ip.addr == 10.10.0.2"},
		{"ip-src", "ip.src == 10.10.0.2"},
		{"udp-port", "udp.port == 4791"},
		{"cdc-range", "smc.cdc.seq in {100..200} || smc.cdc.flags.peer_conn_closed"},
	} {
		f, err := filter.Compile(bc.expr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for i := range recs {
					f.Match(&recs[i])
				}
				n += len(recs)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}
