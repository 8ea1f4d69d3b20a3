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

// TestFilterBatchesFileCut: a file cut after it was opened, inside a
// frame that goes on past a page boundary, ends the whole-file filter's
// batches with the file's error (a truncated record), after the frames
// before the cut: what the one-goroutine pass says of it.
func TestFilterBatchesFileCut(t *testing.T) {
	src := filepath.Join(testutil.SamplesDir(t), "long.pcap")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	// The first page boundary past which an RDMA WRITE Middle or Last
	// over RoCEv2 goes on, its record header and first 64 bytes before it:
	// a frame of the direct path's kind whose headers are whole and whose
	// end is cut off.
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
	r, err := capture.Open(path)
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
	if !errors.Is(err, capture.ErrTruncatedFile) {
		t.Errorf("error %v, want the file's ErrTruncatedFile", err)
	}
	// As the one-goroutine pass: the frames matched before the error.
	if len(got) != before {
		t.Errorf("%d frames matched, want the %d before the cut", len(got), before)
	}
}
