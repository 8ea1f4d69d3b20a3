package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

func TestReadReferenceCaptures(t *testing.T) {
	// Frame counts from capinfos; TCP/RoCE counts from tshark on the same files.
	tests := []struct {
		file            string
		frames, tcp     int
		roce, smcOption int
	}{
		{pingpong, 4140, 13, 4123, 2},
		{declineRDM, 76, 0, 0, 2},
		{fallback, 74, 0, 0, 1},
		{noUEID, 76, 0, 0, 2},
		{publicRoCE, 60, 0, 20, 0},
		{negTFO, 14, 14, 0, 0},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			r, err := Open(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			fs, err := collect(t, r)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != tt.frames {
				t.Errorf("frames = %d, want %d", len(fs), tt.frames)
			}
			var tcp, roce, opt int
			for i, f := range fs {
				if f.n != i+1 {
					t.Fatalf("frame %d numbered %d", i+1, f.n)
				}
				if f.tcp {
					tcp++
				}
				if f.roce {
					roce++
				}
				if f.smcOpt {
					opt++
				}
			}
			if tt.tcp != 0 && tcp != tt.tcp {
				t.Errorf("TCP frames = %d, want %d", tcp, tt.tcp)
			}
			if roce != tt.roce {
				t.Errorf("RoCEv2 frames = %d, want %d", roce, tt.roce)
			}
			if opt != tt.smcOption {
				t.Errorf("frames with SMC option = %d, want %d", opt, tt.smcOption)
			}
		})
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	orig, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, orig)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badLink := append([]byte(nil), orig...)
	badLink[20], badLink[21], badLink[22], badLink[23] = 147, 0, 0, 0
	// A first frame of no link type a Decoder has (else the header is
	// read as damaged: guessLinkType).
	badLink[pcapHeaderLen+pcapRecordLen+12], badLink[pcapHeaderLen+pcapRecordLen+13] = 0x99, 0x99

	tests := []struct {
		name      string
		path      string
		openErr   string // error from Open
		readErr   string // error from Next after the good frames
		goodCount int
		sentinel  error
	}{
		{name: "empty", path: write("empty.pcap", nil), openErr: "empty.pcap: empty file", sentinel: ErrEmpty},
		{name: "directory", path: "../testdata", openErr: "testdata: is a directory", sentinel: syscall.EISDIR},
		{name: "text", path: "../testdata/reference/README.md", openErr: "README.md: not a capture file (magic 2320", sentinel: ErrNotCapture},
		{name: "tiny", path: write("tiny.pcap", orig[:3]), openErr: "not a capture file (only 3 bytes)", sentinel: ErrNotCapture},
		{name: "header cut", path: write("hdr.pcap", orig[:10]), openErr: "hdr.pcap: truncated", sentinel: ErrTruncatedFile},
		{name: "link type", path: write("link.pcap", badLink), openErr: "link.pcap: file offset 0x0: unsupported link type 147 (declared by the file header)", sentinel: ErrUnsupportedLink},
		{name: "pcapng link type", path: write("link.pcapng", badLinkNg(t)), openErr: "link.pcapng: file offset 0x1c: unsupported link type 147 (declared by interface description block 0)", sentinel: ErrUnsupportedLink},
		{name: "cut in record data", path: write("cut1.pcap", orig[:offs[100]+16+5]), goodCount: 100,
			readErr: fmt.Sprintf("cut1.pcap: frame 101 (file offset %#x): truncated record: the file ends inside it", offs[100]), sentinel: ErrTruncatedFile},
		{name: "cut in record header", path: write("cut2.pcap", orig[:offs[7]+9]), goodCount: 7,
			readErr: fmt.Sprintf("cut2.pcap: frame 8 (file offset %#x): truncated record: the file ends inside it", offs[7]), sentinel: ErrTruncatedFile},
		{name: "cut after record header", path: write("cut3.pcap", orig[:offs[7]+16]), goodCount: 7,
			readErr: fmt.Sprintf("cut3.pcap: frame 8 (file offset %#x): truncated record: the file ends inside it", offs[7]), sentinel: ErrTruncatedFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Open(tt.path)
			if tt.openErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.openErr) {
					t.Fatalf("Open error = %v, want %q", err, tt.openErr)
				}
				if !errors.Is(err, tt.sentinel) {
					t.Errorf("error %v does not wrap %v", err, tt.sentinel)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			fs, err := collect(t, r)
			if len(fs) != tt.goodCount {
				t.Errorf("decoded %d frames before the error, want %d", len(fs), tt.goodCount)
			}
			if err == nil || !strings.HasSuffix(err.Error(), tt.readErr) {
				t.Fatalf("error = %v, want %q", err, tt.readErr)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
		})
	}
}

func TestGzip(t *testing.T) {
	b, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	r, err := NewFileReader("pp.pcap.gz", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	clc := 0
	for _, f := range fs {
		clc += len(f.clc)
	}
	if err != nil || len(fs) != 4140 || clc != 3 {
		t.Fatalf("%d frames, %d CLC, err %v", len(fs), clc, err)
	}
	// A cut gzip stream is a truncated capture, not a crash.
	r, err = NewFileReader("pp.pcap.gz", bytes.NewReader(buf.Bytes()[:buf.Len()/2]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, r); !errors.Is(err, ErrTruncatedFile) {
		t.Fatalf("cut gzip: %v", err)
	}
}

// TestGzipCut: a gzip capture whose stream stops before its trailer (a
// writer killed after a flush: every frame whole, no final block, no
// trailer; or a copy cut inside a record) says so, after which frame or
// inside which, and at which compressed offset, where it said "truncated
// record" of a frame it never began, or nothing.
func TestGzipCut(t *testing.T) {
	b, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, b)
	var flushed bytes.Buffer
	zw := gzip.NewWriter(&flushed)
	zw.Write(b[:offs[100]])
	zw.Flush() // a whole record boundary, then nothing
	half := flushed.Bytes()
	zw.Write(b[offs[100]:])
	zw.Flush()
	whole := flushed.Bytes()
	for _, c := range []struct {
		name   string
		gz     []byte
		frames int
		want   string
	}{
		{"after frame 4140", whole, 4140, fmt.Sprintf("pp.pcap.gz: gzip stream ended early (no trailer) after frame 4140, at compressed offset %#x", len(whole))},
		{"after frame 100", half, 100, fmt.Sprintf("pp.pcap.gz: gzip stream ended early (no trailer) after frame 100, at compressed offset %#x", len(half))},
		{"inside a record", whole[:(len(half)+len(whole))/2], -1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewFileReader("pp.pcap.gz", bytes.NewReader(c.gz))
			if err != nil {
				t.Fatal(err)
			}
			fs, err := collect(t, r)
			if c.frames < 0 { // wherever the stream stops: inside the next record
				c.frames = len(fs)
				c.want = fmt.Sprintf("pp.pcap.gz: frame %d (file offset %#x): gzip stream ended early (no trailer) inside its record, at compressed offset %#x", len(fs)+1, offs[len(fs)], len(c.gz))
			}
			if len(fs) != c.frames || err == nil || err.Error() != c.want {
				t.Errorf("%d frames, %v\nwant %d frames, %s", len(fs), err, c.frames, c.want)
			}
			var gc *GzipCutError
			if !errors.Is(err, ErrTruncatedFile) || !errors.As(err, &gc) {
				t.Errorf("%v: not a GzipCutError wrapping ErrTruncatedFile", err)
			}
		})
	}
	r, err := NewFileReader("hdr.pcap.gz", bytes.NewReader(whole[:12]))
	if err == nil {
		_, err = collect(t, r)
	}
	if err == nil || !strings.Contains(err.Error(), "hdr.pcap.gz: gzip stream ended early (no trailer) inside the capture's header, at compressed offset 0xc") {
		t.Errorf("cut in the capture header: %v", err)
	}
}

// badLinkNg is pingpong.pcap as pcapng whose first interface has link
// type 147.
func badLinkNg(t *testing.T) []byte {
	fs, _ := testutil.ReadFrames(t, pingpong)
	// A first packet of no link type a Decoder has (else the interface
	// block is read as damaged: guessInterface).
	fs[0].Data = bytes.Repeat([]byte{0x99}, len(fs[0].Data))
	b := testutil.Pcapng(147, 6, fs[:3])
	if binary.LittleEndian.Uint32(b[0x1c:]) != 1 || binary.LittleEndian.Uint16(b[0x1c+8:]) != 147 {
		t.Fatalf("no interface block of link type 147 at 0x1c: % x", b[:0x30])
	}
	return b
}

func TestOpenMissing(t *testing.T) {
	_, err := Open("/nonexistent/x.pcap")
	if err == nil || err.Error() != "/nonexistent/x.pcap: no such file or directory" {
		t.Fatalf("error = %v", err)
	}
}

func TestStdinName(t *testing.T) {
	_, err := NewFileReader("-", strings.NewReader(""))
	// A closed pipe is not a file, let alone an empty one.
	if err == nil || err.Error() != "stdin: no data: closed before a capture header" || !errors.Is(err, ErrEmpty) {
		t.Fatalf("error = %v", err)
	}
	b, _ := os.ReadFile(declineRDM)
	r, err := NewFileReader("-", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	if err != nil || len(fs) != 76 {
		t.Fatalf("read %d frames, err %v", len(fs), err)
	}
}

func TestSnaplenCut(t *testing.T) {
	frames := readRaw(t, pingpong)
	for i := range frames {
		if len(frames[i].Data) > 60 {
			frames[i].Data = frames[i].Data[:60]
			frames[i].CI.CaptureLength = 60
		}
	}
	r, err := Open(writePcap(t, t.TempDir(), "snap.pcap", layers.LinkTypeEthernet, frames))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 4140 {
		t.Fatalf("frames = %d, want 4140: cut frames must not stop the read", len(fs))
	}
	var cut int
	for _, f := range fs {
		if f.cut {
			cut++
		}
	}
	// Every frame but the 62-byte RoCE ACKs and short TCP segments is longer than 60.
	if cut < 2000 {
		t.Errorf("only %d frames flagged as cut", cut)
	}
}

func TestPcapNG(t *testing.T) {
	frames := readRaw(t, pingpong)
	buf := bytes.NewBuffer(ngWrite(t, frames, layers.LinkTypeEthernet, 9))
	r, err := NewFileReader("ng", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(frames) {
		t.Fatalf("pcapng frames = %d, want %d", len(fs), len(frames))
	}
	clcs := 0
	for _, f := range fs {
		clcs += len(f.clc)
	}
	if clcs != 3 {
		t.Errorf("CLC messages via pcapng = %d, want 3", clcs)
	}

	// Truncated pcapng: frames before the cut, then a truncation error
	// naming the file offset where the cut record (an enhanced packet
	// block, type 6, running past the cut) starts.
	cut := buf.Len() / 2
	r, err = NewFileReader("ng.pcapng", bytes.NewReader(buf.Bytes()[:cut]))
	if err != nil {
		t.Fatal(err)
	}
	fs, err = collect(t, r)
	var fe *FileError
	if !errors.As(err, &fe) || !errors.Is(err, ErrTruncatedFile) || fe.Frame != len(fs)+1 || fe.Offset < 0 {
		t.Fatalf("error = %v", err)
	}
	b := buf.Bytes()
	if typ, l := binary.LittleEndian.Uint32(b[fe.Offset:]), binary.LittleEndian.Uint32(b[fe.Offset+4:]); typ != 6 || fe.Offset+int64(l) <= int64(cut) {
		t.Errorf("offset %#x: block type %d of %d bytes; want the enhanced packet block cut at %#x", fe.Offset, typ, l, cut)
	}
	if want := fmt.Sprintf("ng.pcapng: frame %d (file offset %#x): truncated record", fe.Frame, fe.Offset); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %v, want %q...", err, want)
	}
	if len(fs) < 1000 {
		t.Errorf("only %d frames before the cut", len(fs))
	}
}

// relink re-encapsulates the IP packets of real Ethernet frames.
func relink(t *testing.T, frames []rawFrame, hdr func(f rawFrame, etype []byte) []byte) []rawFrame {
	t.Helper()
	var out []rawFrame
	for _, f := range frames {
		d := hdr(f, f.Data[12:14])
		if d == nil {
			continue
		}
		d = append(d, f.Data[14:]...)
		ci := f.CI
		ci.CaptureLength, ci.Length = len(d), len(d)
		out = append(out, rawFrame{CI: ci, Data: d})
	}
	return out
}

func TestLinkTypes(t *testing.T) {
	frames := readRaw(t, pingpong)
	ipOnly := func(f rawFrame, et []byte) []byte {
		if et[0] != 0x08 || et[1] != 0x00 {
			return nil
		}
		return []byte{}
	}
	sll := func(f rawFrame, et []byte) []byte {
		h := []byte{0, 0, 0, 1, 0, 6}
		h = append(h, f.Data[6:12]...)
		h = append(h, 0, 0)
		return append(h, et...)
	}
	sll2 := func(f rawFrame, et []byte) []byte {
		h := append([]byte{}, et...)
		h = append(h, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6)
		h = append(h, f.Data[6:12]...)
		return append(h, 0, 0)
	}
	vlan := func(tags ...[]byte) func(rawFrame, []byte) []byte {
		return func(f rawFrame, et []byte) []byte {
			h := append([]byte{}, f.Data[:12]...)
			for _, tag := range tags {
				h = append(h, tag...)
			}
			return append(h, et...)
		}
	}
	tests := []struct {
		name  string
		lt    layers.LinkType
		hdr   func(rawFrame, []byte) []byte
		vlans int
	}{
		{"raw101", layers.LinkTypeRaw, ipOnly, 0},
		{"raw12", 12, ipOnly, 0},
		{"raw14", 14, ipOnly, 0},
		{"ipv4", layers.LinkTypeIPv4, ipOnly, 0},
		{"sll", layers.LinkTypeLinuxSLL, sll, 0},
		{"sll2", layers.LinkTypeLinuxSLL2, sll2, 0},
		{"dot1q", layers.LinkTypeEthernet, vlan([]byte{0x81, 0x00, 0x00, 0x64}), 1},
		{"qinq", layers.LinkTypeEthernet, vlan([]byte{0x88, 0xa8, 0x00, 0xc8}, []byte{0x81, 0x00, 0x00, 0x64}), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr := relink(t, frames, tt.hdr)
			r, err := NewReader(tt.name, &sliceSource{frames: fr}, tt.lt)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := collect(t, r)
			if err != nil {
				t.Fatal(err)
			}
			var tcp, roce, opt, clc int
			for _, f := range fs {
				if f.err != nil {
					t.Fatalf("frame %d: %v", f.n, f.err)
				}
				if f.vlans != tt.vlans {
					t.Fatalf("frame %d: %d VLAN tags, want %d", f.n, f.vlans, tt.vlans)
				}
				if f.tcp {
					tcp++
				}
				if f.roce {
					roce++
				}
				if f.smcOpt {
					opt++
				}
				clc += len(f.clc)
			}
			if tcp != 13 || roce != 4123 || opt != 2 || clc != 3 {
				t.Errorf("tcp=%d roce=%d smcopt=%d clc=%d, want 13 4123 2 3", tcp, roce, opt, clc)
			}
		})
	}
}

func TestUnsupportedLinkTypeReader(t *testing.T) {
	_, err := NewReader("x", &sliceSource{}, layers.LinkTypeIEEE802_11)
	if err == nil || err.Error() != "x: unsupported link type 105" {
		t.Fatalf("error = %v", err)
	}
}

func TestDecodeNeverPanics(t *testing.T) {
	// Every prefix, and every single-byte corruption, of real frames of each
	// kind must decode without panic. The parser turns a layer's panic
	// into an error; that would still be a bug, so it is checked for.
	frames := readRaw(t, pingpong)
	d, err := NewDecoder(layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var f Frame
	f.demand, f.frameFields = gAll, wAllFrame
	check := func(what string) {
		d.Decode(&f)
		_ = f.Fields()
		if f.Err != nil && strings.HasPrefix(f.Err.Error(), "panic") {
			t.Fatalf("%s: layer panicked: %v", what, f.Err)
		}
	}
	for _, i := range []int{4, 5, 7, 9, 13, 17, 21, 22, 23, 4113} {
		data := frames[i].Data
		for n := 0; n <= len(data); n++ {
			f.Data = data[:n]
			f.CI = gopacket.CaptureInfo{CaptureLength: n, Length: len(data)}
			check(fmt.Sprintf("frame %d cut to %d", i+1, n))
		}
		buf := append([]byte(nil), data...)
		for j := range buf {
			for _, x := range []byte{0x00, 0xff, buf[j] ^ 0x80} {
				old := buf[j]
				buf[j] = x
				f.Data = buf
				f.CI = gopacket.CaptureInfo{CaptureLength: len(buf), Length: len(buf)}
				check(fmt.Sprintf("frame %d byte %d = %#x", i+1, j, x))
				buf[j] = old
			}
		}
	}
}

func TestRoCELayersAndICRC(t *testing.T) {
	for _, file := range []string{pingpong, publicRoCE} {
		r, err := Open(file)
		if err != nil {
			t.Fatal(err)
		}
		var bth, checked, ok, cdc int
		for {
			f, err := r.Next()
			if err != nil {
				break
			}
			if f.BTH == nil {
				continue
			}
			bth++
			if f.CDC != nil {
				cdc++
			}
			if f.ICRC.Checked {
				checked++
				if f.ICRC.OK && f.ICRC.Got == f.ICRC.Want {
					ok++
				}
			}
		}
		r.Close()
		if bth == 0 || checked != bth || ok != bth {
			t.Errorf("%s: %d BTH, %d ICRC checked, %d ok", file, bth, checked, ok)
		}
		if file == pingpong && cdc == 0 {
			t.Errorf("no CDC decoded in pingpong")
		}
	}
	// One flipped payload bit must fail the check.
	frames := readRaw(t, pingpong)
	fr := frames[22] // frame 23: CDC SEND (struct smc_cdc_msg)
	fr.Data = append([]byte(nil), fr.Data...)
	fr.Data[60] ^= 1
	r, _ := NewReader("x", &sliceSource{frames: []rawFrame{fr}}, layers.LinkTypeEthernet)
	f, err := r.Next()
	if err != nil || f.BTH == nil || !f.ICRC.Checked || f.ICRC.OK {
		t.Fatalf("corrupted frame: err %v, ICRC %+v", err, f.ICRC)
	}
}

func TestNanosecondPcap(t *testing.T) {
	frames := readRaw(t, declineRDM)
	r, err := NewFileReader("nano", bytes.NewReader(testutil.PcapNanos(t, layers.LinkTypeEthernet, frames)))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if !f.CI.Timestamp.Equal(frames[n].CI.Timestamp) {
			t.Fatalf("frame %d: time %v, want %v", n+1, f.CI.Timestamp, frames[n].CI.Timestamp)
		}
		n++
	}
	if n != len(frames) {
		t.Fatalf("%d frames, want %d", n, len(frames))
	}
}

// TestBigEndianPcap rewrites the file and record headers of a real capture
// in big-endian order (as written on SPARC or s390 hosts); frames unchanged.
func TestBigEndianPcap(t *testing.T) {
	b, err := os.ReadFile(declineRDM)
	if err != nil {
		t.Fatal(err)
	}
	be := append([]byte(nil), b...)
	swap32 := func(off int) {
		binary.BigEndian.PutUint32(be[off:], binary.LittleEndian.Uint32(b[off:]))
	}
	swap16 := func(off int) {
		binary.BigEndian.PutUint16(be[off:], binary.LittleEndian.Uint16(b[off:]))
	}
	swap32(0)
	swap16(4)
	swap16(6)
	for _, off := range []int{8, 12, 16, 20} {
		swap32(off)
	}
	for _, rec := range recordOffsets(t, b) {
		for i := 0; i < 16; i += 4 {
			swap32(int(rec) + i)
		}
	}
	r, err := NewFileReader("be", bytes.NewReader(be))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := collect(t, r)
	clc := 0
	for _, f := range fs {
		clc += len(f.clc)
	}
	if err != nil || len(fs) != 76 || clc != 2 {
		t.Fatalf("%d frames, %d CLC, err %v", len(fs), clc, err)
	}
}

// TestPcapngMixedLinkTypes: a pcapng with several interfaces of different
// link types (mergecap of a `tcpdump -i any` capture and an Ethernet one) is
// read whole: each frame is decoded by its interface's link type, and an
// interface of an unsupported type yields frames that carry the error while
// reading goes on. pcapgo's default silently skipped every frame whose
// interface differed from the first.
func TestPcapngMixedLinkTypes(t *testing.T) {
	eth := readRaw(t, declineRDM)
	sll := relink(t, readRaw(t, pingpong)[:40], func(f rawFrame, et []byte) []byte {
		h := []byte{0, 0, 0, 1, 0, 6}
		h = append(h, f.Data[6:12]...)
		h = append(h, 0, 0)
		return append(h, et...)
	})
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, SnapLength: 65535}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	sllIf, err := w.AddInterface(pcapgo.NgInterface{LinkType: layers.LinkTypeLinuxSLL, SnapLength: 65535})
	if err != nil {
		t.Fatal(err)
	}
	erfIf, err := w.AddInterface(pcapgo.NgInterface{LinkType: 197, SnapLength: 65535}) // ERF: not decoded
	if err != nil {
		t.Fatal(err)
	}
	write := func(f rawFrame, ifc int) {
		ci := f.CI
		ci.InterfaceIndex = ifc
		if err := w.WritePacket(ci, f.Data); err != nil {
			t.Fatal(err)
		}
	}
	for i := range max(len(eth), len(sll)) {
		if i < len(eth) {
			write(eth[i], 0)
		}
		if i < len(sll) {
			write(sll[i], sllIf)
		}
		if i == 5 {
			// An ERF record (its 16-byte header, then the frame): of
			// no link type decoded here, not read as another's.
			erf := append(bytes.Repeat([]byte{0xff}, 8), 2, 0, 0, byte(16+len(eth[0].Data)), 0, 0, 0, byte(len(eth[0].Data)))
			ci := eth[0].CI
			ci.CaptureLength, ci.Length = len(erf)+len(eth[0].Data), len(erf)+len(eth[0].Data)
			write(rawFrame{CI: ci, Data: append(erf, eth[0].Data...)}, erfIf)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	mixed := buf.Bytes()
	t.Run("write", func(t *testing.T) { testWriteMixed(t, mixed) })
	r, err := NewFileReader("mixed.pcapng", bytes.NewReader(mixed))
	if err != nil {
		t.Fatal(err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		t.Errorf("LinkType() = %v, want the first interface's (Ethernet)", r.LinkType())
	}
	var n, ethIP, sllIP, unsupported, clc int
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		clc += len(f.CLC)
		switch {
		case errors.Is(f.Err, ErrUnsupportedLink):
			unsupported++
		case f.IPv4 != nil && f.SLL != nil:
			sllIP++
		case f.IPv4 != nil && f.Eth != nil:
			ethIP++
		}
	}
	want := len(eth) + len(sll) + 1
	if n != want || unsupported != 1 || sllIP == 0 || ethIP == 0 {
		t.Errorf("read %d frames (want %d): %d Ethernet+IP, %d SLL+IP, %d unsupported", n, want, ethIP, sllIP, unsupported)
	}
	if clc != 2+3 { // decline-nordma: Proposal, Decline; pingpong: Proposal, Accept, Confirm
		t.Errorf("%d CLC messages reassembled across both link types, want 5", clc)
	}
}

// testWriteMixed: -w of a capture with several link types keeps each
// frame's link type (a pcapng interface per type), so the copy reads back
// frame for frame as the original.
func testWriteMixed(t *testing.T, mixed []byte) {
	type lf struct {
		lt   layers.LinkType
		data string
	}
	read := func(b []byte) []lf {
		r, err := NewFileReader("x.pcapng", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		var out []lf
		for {
			f, err := r.Next()
			if err == io.EOF {
				return out
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, lf{f.LinkType, string(f.Data)})
		}
	}
	r, err := NewFileReader("mixed.pcapng", bytes.NewReader(mixed))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := read(mixed), read(buf.Bytes())
	if len(got) != len(want) {
		t.Fatalf("copy has %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("frame %d: copy has link type %v, want %v (or different bytes)", i+1, got[i].lt, want[i].lt)
		}
	}
}

// TestOriginalBelowCaptured: records whose original length is below their
// captured length (4 of the first 13 frames of pingpong.pcap, original
// length set 10 below the captured one) are read as captured and flagged,
// naming the frame, the record's offset and both lengths; the rest of the
// file is read as tshark reads it. Reading used to stop at the first of
// them with a corrupt-record error.
func TestOriginalBelowCaptured(t *testing.T) {
	frames := readRaw(t, pingpong)[:13]
	bad := map[int]bool{3: true, 5: true, 8: true, 10: true}
	path := writePcap(t, t.TempDir(), "origlt.pcap", layers.LinkTypeEthernet, frames)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	offs := recordOffsets(t, b)
	for n := range bad { // pcapgo's writer refuses such records: patch orig_len
		frames[n-1].CI.Length = frames[n-1].CI.CaptureLength - 10
		binary.LittleEndian.PutUint32(b[offs[n-1]+12:], uint32(frames[n-1].CI.Length))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	n, clcs := 0, 0
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", n, err)
		}
		n++
		clcs += len(f.CLC)
		want := ""
		if bad[n] {
			want = fmt.Sprintf("frame %d (file offset %#x): record: original length %d is below the captured length %d (decoded as captured)",
				n, offs[n-1], frames[n-1].CI.Length, frames[n-1].CI.CaptureLength)
		}
		got := ""
		if f.RecordErr != nil {
			got = f.RecordErr.Error()
			if !errors.Is(f.RecordErr, ErrCorruptRecord) {
				t.Errorf("frame %d: %v does not wrap ErrCorruptRecord", n, f.RecordErr)
			}
		}
		if got != want {
			t.Errorf("frame %d: RecordErr %q, want %q", n, got, want)
		}
		if v, ok := f.Fields().First(fFrameError); bad[n] && (!ok || v.S != want) {
			t.Errorf("frame %d: frame.error %q, want %q", n, v.S, want)
		}
	}
	r.Close()
	if n != 13 || clcs != 3 {
		t.Errorf("read %d frames with %d CLC messages, want 13 and 3", n, clcs)
	}
}

// TestTimeDigits: a frame's time resolves as many decimals as its capture:
// 6 for a microsecond pcap, 9 for a nanosecond one, a pcapng interface's
// if_tsresol (9 for binary ones), a PacketSource's Resolution.
func TestTimeDigits(t *testing.T) {
	frames := readRaw(t, declineRDM)[:3]
	micro, err := os.ReadFile(declineRDM)
	if err != nil {
		t.Fatal(err)
	}
	read := func(b []byte) uint8 {
		r, err := NewFileReader("x", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		return f.TimeDigits()
	}
	for _, c := range []struct {
		name string
		file []byte
		want uint8
	}{
		{"pcap us", micro, 6},
		{"pcap ns", testutil.PcapNanos(t, layers.LinkTypeEthernet, frames), 9},
		{"pcapng 10^-3", ngWrite(t, frames, layers.LinkTypeEthernet, 3), 3},
		{"pcapng 10^-6", ngWrite(t, frames, layers.LinkTypeEthernet, 6), 6},
		{"pcapng 10^-9", ngWrite(t, frames, layers.LinkTypeEthernet, 9), 9},
		{"pcapng 10^-12", ngWrite(t, frames, layers.LinkTypeEthernet, 12), 9},
		{"pcapng 2^-20", ngWrite(t, frames, layers.LinkTypeEthernet, -20), 9},
	} {
		if got := read(c.file); got != c.want {
			t.Errorf("%s: %d decimals, want %d", c.name, got, c.want)
		}
	}
	pr, err := pcapgo.NewReader(bytes.NewReader(micro))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader("src", pr, pr.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	if f, err := r.Next(); err != nil || f.TimeDigits() != 6 {
		t.Errorf("pcapgo source of a microsecond pcap: %v, %d decimals", err, f.TimeDigits())
	}
	r, _ = NewReader("slice", &sliceSource{frames: frames}, layers.LinkTypeEthernet)
	if f, err := r.Next(); err != nil || f.TimeDigits() != 9 {
		t.Errorf("source without a resolution: %v, %d decimals", err, f.TimeDigits())
	}
}

// TestSnaplenCutMessages cuts the reference captures at every snap length
// from the end of the RoCE headers on: no RoCE frame is an error (the
// capture cut it, the sender did not), and each CDC and LLC message the whole
// capture has is the same message in the cut one as far as it is
// captured: a CDC holding its fields has them all, an LLC its type.
func TestSnaplenCutMessages(t *testing.T) {
	for _, name := range []string{pingpong, "../samples/multilink.pcap"} {
		whole := readRaw(t, name)
		type msg struct {
			cdc  decode.CDC
			llc  decode.LLCType
			wire int
		}
		want := map[int]msg{}
		r, err := Open(name)
		if err != nil {
			t.Fatal(err)
		}
		for f, err := r.Next(); err == nil; f, err = r.Next() {
			switch {
			case f.CDC != nil:
				want[f.Number] = msg{cdc: *f.CDC, wire: len(f.BTH.Data())}
			case f.LLC != nil:
				want[f.Number] = msg{llc: f.LLC.Type, wire: len(f.BTH.Data())}
			}
		}
		r.Close()
		// Ethernet, IPv4, UDP and BTH: 54 bytes before the message.
		for snap := 54; snap <= 54+100; snap++ {
			frames := slices.Clone(whole)
			for i := range frames {
				if len(frames[i].Data) > snap {
					frames[i].Data = frames[i].Data[:snap]
					frames[i].CI.CaptureLength = snap
				}
			}
			r, err := Open(writePcap(t, t.TempDir(), "snap.pcap", layers.LinkTypeEthernet, frames))
			if err != nil {
				t.Fatal(err)
			}
			for f, err := r.Next(); err == nil; f, err = r.Next() {
				if f.Err != nil && f.UDP != nil {
					t.Fatalf("%s cut to %d: frame %d: %v", name, snap, f.Number, f.Err)
				}
				w, ok := want[f.Number]
				if !ok {
					continue
				}
				held := snap - 54
				switch {
				case w.llc != 0 && held >= 4:
					if f.LLC == nil || f.LLC.Type != w.llc || f.LLC.Cut != min(held, w.wire)%w.wire {
						t.Fatalf("%s cut to %d: frame %d: LLC %+v, want a %v", name, snap, f.Number, f.LLC, w.llc)
					}
				case w.llc == 0 && held >= 26:
					c := w.cdc
					if held < w.wire {
						c.Contents, c.Payload, c.Cut = f.Data[54:], nil, held
						if held <= 26 {
							c.Credits = 0
						}
					}
					if f.CDC == nil || f.CDC.Seq != c.Seq || f.CDC.Prod != c.Prod || f.CDC.Cons != c.Cons ||
						f.CDC.ConnFlags != c.ConnFlags || f.CDC.Cut != c.Cut {
						t.Fatalf("%s cut to %d: frame %d: CDC %+v, want %+v", name, snap, f.Number, f.CDC, c)
					}
				}
			}
			r.Close()
		}
	}
}
