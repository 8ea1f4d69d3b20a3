package crafted

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// HTTPRequest and HTTPResponse are what HTTP writes: an exchange of the
// 64-byte message size of samples/pingpong.pcap.
const (
	HTTPRequest  = "GET /smc HTTP/1.1\r\nHost: smc\r\nX-Pad: 0123456789abcdefghijklm\r\n\r\n"
	HTTPResponse = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: 0123456789abcdefg\r\n\r\n"
)

// HTTP writes samples/pingpong.pcap with its first message each way
// (client 10.10.0.2, server 10.10.0.1; each an RDMA WRITE Only) replaced
// by an HTTP request and response of the same length, ICRCs made right,
// to a temporary file, and returns its path: an HTTP exchange over SMC-R
// as the kernel would carry it.
func HTTP(t testing.TB) string {
	t.Helper()
	if len(HTTPRequest) != 64 || len(HTTPResponse) != 64 {
		t.Fatalf("request %d B, response %d B: want 64 (the message size)", len(HTTPRequest), len(HTTPResponse))
	}
	path := filepath.Join(testutil.SamplesDir(t), "pingpong.pcap")
	frames, lt := testutil.ReadFrames(t, path)
	put := map[string]string{"10.10.0.2": HTTPRequest, "10.10.0.1": HTTPResponse}
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for len(put) > 0 {
		f, err := r.Next()
		if err != nil {
			t.Fatalf("%s: %v: no WRITE Only of each side", path, err)
		}
		if f.BTH == nil || f.BTH.Opcode != decode.OpWriteOnly || f.IPv4 == nil {
			continue
		}
		text, ok := put[f.IPv4.SrcIP.String()]
		if !ok {
			continue
		}
		delete(put, f.IPv4.SrcIP.String())
		data := frames[f.Number-1].Data
		copy(data[bytes.Index(data, f.BTH.Data()):], text)
		FixICRC(t, data)
	}
	return testutil.WriteFrames(t, "http.pcap", lt, frames)
}
