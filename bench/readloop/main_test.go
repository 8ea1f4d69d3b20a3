package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// writePcap writes frames of the given lengths and returns the file's path.
func writePcap(t *testing.T, lens ...int) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "in.pcap")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i, n := range lens {
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(int64(i), 0), CaptureLength: n, Length: n}
		if err := w.WritePacket(ci, make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// TestReadAll counts every frame and byte, including frames larger than
// the read buffer.
func TestReadAll(t *testing.T) {
	name := writePcap(t, 60, 1500, 0, 70000, 42)
	frames, bytes, err := readAll(name)
	if err != nil {
		t.Fatal(err)
	}
	if frames != 5 || bytes != 60+1500+70000+42 {
		t.Fatalf("got %d frames, %d bytes; want 5 frames, %d bytes", frames, bytes, 60+1500+70000+42)
	}
}

// TestReadAllTruncated reports a file cut inside a frame as an error that
// names the frame, after counting the frames before it.
func TestReadAllTruncated(t *testing.T) {
	name := writePcap(t, 100, 100, 100)
	st, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(name, st.Size()-10); err != nil {
		t.Fatal(err)
	}
	frames, _, err := readAll(name)
	if err == nil || frames != 2 {
		t.Fatalf("got %d frames, error %v; want 2 frames and an error", frames, err)
	}
}

// TestReadAllReference agrees with the frame count of a real capture read
// by pcapgo's copying reader.
func TestReadAllReference(t *testing.T) {
	name := filepath.Join("..", "..", "testdata", "reference", "pingpong.pcap")
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var want int64
	for {
		if _, _, err := r.ReadPacketData(); err != nil {
			break
		}
		want++
	}
	frames, _, err := readAll(name)
	if err != nil || frames != want || want == 0 {
		t.Fatalf("got %d frames, error %v; want %d", frames, err, want)
	}
}
