package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestPcapFileAsPcapgo: the reader that replaced pcapgo's for classic
// pcap returns what pcapgo returns, frame for frame and error for error,
// on every bundled capture, on each cut at every offset of the first
// records, and with damaged record and file headers.
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
	for _, damage := range []func(b []byte){
		func(b []byte) { binary.LittleEndian.PutUint32(b[24+8:], 1<<30) },                    // caplen beyond snaplen
		func(b []byte) { binary.LittleEndian.PutUint32(b[24+12:], 10) },                      // caplen beyond len
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
		if got, want := readAll(t, b, false), readAll(t, b, true); got != want {
			t.Fatalf("input %d (%d bytes): pcapFile read\n%s\npcapgo read\n%s", i, len(b), got, want)
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
// pcapFile or by pcapgo.
func readAll(t *testing.T, b []byte, viaPcapgo bool) string {
	t.Helper()
	var out bytes.Buffer
	br := bufio.NewReaderSize(bytes.NewReader(b), 1<<18)
	var src interface {
		PacketSource
	}
	if viaPcapgo {
		r, err := pcapgo.NewReader(br)
		if err != nil {
			return "header: " + err.Error()
		}
		src = r
	} else {
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
