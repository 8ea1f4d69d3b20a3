package capture

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestSmallChunksStayChunked: a pcap or pcapng file read in chunks shorter
// than its frames (the tests' and fuzzers' 64 and 97 bytes) is read in
// batches of chunks to its end, each record or block in a chunk of its
// own length, also where a chunk's end cuts its header: the stream reader
// is left to what it must read past, not to a frame longer than a chunk.
func TestSmallChunksStayChunked(t *testing.T) {
	ng := filepath.Join(t.TempDir(), "x.pcapng")
	if err := os.WriteFile(ng, ngWrite(t, readRaw(t, pingpong), layers.LinkTypeEthernet, 9), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{pingpong, ng} {
		for _, size := range []int{64, 97, 400} {
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r.SetChunkSize(size)
			var b Batch
			chunked, all := 0, 0
			for b.Err == nil {
				r.ReadBatch(&b, 3, nil)
				if b.chunk != nil {
					chunked += b.Len()
				}
				all += b.Len()
			}
			r.Close()
			if chunked != all || all == 0 {
				t.Errorf("%s, %d-byte chunks: %d of %d frames in batches of chunks", filepath.Base(path), size, chunked, all)
			}
		}
	}
}
