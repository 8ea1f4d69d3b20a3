package capture

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// readBack is one frame as the Reader gave it, with where to read it again.
type readBack struct {
	off    int64
	end    int64
	layout *Layout
	ci     gopacket.CaptureInfo
	lt     layers.LinkType
	data   []byte
}

func readBackAll(t *testing.T, name string, b []byte) []readBack {
	t.Helper()
	r, err := NewFileReader(name, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []readBack
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.RecordOffset() < 0 || r.Layout() == nil {
			t.Fatalf("%s: frame %d: offset %d, layout %v", name, f.Number, r.RecordOffset(), r.Layout())
		}
		out = append(out, readBack{r.RecordOffset(), r.RecordEnd(), r.Layout(), f.CI, f.LinkType, bytes.Clone(f.Data)})
	}
}

// TestRecordsReadBack: every frame of every bundled capture, as classic
// pcap and rewritten as pcapng (decimal and binary resolutions, and two
// sections of different resolutions and link types, as cat of two files
// makes), reads back from its offset and layout as the Reader first gave
// it: bytes, lengths, time, interface and link type; in file order
// (through one buffer) and in random order (seeking).
func TestRecordsReadBack(t *testing.T) {
	type file struct {
		name string
		b    []byte
	}
	var files []file
	paths := append(testutil.Samples(t), testutil.References(t)...)
	for i, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{path, b})
		frames, lt := testutil.ReadFrames(t, path)
		files = append(files, file{path + " as pcapng", ngWrite(t, frames, lt, []int{6, 9, -20}[i%3])})
	}
	a, b := readRaw(t, declineRDM), readRaw(t, pingpong)
	sll := make([]rawFrame, len(a))
	for i, f := range a { // the same frames under a cooked header, for a second link type
		sll[i] = f
		sll[i].Data = append(append(make([]byte, 0, len(f.Data)+2), 0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 0, 0, 0, 8, 0), f.Data[14:]...)
	}
	cat := append(ngWrite(t, a, layers.LinkTypeEthernet, 6), ngWrite(t, b, layers.LinkTypeEthernet, 9)...)
	cat = append(cat, ngWrite(t, sll, layers.LinkTypeLinuxSLL, 3)...)
	files = append(files, file{"three sections", cat})

	rng := rand.New(rand.NewPCG(7, 7))
	for _, fl := range files {
		want := readBackAll(t, fl.name, fl.b)
		if len(want) == 0 {
			continue
		}
		for i, w := range want {
			// A record ends where the next starts, or before (pcapng blocks
			// that carry no packet), and the last within the file.
			next := int64(len(fl.b))
			if i+1 < len(want) {
				next = want[i+1].off
			}
			if w.end <= w.off || w.end > next {
				t.Fatalf("%s: frame %d: record [%d, %d), next at %d", fl.name, i+1, w.off, w.end, next)
			}
		}
		rs := NewRecords(fl.name, bytes.NewReader(fl.b))
		order := make([]int, len(want))
		for i := range order {
			order[i] = i
		}
		check := func(how string) {
			for _, i := range order {
				w := want[i]
				var ci gopacket.CaptureInfo
				data, err := rs.Read(w.off, w.layout, &ci)
				if err != nil {
					t.Fatalf("%s, %s, frame %d: %v", fl.name, how, i+1, err)
				}
				if !bytes.Equal(data, w.data) || !ci.Timestamp.Equal(w.ci.Timestamp) || ci.CaptureLength != w.ci.CaptureLength ||
					ci.Length != w.ci.Length || ci.InterfaceIndex != w.ci.InterfaceIndex {
					t.Fatalf("%s, %s, frame %d: read back %v %d/%d if %d, want %v %d/%d if %d", fl.name, how, i+1,
						ci.Timestamp, ci.CaptureLength, ci.Length, ci.InterfaceIndex, w.ci.Timestamp, w.ci.CaptureLength, w.ci.Length, w.ci.InterfaceIndex)
				}
				if len(ci.AncillaryData) > 0 && ci.AncillaryData[0] != w.lt {
					t.Fatalf("%s, %s, frame %d: link type %v, want %v", fl.name, how, i+1, ci.AncillaryData[0], w.lt)
				}
			}
		}
		check("in order")
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		check("shuffled")
		// Skip finds a record from any before it in its run of records
		// that follow each other, and End says where the one read ends.
		for _, i := range order {
			from := i
			for k := rng.IntN(70); k > 0 && from > 0 && want[from-1].end == want[from].off && want[from-1].layout == want[i].layout; k-- {
				from--
			}
			off, err := rs.Skip(want[from].off, want[i].layout, i-from)
			if err != nil || off != want[i].off {
				t.Fatalf("%s: frame %d, %d records after frame %d's: offset %d (%v), want %d", fl.name, i+1, i-from, from+1, off, err, want[i].off)
			}
			var ci gopacket.CaptureInfo
			if _, err := rs.Read(off, want[i].layout, &ci); err != nil || rs.End() != want[i].end {
				t.Fatalf("%s: frame %d: ends at %d (%v), want %d", fl.name, i+1, rs.End(), err, want[i].end)
			}
		}
	}
	if n := len(readBackAll(t, "cat", cat)); n != len(a)+len(b)+len(sll) {
		t.Fatalf("three sections: %d frames", n)
	}
}

// TestRecordsLayoutShared: a file's frames share one layout until a
// section or interface changes it, so an index need not keep one per
// frame.
func TestRecordsLayoutShared(t *testing.T) {
	a := readRaw(t, declineRDM)
	cat := append(ngWrite(t, a, layers.LinkTypeEthernet, 6), ngWrite(t, a, layers.LinkTypeEthernet, 9)...)
	seen := map[*Layout]int{}
	for _, rb := range readBackAll(t, "cat", cat) {
		seen[rb.layout]++
	}
	if len(seen) != 2 {
		t.Errorf("%d layouts for two sections, want 2", len(seen))
	}
}

// TestRecordsBadOffset: an offset that is not a packet's record says so,
// naming the file and the offset, and leaves the layout as it was.
func TestRecordsBadOffset(t *testing.T) {
	a := readRaw(t, declineRDM)
	b := ngWrite(t, a, layers.LinkTypeEthernet, 6)
	want := readBackAll(t, "x.pcapng", b)
	rs := NewRecords("x.pcapng", bytes.NewReader(b))
	var ci gopacket.CaptureInfo
	for _, off := range []int64{0, int64(len(b)), int64(len(b)) + 100} {
		_, err := rs.Read(off, want[0].layout, &ci)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("x.pcapng: ")) {
			t.Errorf("offset %d: %v", off, err)
		}
	}
	if _, err := rs.Read(want[0].off, nil, &ci); err == nil {
		t.Error("no layout: no error")
	}
	// Skipping over what is not a packet's record says so too.
	for _, off := range []int64{0, int64(len(b)) - 4, int64(len(b)) + 100} {
		if _, err := rs.Skip(off, want[0].layout, 1); err == nil || !bytes.Contains([]byte(err.Error()), []byte("x.pcapng: ")) {
			t.Errorf("skip from offset %d: %v", off, err)
		}
	}
	if data, err := rs.Read(want[1].off, want[1].layout, &ci); err != nil || !bytes.Equal(data, want[1].data) {
		t.Errorf("after the bad offsets: %v", err)
	}

}
