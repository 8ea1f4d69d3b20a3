package capture

import (
	"bytes"
	"encoding/binary"
	"github.com/smcscope/smcscope/internal/testutil"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

const (
	refDir     = "../testdata/reference/"
	pingpong   = refDir + "pingpong.pcap"
	declineRDM = refDir + "decline-nordma.pcap"
	fallback   = refDir + "fallback-nosmc.pcap"
	noUEID     = refDir + "no-ueid.pcap"
	publicRoCE = "../testdata/public/linlinw5_rdma_ib_tutorial/rdma_write_bw.pcap"
	negTFO     = "../testdata/public/tcpdump_tests_negative_controls/tfo-5c1fa7f9ae91.pcap"
)

// rawFrame is one captured frame (the shared test helper's type).
type rawFrame = testutil.Packet

// readRaw returns every frame of a real capture.
func readRaw(t testing.TB, name string) []rawFrame {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, name)
	return fs
}

// sliceSource replays frames as a PacketSource.
type sliceSource struct {
	frames []rawFrame
	i      int
	loop   bool // start over at the end (benchmarks), instead of io.EOF
}

func (s *sliceSource) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if s.loop && s.i == len(s.frames) {
		s.i = 0
	}
	if s.i >= len(s.frames) {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	f := s.frames[s.i]
	s.i++
	return f.Data, f.CI, nil
}

// writePcap writes frames as a classic pcap file in dir and returns its path.
func writePcap(t testing.TB, dir, name string, lt layers.LinkType, frames []rawFrame) string {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WritePacket(f.CI, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordOffsets walks a classic pcap file by hand (independently of the
// code under test) and returns the file offset of every record.
func recordOffsets(t testing.TB, b []byte) []int64 {
	t.Helper()
	var offs []int64
	for off := 24; off+16 <= len(b); {
		offs = append(offs, int64(off))
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	return offs
}

// collect reads a whole capture, returning per-frame summaries.
type frameInfo struct {
	n        int
	tcp, udp bool
	roce     bool
	smcOpt   bool
	clc      [][]byte
	cut      bool
	vlans    int
	err      error
}

func collect(t testing.TB, r *Reader) ([]frameInfo, error) {
	t.Helper()
	var out []frameInfo
	for {
		f, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return out, err
		}
		fi := frameInfo{n: f.Number, tcp: f.TCP != nil, udp: f.UDP != nil, smcOpt: f.SMCOption,
			cut: f.Cut, vlans: len(f.VLAN), err: f.Err,
			roce: f.UDP != nil && f.UDP.DstPort == 4791 || f.BTH != nil}
		for _, m := range f.clcRaw {
			fi.clc = append(fi.clc, append([]byte(nil), m...))
		}
		out = append(out, fi)
	}
}
