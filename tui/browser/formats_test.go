package browser

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
)

// inFormats writes a sample as the formats a user brings: classic pcap,
// pcapng at micro- and nanoseconds (dumpcap's and smcdump -w's default),
// and both gzip-compressed.
func inFormats(t *testing.T, sample string) map[string]string {
	t.Helper()
	src := filepath.Join(testutil.SamplesDir(t), sample)
	pcap, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	frames, lt := testutil.ReadFrames(t, src)
	ng := testutil.Pcapng(lt, 9, frames)
	dir := t.TempDir()
	files := map[string][]byte{
		"pcap":      pcap,
		"pcapng":    ng,
		"pcapng-us": testutil.Pcapng(lt, 6, frames),
		"pcap.gz":   gz(pcap),
		"pcapng.gz": gz(ng),
	}
	out := map[string]string{}
	for name, b := range files {
		p := filepath.Join(dir, strings.TrimSuffix(sample, ".pcap")+"."+name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// sampleFrames are a capture's frames as capture.Open reads them.
func sampleFrames(t *testing.T, path string) []rawFrame {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []rawFrame
	for {
		f, err := r.Next()
		if err != nil {
			return out
		}
		out = append(out, rawFrame{ci: f.CI, data: bytes.Clone(f.Data)})
	}
}

// TestFormatsReadBack: pcapng and gzip files are indexed as classic pcap
// is, by offsets, with no frame kept in memory (a gzip file through its
// decompressed copy); every frame reads back as the file holds it, in
// order and at random; the list rows, a whole-file filter and the
// status line agree with the classic pcap's.
func TestFormatsReadBack(t *testing.T) {
	for _, sample := range []string{"multilink.pcap", "decline-nordma.pcap"} {
		paths := inFormats(t, sample)
		want := sampleFrames(t, paths["pcap"])
		flt, err := filter.Compile("smc.llc or smc.clc.type == 4 or frame contains \"SMCR\"")
		if err != nil {
			t.Fatal(err)
		}
		var wantRows map[int32]row
		var wantMatch []int32
		for _, name := range []string{"pcap", "pcapng", "pcapng-us", "pcap.gz", "pcapng.gz"} {
			t.Run(sample+"/"+name, func(t *testing.T) {
				idx, ctx := openIndexed(t, paths[name])
				dir, spooled, why, inMemory, _ := idx.Kept()
				if inMemory != 0 || why != "" {
					t.Errorf("%d frames kept in memory (%s)", inMemory, why)
				}
				if gzipped := strings.HasSuffix(name, ".gz"); gzipped != (dir != "") || (gzipped && spooled == 0) {
					t.Errorf("spool %q of %d bytes", dir, spooled)
				}
				rr, err := idx.newRecordReader()
				if err != nil {
					t.Fatal(err)
				}
				defer rr.Close()
				eachOrder(len(want), func(how string, n int32) {
					ci, data, err := rr.read(n)
					w := want[n-1]
					if err != nil || !bytes.Equal(data, w.data) || ci.Length != w.ci.Length {
						t.Fatalf("%s: frame %d: %v, %d bytes of %d, want %d of %d", how, n, err, len(data), ci.Length, len(w.data), w.ci.Length)
					}
					// pcapng-us holds microseconds: the nanoseconds are cut.
					if d := ci.Timestamp.Sub(w.ci.Timestamp); d < 0 || d > 1000 || (name != "pcapng-us" && d != 0) {
						t.Fatalf("%s: frame %d at %v, want %v", how, n, ci.Timestamp, w.ci.Timestamp)
					}
				})

				b := New(ctx, idx, Options{})
				rows := b.lines(idx.All())
				match, err := idx.Filter(ctx, flt)
				if err != nil {
					t.Fatal(err)
				}
				if name == "pcap" {
					wantRows, wantMatch = rows, match
					if len(match) == 0 {
						t.Fatal("the filter matches nothing: it proves nothing")
					}
					return
				}
				for n, w := range wantRows {
					g := rows[n]
					if g.info != w.info || g.proto != w.proto || g.length != w.length || g.src != w.src {
						t.Errorf("frame %d: %s %q, want %s %q", n, g.proto, g.info, w.proto, w.info)
					}
				}
				if !slices.Equal(match, wantMatch) {
					t.Errorf("filter: %v, want %v", match, wantMatch)
				}
			})
		}
	}
}

// TestSpoolStops: when the disk runs short while a gzip file is unpacked,
// the copy stops, the frames that follow are kept in memory, every frame
// still reads back and filters as before, and the status line says where
// the copy is, that it stopped, why and from which frame.
func TestSpoolStops(t *testing.T) {
	paths := inFormats(t, "multilink.pcap")
	want := sampleFrames(t, paths["pcap"])
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	idx, err := openFile(ctx, paths["pcapng.gz"], 0, func() (*spool, error) {
		s, err := newSpool(dir)
		if err != nil {
			return nil, err
		}
		// The disk fills after the first write: the bufio reader's first
		// fill holds only the first frames of the file.
		free := int64(1 << 40)
		s.free = func() (int64, error) { f := free; free = 0; return f, nil }
		s.reserve = 0
		s.every = 1 // every write is a check here
		return s, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, idx)
	_, spooled, why, inMemory, from := idx.Kept()
	if why == "" || inMemory == 0 || from <= 1 || inMemory != len(want)-int(from)+1 || spooled == 0 {
		t.Fatalf("spooled %d bytes, stopped %q, %d frames in memory from %d (of %d)", spooled, why, inMemory, from, len(want))
	}
	rr, err := idx.newRecordReader()
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Close()
	for n := int32(len(want)); n >= 1; n-- {
		_, data, err := rr.read(n)
		if err != nil || !bytes.Equal(data, want[n-1].data) {
			t.Fatalf("frame %d: %v", n, err)
		}
	}
	flt, _ := filter.Compile("smc.llc")
	match, err := idx.Filter(ctx, flt)
	if err != nil || len(match) == 0 {
		t.Fatalf("filter: %v %v", match, err)
	}
	h := run(t, New(ctx, idx, Options{}), 200, 30)
	h.Until("stopped: " + dir + " has 0 MiB free; frames from ")
}

// TestGzipNoSpace: a gzip file opens where no copy can be made (the
// temporary directory is missing): its frames are then kept in memory,
// and the status line says why.
func TestGzipNoSpace(t *testing.T) {
	paths := inFormats(t, "decline-nordma.pcap")
	want := sampleFrames(t, paths["pcap"])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := filepath.Join(t.TempDir(), "gone")
	idx, err := openFile(ctx, paths["pcap.gz"], 0, func() (*spool, error) { return newSpool(gone) })
	if err != nil {
		t.Fatal(err)
	}
	waitIndexed(t, idx)
	if _, _, why, inMemory, from := idx.Kept(); inMemory != len(want) || from != 1 || !strings.Contains(why, gone) {
		t.Fatalf("%d frames in memory from %d: %q", inMemory, from, why)
	}
	flt, _ := filter.Compile("smc")
	if match, err := idx.Filter(ctx, flt); err != nil || len(match) == 0 {
		t.Fatalf("filter: %v %v", match, err)
	}
	h := run(t, New(ctx, idx, Options{}), 200, 30)
	h.Until("(in memory: cannot unpack: ")
}
