package browser

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
)

// TestFilterBatchesFileCut: a file cut while the whole-file filter reads
// it through its mapping, inside a frame whose headers its reader has read
// and whose end a decoding goroutine then reads, is the file's error
// (capture.ErrChanged), not a crash of the process on the mapping's fault.
func TestFilterBatchesFileCut(t *testing.T) {
	src := filepath.Join(testutil.SamplesDir(t), "long.pcap")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The first page boundary past which an RDMA WRITE Middle or Last
	// over RoCEv2 goes on, its record header and first 64 bytes before it:
	// the reader reads only those of a frame the direct path takes, the
	// decoding goroutine the rest.
	const page = 4096
	cut, before := 0, 0 // before: the frames wholly before the cut
	for off := 24; off+16+64 <= len(data); before++ {
		n := int(uint32(data[off+8]) | uint32(data[off+9])<<8 | uint32(data[off+10])<<16 | uint32(data[off+11])<<24)
		fr := data[off+16:]
		write := fr[12] == 0x08 && fr[13] == 0 && fr[23] == 17 && fr[36] == 0x12 && fr[37] == 0xb7 && (fr[42] == 0x07 || fr[42] == 0x08)
		if b := (off + 16 + 64 + page - 1) / page * page; write && off > 64*page && b < off+16+n {
			cut = b
			break
		}
		off += 16 + n
	}
	if cut == 0 {
		t.Fatal("no frame of long.pcap goes on past a page boundary")
	}
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := capture.OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(path, int64(cut)); err != nil {
		t.Fatal(err)
	}
	flt, err := filter.Compile("frame.len > 0")
	if err != nil {
		t.Fatal(err)
	}
	got, err := filterBatches(context.Background(), r, flt, 0, 2)
	t.Logf("cut at %d: %d frames, %v", cut, len(got), err)
	if !errors.Is(err, capture.ErrChanged) {
		t.Errorf("error %v, want the file's ErrChanged", err)
	}
	// As the one-goroutine pass: the frames matched before the error.
	if len(got) != before {
		t.Errorf("%d frames matched, want the %d before the cut", len(got), before)
	}
}
