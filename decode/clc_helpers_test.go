package decode

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// clcReadVector loads one message from ../testdata/vectors (see SOURCES.md there).
func clcReadVector(t testing.TB, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", name))
	if err != nil {
		t.Fatalf("read vector: %v", err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(raw)), ""))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// clcTCPFrame is one TCP segment of a capture with its 1-based frame number.
type clcTCPFrame struct {
	n   int
	tcp *layers.TCP
}

// clcReadTCP returns every TCP segment of an Ethernet pcap under ../testdata.
func clcReadTCP(t testing.TB, rel string) []clcTCPFrame {
	t.Helper()
	var out []clcTCPFrame
	for i, data := range roceReadPcap(t, filepath.Join("..", "testdata", rel)) {
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
		if tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP); ok {
			out = append(out, clcTCPFrame{i + 1, tcp})
		}
	}
	return out
}

// clcFrames returns the TCP payloads of the SMC port-5000 segments that
// start with a CLC eyecatcher, keyed by frame number.
func clcFrames(t testing.TB, rel string) map[int][]byte {
	t.Helper()
	out := map[int][]byte{}
	for _, f := range clcReadTCP(t, rel) {
		if f.tcp.SrcPort != 5000 && f.tcp.DstPort != 5000 {
			continue
		}
		if _, ok := CLCMessageLength(f.tcp.Payload); ok {
			out[f.n] = f.tcp.Payload
		}
	}
	return out
}
