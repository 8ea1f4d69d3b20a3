package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestTouchAhead: nothing is touched before the first batch, then the
// window past each batch, a chunk a call, up to the file's end.
func TestTouchAhead(t *testing.T) {
	path := filepath.Join(testutil.SamplesDir(t), "long.pcap") // 3.5 MiB: the window reaches its end
	r, err := OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.TouchAhead() {
		t.Fatal("TouchAhead touched something before the first batch")
	}
	var b Batch
	r.ReadBatch(&b, 100, nil)
	if b.Err != nil {
		t.Fatal(b.Err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	left := fi.Size() - int64(r.pf.pos)
	want := int((left + aheadChunk - 1) / aheadChunk)
	n := 0
	for r.TouchAhead() {
		n++
		if n > want {
			break
		}
	}
	if n != want {
		t.Errorf("%d touches past the first batch, want %d (%d bytes left, %d a touch)", n, want, left, aheadChunk)
	}
	if r.TouchAhead() {
		t.Error("a touch after the file's end was touched")
	}
}

// TestTouchAheadNotMapped: a reader of a stream (not a mapping) has
// nothing to touch.
func TestTouchAheadNotMapped(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	path := filepath.Join(t.TempDir(), "pingpong.pcap.gz")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b Batch
	r.ReadBatch(&b, 100, nil)
	if r.TouchAhead() {
		t.Error("TouchAhead touched a stream")
	}
}

// TestTouchAheadFileCut: touching past the end of a file cut under its
// mapping turns TouchAhead off instead of ending the process, and its
// reader reports the cut.
func TestTouchAheadFileCut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "long.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := OpenMapped(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var b Batch
	r.ReadBatch(&b, 100, nil)
	if b.Err != nil {
		t.Fatal(b.Err)
	}
	if err := os.Truncate(path, int64(r.pf.pos)+1); err != nil {
		t.Fatal(err)
	}
	for n := 0; r.TouchAhead(); n++ {
		if n > aheadWindow/aheadChunk {
			t.Fatal("TouchAhead went on touching a cut file")
		}
	}
	if !r.ahead.Load().off.Load() {
		t.Fatal("no touch met the cut")
	}
	if r.TouchAhead() {
		t.Error("TouchAhead touched again after a fault")
	}
	for b.Err == nil {
		r.ReadBatch(&b, 1000, nil)
	}
	if !errors.Is(b.Err, ErrChanged) {
		t.Errorf("reading on: %v, want the file's ErrChanged", b.Err)
	}
}

// TestKeepAhead: a goroutine between batches touches at most 256 KiB a
// call, and nothing once 1 MiB past the last batch is touched.
func TestKeepAhead(t *testing.T) {
	r, err := OpenMapped(filepath.Join(testutil.SamplesDir(t), "long.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.KeepAhead() // before the first batch: nothing to keep ahead of
	var b Batch
	r.ReadBatch(&b, 100, nil)
	if b.Err != nil {
		t.Fatal(b.Err)
	}
	a := r.ahead.Load()
	if n := a.touched.Load(); n != 0 {
		t.Fatalf("touched to %d before any call", n)
	}
	from := a.readTo.Load()
	r.KeepAhead()
	if got, want := a.touched.Load(), from+aheadKeep*aheadChunk; got != want {
		t.Errorf("one call touched to %d, want %d", got, want)
	}
	for range 8 {
		r.KeepAhead()
	}
	if got := a.touched.Load() - from; got < aheadLow || got >= aheadLow+aheadKeep*aheadChunk {
		t.Errorf("touched %d past the batch, want from %d to less than %d", got, aheadLow, aheadLow+aheadKeep*aheadChunk)
	}
}
