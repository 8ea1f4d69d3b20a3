package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestPcapFileAsPcapgo: the reader that replaced pcapgo's for classic
// pcap returns what pcapgo returns, frame for frame and error for error,
// on every bundled capture, on each cut at every offset of the first
// records, and with damaged record and file headers; except a record whose
// original length is below its captured length, which pcapgo refuses and
// pcapFile reads (as tshark does; the Reader flags the frame, see
// TestOriginalBelowCaptured), where the stream and memory reads agree,
// and a record header no record has, which pcapgo stops at and pcapFile
// reads past (TestReadPastDamage): its frames are then pcapgo's of the
// file without that record; and a version other than 2.4, which pcapgo
// refuses and pcapFile reads as 2.4 where a record follows the header
// (the Reader tells it with the first frame, TestPcapVersionDamaged).
func TestPcapFileAsPcapgo(t *testing.T) {
	var files [][]byte
	for _, path := range append(testutil.Samples(t), testutil.References(t)...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if binary.LittleEndian.Uint32(b) == magicPcapNG {
			continue
		}
		files = append(files, b)
	}
	pp := files[0]
	// Files under 4 bytes never get here: NewFileReader reads the magic first.
	for cut := 4; cut < min(len(pp), 600); cut++ {
		files = append(files, pp[:cut])
	}
	origBelowCap := len(files)
	pastSnap := origBelowCap + 1
	version, minor := origBelowCap+2, origBelowCap+3
	for _, damage := range []func(b []byte){
		func(b []byte) { binary.LittleEndian.PutUint32(b[24+12:], 10) },                      // caplen beyond len: first
		func(b []byte) { binary.LittleEndian.PutUint32(b[24+8:], 1<<30) },                    // caplen beyond snaplen
		func(b []byte) { binary.LittleEndian.PutUint16(b[4:], 3) },                           // version
		func(b []byte) { binary.LittleEndian.PutUint16(b[6:], 9) },                           // minor version
		func(b []byte) { binary.LittleEndian.PutUint32(b[24+4:], 0xFFFFFFFF) },               // microseconds
		func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 1<<20); grow(b, 24, 300000) }, // a record longer than the buffer
	} {
		b := append([]byte(nil), pp...)
		damage(b)
		files = append(files, b)
	}
	// A whole record longer than the buffer, between two short ones.
	big := append([]byte(nil), pp[:24]...)
	binary.LittleEndian.PutUint32(big[16:], 1<<20)
	for _, n := range []int{60, 300000, 70} {
		var h [16]byte
		binary.LittleEndian.PutUint32(h[8:], uint32(n))
		binary.LittleEndian.PutUint32(h[12:], uint32(n))
		big = append(big, h[:]...)
		for i := 0; i < n; i++ {
			big = append(big, byte(i*13))
		}
	}
	files = append(files, big)
	for i, b := range files {
		// Header errors are pcapgo's, but not capitalised.
		want := readAll(t, b, "pcapgo")
		switch i {
		case origBelowCap:
			want = readAll(t, b, "stream")
			if !strings.Contains(want, "end: EOF") {
				t.Fatalf("original length below captured length stopped the read:\n%s", want)
			}
		case pastSnap:
			first := 24 + 16 + int(binary.LittleEndian.Uint32(pp[24+8:]))
			want = readAll(t, append(append([]byte(nil), pp[:24]...), pp[first:]...), "pcapgo")
		case version, minor:
			want = readAll(t, pp, "pcapgo")
		}
		for _, how := range []string{"stream", "memory"} {
			if got := readAll(t, b, how); got != want && !(strings.HasPrefix(got, "header:") && strings.EqualFold(got, want)) {
				t.Fatalf("input %d (%d bytes): pcapFile read (%s)\n%s\npcapgo read\n%s", i, len(b), how, got, want)
			}
		}
	}
}

// grow makes the record at off n bytes long (its data zeros), so the file
// holds a record longer than the Reader's buffer.
func grow(b []byte, off, n int) {
	binary.LittleEndian.PutUint32(b[off+8:], uint32(n))
	binary.LittleEndian.PutUint32(b[off+12:], uint32(n))
}

// readAll describes every record and the final error of b, read by
// pcapgo or pcapFile (from a stream or in memory, as a chunk).
func readAll(t *testing.T, b []byte, how string) string {
	t.Helper()
	var out bytes.Buffer
	br := bufio.NewReaderSize(bytes.NewReader(b), 1<<18)
	var src interface {
		PacketSource
	}
	switch how {
	case "pcapgo":
		r, err := pcapgo.NewReader(br)
		if err != nil {
			return "header: " + err.Error()
		}
		src = r
	case "memory":
		r, err := newMemPcapFile(b)
		if err != nil {
			return "header: " + err.Error()
		}
		src = r
	default:
		r, err := newPcapFile(br)
		if err != nil {
			return "header: " + err.Error()
		}
		src = r
	}
	for i := 0; ; i++ {
		data, ci, err := src.ZeroCopyReadPacketData()
		if err != nil {
			fmt.Fprintf(&out, "end: %v (caplen %d)\n", err, ci.CaptureLength)
			return out.String()
		}
		fmt.Fprintf(&out, "%d %v %d %d %x\n", i, ci.Timestamp, ci.CaptureLength, ci.Length, data)
	}
}

// TestPlainIPv4AsGopacket: the decoder's shortcut for IPv4 headers without
// options fills the layer exactly as layers.IPv4 does, on every IPv4
// packet of the bundled captures and on variations of one.
func TestPlainIPv4AsGopacket(t *testing.T) {
	var ips [][]byte
	for _, path := range append(testutil.Samples(t), testutil.References(t)...) {
		frames, lt := testutil.ReadFrames(t, path)
		if lt != layers.LinkTypeEthernet {
			continue
		}
		for _, f := range frames {
			if len(f.Data) > 14+20 && binary.BigEndian.Uint16(f.Data[12:14]) == 0x0800 {
				ips = append(ips, f.Data[14:])
			}
		}
	}
	if len(ips) == 0 {
		t.Fatal("no IPv4 packets")
	}
	one := append([]byte(nil), ips[0]...)
	for _, v := range []func(b []byte){
		func(b []byte) { b[6] = 0x20 },             // more fragments
		func(b []byte) { b[6], b[7] = 0x00, 0x10 }, // fragment offset
		func(b []byte) { b[9] = 99 },               // another protocol
		func(b []byte) { b[1], b[8] = 0xB8, 0 },    // DSCP, TTL 0
	} {
		b := append([]byte(nil), one...)
		v(b)
		ips = append(ips, b)
	}
	d, _ := NewDecoder(layers.LinkTypeRaw)
	checked := 0
	for _, b := range ips {
		if !plainIPv4(b) {
			continue
		}
		var want layers.IPv4
		if err := want.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
			t.Fatalf("gopacket: %v", err)
		}
		d.decodePlainIPv4(b)
		if got, w := fmt.Sprintf("%#v %v", d.ip4, d.ip4.NextLayerType()), fmt.Sprintf("%#v %v", want, want.NextLayerType()); got != w {
			t.Fatalf("shortcut\n%s\ngopacket\n%s", got, w)
		}
		checked++
	}
	if checked < 100 {
		t.Errorf("only %d plain headers checked", checked)
	}
}

// newMemPcapFile reads the records of a whole pcap file in memory, as
// read reads a chunk's (readMem).
func newMemPcapFile(mem []byte) (*pcapFile, error) {
	if len(mem) < pcapHeaderLen {
		return nil, shortRead(len(mem), io.EOF)
	}
	p := &pcapFile{mem: mem, pos: pcapHeaderLen}
	if err := p.header(mem[:pcapHeaderLen]); err != nil || !SupportedLinkType(p.linkType) {
		if err := p.lenient(err, mem[pcapHeaderLen:]); err != nil {
			return nil, err
		}
	}
	return p, nil
}
