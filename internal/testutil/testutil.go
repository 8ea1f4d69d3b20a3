package testutil

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/internal/mutate"
)

// update rewrites golden files instead of comparing with them.
var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Golden compares got with testdata/<TestName>/<name>.golden (the test's
// name with subtests as directories). With -update it writes the file.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	GoldenFile(t, filepath.Join("testdata", filepath.FromSlash(t.Name()), name+".golden"), got)
}

// GoldenFile compares got with the file at path (a generated file kept in
// the repository, such as a man page); with -update it writes the file.
func GoldenFile(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %q -update to create it)", err, t.Name())
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the output (-want +got; rerun with -update and review the diff):\n%s", path, Diff(want, got))
	}
}

// Diff returns the first differing lines of want and got, a few each.
func Diff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d (want %d lines, got %d)\n", i+1, len(wl), len(gl))
	for j := i; j < i+5; j++ {
		if j < len(wl) {
			fmt.Fprintf(&b, "-%s\n", wl[j])
		}
	}
	for j := i; j < i+5; j++ {
		if j < len(gl) {
			fmt.Fprintf(&b, "+%s\n", gl[j])
		}
	}
	return b.String()
}

// Root returns the repository's root directory (where go.mod is).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testutil: cannot find the repository root")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// SamplesDir returns the samples/ directory of the repository.
func SamplesDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(Root(t), "samples")
}

// Samples returns the lab's captures, samples/*.pcap; it fails when there
// are none, since every checkout has them.
func Samples(t testing.TB) []string {
	t.Helper()
	return glob(t, filepath.Join(SamplesDir(t), "*.pcap"))
}

// References returns the reference kernel captures in testdata/reference.
func References(t testing.TB) []string {
	t.Helper()
	return glob(t, filepath.Join(Root(t), "testdata", "reference", "*.pcap"))
}

// RecordOffsets walks classic pcap file b by its record headers' captured
// lengths (independently of package capture) and returns where each
// record starts.
func RecordOffsets(b []byte) []int {
	var offs []int
	for off := 24; off+16 <= len(b); off += 16 + int(binary.LittleEndian.Uint32(b[off+8:])) {
		offs = append(offs, off)
	}
	return offs
}

// DamagedFile reports whether the capture at path is a file whose record
// structure is damaged on purpose (a record header no record has), read
// only past its damage: the tests that hold whole files to pcapgo, or
// their every frame to a mutation, leave it out (AllCaptures).
func DamagedFile(path string) bool {
	return filepath.Base(path) == "capture-damaged.pcap"
}

// AllCaptures returns every capture of the repository: samples/ and every
// directory under testdata/, pcap and pcapng, but the damaged files
// (DamagedFile).
func AllCaptures(t testing.TB) []string {
	t.Helper()
	root := Root(t)
	var out []string
	for _, pat := range []string{"samples/*.pcap*", "testdata/*/*.pcap*", "testdata/*/*/*.pcap*"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		for _, p := range m {
			if !DamagedFile(p) {
				out = append(out, p)
			}
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d captures under samples/ and testdata/", len(out))
	}
	return out
}

func glob(t testing.TB, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil || len(m) == 0 {
		t.Fatalf("no captures match %s (%v)", pattern, err)
	}
	return m
}

// Packet is one frame of a capture with its capture info.
type Packet = mutate.Frame

// ReadFrames reads every frame of a pcap or pcapng file.
func ReadFrames(t testing.TB, path string) ([]Packet, layers.LinkType) {
	t.Helper()
	fs, lt, err := mutate.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fs, lt
}

// Frame returns frame n (1-based, as smcdump numbers them) of a capture.
func Frame(t testing.TB, path string, n int) Packet {
	t.Helper()
	ps, _ := ReadFrames(t, path)
	if n < 1 || n > len(ps) {
		t.Fatalf("%s has %d frames, no frame %d", path, len(ps), n)
	}
	return ps[n-1]
}

// NeedTool skips the test, saying why, when the named program is not on PATH.
func NeedTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("needs %s on PATH (make test-deps installs it): %v", name, err)
	}
	return p
}

// WriteFrames writes frames as a pcap of link type lt called name in
// t.TempDir() and returns its path (tests that patch real frames).
func WriteFrames(t testing.TB, name string, lt layers.LinkType, frames []Packet) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65536, lt); err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		ci := fr.CI
		ci.CaptureLength = len(fr.Data)
		if ci.Length < ci.CaptureLength {
			ci.Length = ci.CaptureLength
		}
		if err := w.WritePacket(ci, fr.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return p
}

// Pcapng encodes frames as a little-endian pcapng stream: a section header
// block, one interface description block of link type lt whose if_tsresol
// is tsresol (10^-n seconds, or 2^-n with the high bit, as the format
// writes it), then an enhanced packet block per frame, its time in those
// units (to the nearest). pcapgo's writer always writes nanoseconds, so
// tests of other resolutions need this one.
func Pcapng(lt layers.LinkType, tsresol uint8, frames []Packet) []byte {
	le := binary.LittleEndian
	block := func(b []byte, typ uint32, body []byte) []byte {
		n := 12 + (len(body)+3)&^3
		b = le.AppendUint32(le.AppendUint32(b, typ), uint32(n))
		b = append(b, body...)
		b = append(b, make([]byte, (4-len(body)%4)%4)...)
		return le.AppendUint32(b, uint32(n))
	}
	shb := le.AppendUint32(nil, 0x1A2B3C4D)
	shb = le.AppendUint16(le.AppendUint16(shb, 1), 0)
	shb = le.AppendUint64(shb, ^uint64(0)) // section length unknown
	b := block(nil, 0x0A0D0D0A, shb)
	idb := le.AppendUint16(nil, uint16(lt))
	idb = le.AppendUint16(idb, 0)
	idb = le.AppendUint32(idb, 262144)
	idb = le.AppendUint16(le.AppendUint16(idb, 9), 1) // if_tsresol
	idb = append(idb, tsresol, 0, 0, 0)
	idb = le.AppendUint32(idb, 0) // opt_endofopt
	b = block(b, 1, idb)
	exp := uint(tsresol & 0x7f)
	for _, f := range frames {
		ns := f.CI.Timestamp.UnixNano()
		sec, frac := uint64(ns/1e9), uint64(ns%1e9)
		var ts uint64
		if tsresol&0x80 != 0 {
			hi, lo := bits.Mul64(frac, 1<<exp)
			lo, carry := bits.Add64(lo, 5e8, 0) // to the nearest unit
			q, _ := bits.Div64(hi+carry, lo, 1e9)
			ts = sec<<exp + q
		} else {
			per := uint64(1)
			for range exp {
				per *= 10
			}
			if exp <= 9 {
				ts = sec*per + frac/(1e9/per)
			} else {
				ts = sec*per + frac*(per/1e9)
			}
		}
		epb := le.AppendUint32(nil, 0)
		epb = le.AppendUint32(le.AppendUint32(epb, uint32(ts>>32)), uint32(ts))
		epb = le.AppendUint32(epb, uint32(len(f.Data)))
		l := f.CI.Length
		if l < len(f.Data) {
			l = len(f.Data)
		}
		epb = le.AppendUint32(epb, uint32(l))
		epb = append(epb, f.Data...)
		b = block(b, 6, epb)
	}
	return b
}

// PcapNanos encodes frames as a classic pcap stream of link type lt with
// nanosecond timestamps (magic a1b23c4d), as tcpdump
// --time-stamp-precision=nano writes it.
func PcapNanos(t testing.TB, lt layers.LinkType, frames []Packet) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65535, lt); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := w.WritePacket(f.CI, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}
