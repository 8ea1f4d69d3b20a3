package main

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/track"
)

// TestRun repeats the real pingpong capture past 1 MiB and checks that
// every round is a byte-exact copy with monotonic timestamps.
func TestRun(t *testing.T) {
	in := filepath.Join("..", "..", "testdata", "reference", "pingpong.pcap")
	orig, _, err := load([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "big.pcap")
	n, err := run(out, options{size: 1 << 20}, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if n%len(orig) != 0 || n/len(orig) < 2 {
		t.Fatalf("wrote %d frames, want a multiple (>= 2) of %d", n, len(orig))
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if st, _ := f.Stat(); st.Size() < 1<<20 {
		t.Errorf("file is %d bytes, want >= 1 MiB", st.Size())
	}
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var last int64
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := orig[got%len(orig)].data; string(data) != string(want) {
			t.Fatalf("frame %d differs from input frame %d", got+1, got%len(orig)+1)
		}
		if ts := ci.Timestamp.UnixNano(); ts < last {
			t.Fatalf("frame %d: timestamp goes back", got+1)
		} else {
			last = ts
		}
		got++
	}
	if got != n {
		t.Errorf("read %d frames, run reported %d", got, n)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(filepath.Join(dir, "x.pcap"), options{size: 1}, []string{filepath.Join(dir, "missing.pcap")}); err == nil {
		t.Error("missing input: no error")
	}
	if _, err := run(filepath.Join(dir, "x.pcap"), options{size: 1}, nil); err == nil {
		t.Error("no input: no error")
	}
}

// TestRunDistinct builds a capture of many short connections as the
// tracker benchmarks use it: with -distinct every round's connections are
// new ones (own client port, valid TCP checksum), the SMC-R capture given
// as FILE@3 comes every third round, time only goes forward across inputs
// captured at different times, and smcdump's tracker finds every
// connection with the outcome of its input.
func TestRunDistinct(t *testing.T) {
	ref := filepath.Join("..", "..", "testdata", "reference")
	inputs := []string{filepath.Join(ref, "pingpong.pcap") + "@3", filepath.Join(ref, "fallback-nosmc.pcap"), filepath.Join(ref, "decline-nordma.pcap")}
	out := filepath.Join(t.TempDir(), "conns.pcap")
	n, err := run(out, options{size: 2 << 20, distinct: true}, inputs)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := track.New(track.Options{})
	var last time.Time
	got, badSum := 0, 0
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got++
		if f.CI.Timestamp.Before(last) {
			t.Fatalf("frame %d: timestamp goes back", f.Number)
		}
		last = f.CI.Timestamp
		if f.TCP != nil && f.IPv4 != nil && !tcpChecksumOK(f.IPv4.SrcIP, f.IPv4.DstIP, f.IPv4.Payload) {
			badSum++
		}
		if f.BTH != nil && f.ICRC.Checked && !f.ICRC.OK {
			t.Errorf("frame %d: bad ICRC", f.Number)
		}
		tr.Feed(f)
	}
	if got != n {
		t.Errorf("read %d frames, run reported %d", got, n)
	}
	if badSum > 0 {
		t.Errorf("%d TCP segments with a bad checksum", badSum)
	}
	s := tr.Snapshot()
	ports := map[uint16]bool{}
	count := map[string]int{}
	for _, c := range s.Conns {
		if c.Server.Port() != 5000 {
			t.Errorf("conn %d: server %v, want port 5000 kept", c.ID, c.Server)
		}
		if ports[c.Client.Port()] {
			t.Errorf("conn %d: client port %d used twice", c.ID, c.Client.Port())
		}
		ports[c.Client.Port()] = true
		count[c.Outcome.String()]++
		if c.Outcome == track.OutcomeSMCR && c.Flow[track.DirC2S].Bytes != 32664 {
			t.Errorf("SMC-R conn %d: %d B C->S, want pingpong's 32664", c.ID, c.Flow[track.DirC2S].Bytes)
		}
	}
	// Rounds 0, 3, 6 ... carry pingpong; every round one fallback (no SMC
	// option on the SYN-ACK) and one decline.
	rounds := count["fallback"] / 2
	if count["fallback"] != 2*rounds || rounds < 6 || count["SMC-R"] != (rounds+2)/3 || len(s.Conns) != count["fallback"]+count["SMC-R"] {
		t.Errorf("outcomes %v over %d connections, want 2 fallbacks per round and SMC-R every third round", count, len(s.Conns))
	}
	if s.Stats.TCPUntracked != 0 || s.Stats.Unattached != 0 {
		t.Errorf("stats %+v: frames the tracker could not place", s.Stats)
	}
}

// tcpChecksumOK verifies a TCP segment's checksum over the IPv4 pseudo-header.
func tcpChecksumOK(src, dst net.IP, seg []byte) bool {
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(src.To4())
	add(dst.To4())
	sum += uint32(layers.IPProtocolTCP) + uint32(len(seg))
	add(seg)
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	return sum == 0xffff
}

func TestParseInput(t *testing.T) {
	for _, c := range []struct {
		arg, name string
		every     int
		ok        bool
	}{
		{"a.pcap", "a.pcap", 1, true},
		{"a.pcap@40", "a.pcap", 40, true},
		{"a.pcap@0", "", 0, false},
		{"a.pcap@x", "", 0, false},
	} {
		name, every, err := parseInput(c.arg)
		if name != c.name || every != c.every || (err == nil) != c.ok {
			t.Errorf("parseInput(%q) = %q, %d, %v", c.arg, name, every, err)
		}
	}
}
