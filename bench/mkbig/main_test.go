package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
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
	n, err := run(out, 1<<20, []string{in})
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
	if _, err := run(filepath.Join(dir, "x.pcap"), 1, []string{filepath.Join(dir, "missing.pcap")}); err == nil {
		t.Error("missing input: no error")
	}
	if _, err := run(filepath.Join(dir, "x.pcap"), 1, nil); err == nil {
		t.Error("no input: no error")
	}
}
