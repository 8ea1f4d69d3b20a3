package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestReadPastDamage: a classic pcap record header whose lengths no
// record has is read past, from every source (a stream, a file, a
// file's batches): the next record is found and read as the frame the damaged one
// would have been, whose RecordErr (a *SkipError) names the damage, and
// Damage is the file's error once the end is reached; the frames are the
// file's but the damaged record's. A header with a damaged time or
// original length that records follow is read as it is, and a file cut
// inside its last record is truncated, as before.
func TestReadPastDamage(t *testing.T) {
	clean, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, clean)
	caplen := func(b []byte, k int) uint32 { return binary.LittleEndian.Uint32(b[offs[k]+8:]) }
	setCaplen := func(b []byte, k int, v uint32) { binary.LittleEndian.PutUint32(b[offs[k]+8:], v) }
	rec := func(k int) int64 { return offs[k+1] - offs[k] }
	for _, tc := range []struct {
		name   string
		damage func(b []byte)
		lost   []int // records (0-based) not read
		skips  int   // frames read after damage
		err    string
	}{
		{"beyond snap", func(b []byte) { setCaplen(b, 2000, 1<<31-1) }, []int{2000}, 1,
			fmt.Sprintf("frame 2001 (file offset %#x): corrupt record: capture length exceeds snap length: 2147483647 > 65535; read on from the next record, %d bytes later (frame 2001)", offs[2000], rec(2000))},
		{"lengths off", func(b []byte) { setCaplen(b, 2000, caplen(b, 2000)+3) }, []int{2000}, 1,
			fmt.Sprintf("frame 2001 (file offset %#x): corrupt record: captured length %d above the original length %d, and no record follows where it ends; read on from the next record, %d bytes later (frame 2001)",
				offs[2000], caplen(clean, 2000)+3, caplen(clean, 2000), rec(2000))},
		// Read as a frame cut short (a captured length below the
		// original one): what follows it up to the next record is skipped.
		{"shorter", func(b []byte) { setCaplen(b, 100, caplen(b, 100)-20) }, nil, 1,
			fmt.Sprintf("frame 102 (file offset %#x): corrupt record: ", offs[101]-20)},
		{"first", func(b []byte) { setCaplen(b, 0, 1<<30) }, []int{0}, 1, "frame 1 (file offset 0x18): "},
		// 10 and 11 are one place: the next record that can be found
		// after 10 is 12.
		{"several", func(b []byte) {
			for _, k := range []int{10, 11, 500, 3000} {
				setCaplen(b, k, 0xFFFFFF00)
			}
		}, []int{10, 11, 500, 3000}, 3, "; 2 damaged places more read past"},
		{"last", func(b []byte) { setCaplen(b, len(offs)-1, 1<<30) }, nil, 0,
			fmt.Sprintf("frame %d (file offset %#x): corrupt record: capture length exceeds snap length", len(offs), offs[len(offs)-1])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := append([]byte(nil), clean...)
			tc.damage(b)
			lost := map[int]bool{}
			for _, k := range tc.lost {
				lost[k] = true
			}
			var want []string
			for k := range offs {
				if tc.name == "last" && k == len(offs)-1 {
					break
				}
				if !lost[k] {
					end := int64(len(b))
					if k+1 < len(offs) {
						end = offs[k+1]
					}
					if tc.name == "shorter" && k == 100 {
						end -= 20
					}
					want = append(want, fmt.Sprintf("%x", clean[offs[k]+16:end]))
				}
			}
			path := t.TempDir() + "/d.pcap"
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, how := range []string{"stream", "file", "batch"} {
				var r *Reader
				var err error
				switch how {
				case "stream":
					r, err = NewFileReader(path, bytes.NewReader(b))
				default:
					r, err = Open(path)
				}
				if err != nil {
					t.Fatal(err)
				}
				got, skips, end := readDamaged(t, r, how == "batch")
				if len(got) != len(want) {
					t.Fatalf("%s: %d frames, want %d", how, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s: frame %d differs", how, i+1)
					}
				}
				if tc.name == "last" {
					if skips != 0 || !errors.Is(end, ErrCorruptRecord) || !strings.Contains(end.Error(), tc.err) {
						t.Errorf("%s: %d skips, end %v, want none and %q", how, skips, end, tc.err)
					}
					continue
				}
				if skips != tc.skips {
					t.Errorf("%s: %d frames read after damage, want %d", how, skips, tc.skips)
				}
				if !errors.Is(end, ErrCorruptRecord) || !strings.Contains(end.Error(), tc.err) {
					t.Errorf("%s: end %v, want one with %q", how, end, tc.err)
				}
			}
		})
	}
}

// readDamaged reads r to its end, by Next or by batches, and returns each
// frame's bytes in hex, how many frames were read after damage and the
// end: Damage where Next ended with io.EOF.
func readDamaged(t *testing.T, r *Reader, batches bool) (frames []string, skips int, end error) {
	t.Helper()
	defer r.Close()
	note := func(f *Frame) {
		frames = append(frames, fmt.Sprintf("%x", f.Data))
		var se *SkipError
		if errors.As(f.RecordErr, &se) {
			skips++
			if se.Frame != f.Number || !strings.Contains(f.RecordErr.Error(), fmt.Sprintf("frame %d (file offset %#x)", f.Number, r.RecordOffset())) && !batches {
				t.Errorf("frame %d at %#x: %v", f.Number, r.RecordOffset(), f.RecordErr)
			}
		}
	}
	if batches {
		d := r.NewBatchDecoder()
		var b Batch
		for {
			r.ReadBatch(&b, 100, nil)
			d.Reset(&b)
			for f := d.Next(); f != nil; f = d.Next() {
				note(f)
			}
			if b.Err != nil {
				end = b.Err
				break
			}
		}
	} else {
		for {
			f, err := r.Next()
			if err != nil {
				end = err
				break
			}
			note(f)
		}
	}
	if end == io.EOF {
		end = r.Damage()
	}
	return frames, skips, end
}

// TestJoinedFiles: pcap files joined end to end (cat a.pcap b.pcap, or
// an empty capture's header before them) are read as one capture, from
// every source: a second file header where a record was to be is passed
// over, not damage, and record offsets stay exact. The header of a file
// of another link type is damage, read past as any; a file that ends
// inside a second file header is truncated.
func TestJoinedFiles(t *testing.T) {
	one, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, one)
	hdr := one[:pcapHeaderLen]
	var want []string
	for k := range offs {
		end := int64(len(one))
		if k+1 < len(offs) {
			end = offs[k+1]
		}
		want = append(want, fmt.Sprintf("%x", one[offs[k]+16:end]))
	}
	other := append([]byte(nil), hdr...)
	other[20] = 113 // Linux SLL
	for _, tc := range []struct {
		name   string
		b      []byte
		frames []string
		damage bool
	}{
		{"two", slices.Concat(one, one), slices.Concat(want, want), false},
		{"empty between", slices.Concat(one, hdr, hdr, one), slices.Concat(want, want), false},
		{"empty at the end", slices.Concat(one, hdr), want, false},
		{"another link type", slices.Concat(one, other, one), slices.Concat(want, want), true},
		{"cut inside the second header", slices.Concat(one, hdr[:20]), want, false},
	} {
		path := t.TempDir() + "/j.pcap"
		if err := os.WriteFile(path, tc.b, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"stream", "file", "batch"} {
			var r *Reader
			if how == "stream" {
				r, err = NewFileReader(path, bytes.NewReader(tc.b))
			} else {
				r, err = Open(path)
			}
			if err != nil {
				t.Fatal(err)
			}
			got, skips, end := readDamaged(t, r, how == "batch")
			if !slices.Equal(got, tc.frames) {
				t.Errorf("%s %s: %d frames, want %d, or they differ", tc.name, how, len(got), len(tc.frames))
			}
			if cut := strings.HasPrefix(tc.name, "cut"); cut != errors.Is(end, ErrTruncatedFile) {
				t.Errorf("%s %s: end %v; want a truncated file where the file ends inside a file header", tc.name, how, end)
				continue
			} else if cut {
				continue
			}
			if tc.damage != (skips > 0 && errors.Is(end, ErrCorruptRecord)) || !tc.damage && end != nil {
				t.Errorf("%s %s: %d frames read after damage, end %v", tc.name, how, skips, end)
			}
		}
		// The record offset of the second file's first frame is its own.
		if tc.name == "empty between" {
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			for range len(offs) + 1 {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := r.RecordOffset(), int64(len(one)+3*pcapHeaderLen); got != want {
				t.Errorf("frame %d at offset %#x, want %#x", len(offs)+1, got, want)
			}
			r.Close()
		}
	}
}

// TestPcapHeaderDamaged: a classic pcap file header whose version is not
// 2.4 (a flipped bit: no writer makes another), whose magic is one bit
// off pcap's or whose link type has no decoder though the first frame is
// Ethernet, is read as the sound header where a record follows it, from
// every source, no frame missing, the damage told with the first frame
// and by Damage; with no record after it, the file is refused as before.
func TestPcapHeaderDamaged(t *testing.T) {
	clean, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, clean)
	type damage struct {
		name string
		at   int // the damaged field's offset
		do   func(b []byte)
		why  string
	}
	var cases []damage
	for _, v := range [][2]uint16{{3, 4}, {2, 6}, {0, 0}, {2, 3}} {
		cases = append(cases, damage{fmt.Sprint("version ", v), 4, func(b []byte) {
			binary.LittleEndian.PutUint16(b[4:], v[0])
			binary.LittleEndian.PutUint16(b[6:], v[1])
		}, fmt.Sprintf("version %d.%d, not 2.4", v[0], v[1])})
	}
	cases = append(cases,
		damage{"magic", 0, func(b []byte) { b[1] ^= 0x10 }, "magic d4d3b2a1, one bit off pcap's d4c3b2a1"},
		damage{"link type", 20, func(b []byte) { b[20] ^= 0x08 }, "link type 9, read as Ethernet (the first frame is)"},
		damage{"link type and version", 4, func(b []byte) { b[20], b[21], b[6] = 147, 0, 7 },
			"version 2.7, not 2.4; link type 147, read as Ethernet (the first frame is)"})
	for _, tc := range cases {
		b := bytes.Clone(clean)
		tc.do(b)
		path := t.TempDir() + "/v.pcap"
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		why := tc.why
		for _, how := range []string{"stream", "file", "batch"} {
			var r *Reader
			if how == "stream" {
				r, err = NewFileReader(path, bytes.NewReader(b))
			} else {
				r, err = Open(path)
			}
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, how, err)
			}
			first, err := r.Next()
			if err != nil || first.Number != 1 {
				t.Fatalf("%s %s: first frame %v", tc.name, how, err)
			}
			if want := fmt.Sprintf("frame 1 (file offset 0x18): record: the file header at file offset %#x is damaged (%s), read all the same: no frame missing", tc.at, why); first.RecordErr == nil || first.RecordErr.Error() != want {
				t.Errorf("%s %s: frame 1's error %v, want %q", tc.name, how, first.RecordErr, want)
			}
			if first.Eth == nil || first.LinkType != layers.LinkTypeEthernet {
				t.Errorf("%s %s: frame 1 not read as the Ethernet frame it is: %v", tc.name, how, first.Decoded)
			}
			r.Close()
			if how != "stream" {
				r, _ = Open(path)
			} else {
				r, _ = NewFileReader(path, bytes.NewReader(b))
			}
			got, skips, end := readDamaged(t, r, how == "batch")
			if len(got) != len(offs) || skips != 1 {
				t.Errorf("%s %s: %d frames, %d told damaged; want %d and 1", tc.name, how, len(got), skips, len(offs))
			}
			if want := fmt.Sprintf("frame 1 (file offset %#x): corrupt record: file header: %s; read all the same, no frame missing", tc.at, why); end == nil || !strings.HasSuffix(end.Error(), want) {
				t.Errorf("%s %s: end %v, want one ending %q", tc.name, how, end, want)
			}
		}
	}
	// A file whose first record is not one either is not read as a pcap
	// file with a damaged version.
	b := bytes.Clone(clean)
	binary.LittleEndian.PutUint16(b[4:], 3)
	binary.LittleEndian.PutUint32(b[24+8:], 1<<30)
	if _, err := NewFileReader("v.pcap", bytes.NewReader(b)); err == nil || !strings.Contains(err.Error(), "unknown version 3.4") {
		t.Errorf("version and first record damaged: %v, want the version refused", err)
	}
	b = bytes.Clone(clean)
	b[0] ^= 0x01
	binary.LittleEndian.PutUint32(b[24+8:], 1<<30)
	if _, err := NewFileReader("m.pcap", bytes.NewReader(b)); err == nil || err.Error() != "m.pcap: not a capture file (magic d5c3b2a1)" {
		t.Errorf("magic and first record damaged: %v, want the file refused as before", err)
	}
}
