package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"slices"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// sums reads frames (Ethernet) and returns each frame's TCPSum and
// whether it read a CLC message.
func sums(t *testing.T, frames []rawFrame) ([]TCPSumStatus, []bool) {
	t.Helper()
	r, err := Open(writePcap(t, t.TempDir(), "sum.pcap", layers.LinkTypeEthernet, frames))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []TCPSumStatus
	var clc []bool
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, clc
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f.TCPSum)
		clc = append(clc, len(f.CLC) > 0)
	}
}

// tcpPayloadOff is the offset of the TCP payload of an Ethernet, IPv4,
// TCP frame.
func tcpPayloadOff(d []byte) int { return 14 + 20 + int(d[14+20+12]>>4)*4 }

// TestTCPSum: the segments of pingpong.pcap's SMC handshake verify; a
// CLC message with a bit flipped fails, is said to and is read all the
// same; a first segment of its direction (the SYN) or one whose checksum
// field holds what transmit offload leaves there is not judged.
func TestTCPSum(t *testing.T) {
	frames := readRaw(t, pingpong)
	got, _ := sums(t, frames)
	checked := 0
	for i, s := range got {
		if s.Checked {
			checked++
			if !s.OK {
				t.Errorf("frame %d: checksum %#04x, computed %#04x, in a capture the kernel made", i+1, s.Got, s.Want)
			}
		}
	}
	// SYN, SYN-ACK, Proposal, Accept, Confirm and the ACKs between them.
	if checked < 5 {
		t.Fatalf("%d segments checked, want the handshake's", checked)
	}

	const syn, accept = 5, 10 // pingpong.pcap's SYN and CLC Accept
	damaged := readRaw(t, pingpong)
	damaged[accept-1].Data[tcpPayloadOff(damaged[accept-1].Data)+8] ^= 1 // the Accept's peer ID
	damaged[syn-1].Data[14+20+4] ^= 1                                    // the SYN's sequence number
	got, clc := sums(t, damaged)
	if s := got[accept-1]; !s.Checked || s.OK || s.Got == s.Want {
		t.Errorf("the damaged Accept: %+v, want a checksum that fails", s)
	}
	if !clc[accept-1] {
		t.Error("the damaged Accept was not read: a capture edited by hand means what it holds")
	}
	if s := got[syn-1]; s.Checked {
		t.Errorf("the damaged SYN: %+v; the first segment of a direction is not judged", s)
	}

	// Transmit offload: the field holds the pseudo-header's sum.
	offload := readRaw(t, pingpong)
	d := offload[accept-1].Data
	ip, seg := d[14:], d[14+20:]
	pseudo := gopacket.ComputeChecksum(ip[12:20], uint32(layers.IPProtocolTCP)+uint32(len(seg)))
	binary.BigEndian.PutUint16(seg[16:18], ^gopacket.FoldChecksum(pseudo))
	got, _ = sums(t, offload)
	if s := got[accept-1]; s.Checked {
		t.Errorf("an offloaded checksum: %+v, want not judged", s)
	}
}

// TestTCPSumGRO: a segment longer than the MSS its receiver announced is
// a receiving host's GRO merge, whose checksum is the first segment's:
// not judged.
func TestTCPSumGRO(t *testing.T) {
	const accept = 10
	frames := readRaw(t, pingpong)
	d := frames[accept-1].Data
	// The client's SYN announced an MSS; the Accept, from the server, is
	// judged against it: announce one shorter than the Accept.
	syn := frames[4].Data
	opts := syn[14+20+20 : tcpPayloadOff(syn)]
	found := false
	for i := 0; i+1 < len(opts); {
		switch opts[i] {
		case 0:
			i = len(opts)
		case 1:
			i++
		default:
			if opts[i] == 2 && opts[i+1] == 4 {
				binary.BigEndian.PutUint16(opts[i+2:], uint16(len(d)-tcpPayloadOff(d)-1))
				found = true
			}
			i += int(opts[i+1])
		}
	}
	if !found {
		t.Fatal("pingpong.pcap's SYN has no MSS option")
	}
	d[tcpPayloadOff(d)+8] ^= 1
	got, _ := sums(t, frames)
	if s := got[accept-1]; s.Checked {
		t.Errorf("a damaged segment longer than the MSS: %+v, want not judged", s)
	}
}

// TestTCPIPSum: the IPv4 header's checksum of a handshake segment is
// checked apart from the TCP checksum, which leaves the TTL out: a TTL
// flipped fails it alone; 0 (not filled in) and a direction whose first
// segment failed too (a host's IP checksum offload) are not judged.
func TestTCPIPSum(t *testing.T) {
	const synAck, accept = 6, 10 // pingpong.pcap's SYN-ACK and CLC Accept, from the server
	got, _ := sums(t, readRaw(t, pingpong))
	for i, s := range got {
		if s.IPSumBad {
			t.Errorf("frame %d: IPv4 header checksum judged damaged in a capture the kernel made", i+1)
		}
	}

	ttl := readRaw(t, pingpong)
	ttl[accept-1].Data[14+8] ^= 1
	got, clc := sums(t, ttl)
	if s := got[accept-1]; !s.IPSumBad || !s.Checked || !s.OK || !s.Damaged() {
		t.Errorf("the Accept's TTL flipped: %+v, want its IPv4 header checksum alone to fail", s)
	}
	if !clc[accept-1] {
		t.Error("the Accept was not read: a capture edited by hand means what it holds")
	}

	unfilled := readRaw(t, pingpong)
	unfilled[accept-1].Data[14+10], unfilled[accept-1].Data[14+11] = 0, 0
	if got, _ := sums(t, unfilled); got[accept-1].IPSumBad {
		t.Errorf("a checksum of 0: %+v, want not judged", got[accept-1])
	}

	offload := readRaw(t, pingpong)
	server := offload[synAck-1].Data[14+12 : 14+16]
	for _, f := range offload {
		if d := f.Data; len(d) > 14+20 && d[14+9] == byte(layers.IPProtocolTCP) && string(d[14+12:14+16]) == string(server) {
			d[14+10] ^= 0x5a
		}
	}
	if got, _ := sums(t, offload); got[synAck-1].IPSumBad || got[accept-1].IPSumBad {
		t.Errorf("every IPv4 checksum of the direction fails (offload): SYN-ACK %+v, Accept %+v, want not judged", got[synAck-1], got[accept-1])
	}
}

// TestIPv4SumAs: pingpong.pcap's SYN-ACK with its source address and
// its window damaged: its TCP checksum fails whichever addresses; its
// IPv4 header's verifies with the addresses sent, not with those held,
// and an undamaged header's with no others.
func TestIPv4SumAs(t *testing.T) {
	const synAck = 6
	frames := readRaw(t, pingpong)
	d := frames[synAck-1].Data
	src, dst := netip.AddrFrom4([4]byte(d[14+12:14+16])), netip.AddrFrom4([4]byte(d[14+16:14+20]))
	if f := frameOf(t, frames, synAck); f.IPv4SumAs(src, dst) || f.IPv4SumAs(dst, src) {
		t.Error("undamaged SYN-ACK: its header verifies as held, yet IPv4SumAs")
	}
	d[14+14] ^= 0x04    // the source address's third byte
	d[14+20+14] ^= 0x04 // the TCP window
	f := frameOf(t, frames, synAck)
	held := netip.AddrFrom4([4]byte(d[14+12 : 14+16]))
	if !f.IPv4SumAs(src, dst) {
		t.Errorf("source %v held for %v: IPv4SumAs the addresses sent = false", held, src)
	}
	if f.IPv4SumAs(held, dst) {
		t.Error("IPv4SumAs the addresses held = true")
	}
	if f.TCPSumAs(netip.AddrPortFrom(src, uint16(f.TCP.SrcPort)), netip.AddrPortFrom(dst, uint16(f.TCP.DstPort))) {
		t.Error("TCPSumAs the addresses sent = true, with the window damaged too")
	}
}

// TestSumWithoutReceiverSYN: a handshake followed from its SYN-ACK (the
// capture lacks the client's SYN, or damaged it past reading as SMC's),
// so the server's MSS is the only one known: the client's Proposal and
// Confirm, held damaged, are judged against the 536 bytes a sender
// assumes without an MSS option (no GRO merge is that short) and the
// server's Accept against the server's MSS, once a segment of the
// connection verified; undamaged, they verify.
func TestSumWithoutReceiverSYN(t *testing.T) {
	all := readRaw(t, "../samples/pingpong.pcap")
	syn := slices.IndexFunc(all, func(p rawFrame) bool {
		return len(p.Data) > 54 && p.Data[23] == 6 && p.Data[14+20+13] == 0x02
	})
	if syn < 0 {
		t.Fatal("no SYN")
	}
	for _, damaged := range []bool{false, true} {
		fs := slices.Delete(slices.Clone(all), syn, syn+1)
		var clc []int // frames with payload after the SYN-ACK: the CLC messages
		for i, p := range fs {
			if d := p.Data; len(d) > 66 && d[23] == 6 && d[14+20+13]&0x02 == 0 && len(clc) < 3 {
				clc = append(clc, i)
				if damaged {
					d = bytes.Clone(d)
					d[len(d)-20] ^= 0x01
					fs[i].Data = d
				}
			}
		}
		if len(clc) != 3 {
			t.Fatalf("%d CLC segments", len(clc))
		}
		r, err := NewReader("nosyn", &sliceSource{frames: fs}, layers.LinkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			f, err := r.Next()
			if err != nil {
				break
			}
			if !slices.Contains(clc, i) {
				continue
			}
			if s := f.TCPSum; !s.Checked || s.OK == damaged {
				t.Errorf("damaged %v: frame %d: TCP checksum %+v, want checked, OK %v", damaged, f.Number, s, !damaged)
			}
		}
	}
}

// TestTCPSumAfterHandshake: the checksums of a connection followed as
// SMC from its SYN are judged after its handshake too (its FINs and
// ACKs, a fallback's data): pingpong.pcap's closing segments verify, the
// client's FIN with a byte of its window damaged fails, and one with its
// flags damaged to a SYN fails and ends nothing (the server's FIN after
// it is judged still).
func TestTCPSumAfterHandshake(t *testing.T) {
	frames := readRaw(t, pingpong)
	var fins []int
	for i, f := range frames {
		if d := f.Data; len(d) >= 14+20+20 && d[14+9] == byte(layers.IPProtocolTCP) && d[14+20+13]&0x01 != 0 {
			fins = append(fins, i)
		}
	}
	if len(fins) != 2 {
		t.Fatalf("pingpong.pcap: %d FINs, want 2", len(fins))
	}
	client, server := fins[0], fins[1]
	got, _ := sums(t, frames)
	for i := client; i < len(got); i++ {
		if s := got[i]; frames[i].Data[14+9] == byte(layers.IPProtocolTCP) && (!s.Checked || !s.OK) {
			t.Errorf("frame %d, after the handshake: %+v, want judged and verifying", i+1, s)
		}
	}
	for _, damage := range []struct {
		name string
		fn   func(d []byte)
	}{
		{"window", func(d []byte) { d[14+20+14] ^= 0x10 }},
		{"flags to a SYN", func(d []byte) { d[14+20+13] = 0x02 }},
	} {
		fs := readRaw(t, pingpong)
		damage.fn(fs[client].Data)
		got, _ := sums(t, fs)
		if s := got[client]; !s.Checked || s.OK {
			t.Errorf("the client's FIN, its %s damaged: %+v, want judged and failing", damage.name, s)
		}
		if s := got[server]; !s.Checked || !s.OK {
			t.Errorf("the server's FIN after the client's with its %s damaged: %+v, want judged and verifying", damage.name, s)
		}
	}
}

// TestWordSum: wordSum folds to gopacket.ComputeChecksum's checksum for
// every length up to 3000 bytes, carries included.
func TestWordSum(t *testing.T) {
	b := make([]byte, 3000)
	for i := range b {
		b[i] = byte(i*7 + i>>3)
	}
	ff := bytes.Repeat([]byte{0xff}, 3000)
	for _, data := range [][]byte{b, ff} {
		for n := range len(data) + 1 {
			for _, init := range []uint32{0, 0xffff, 0xfffffff0} {
				if got, want := gopacket.FoldChecksum(wordSum(data[:n], init)), gopacket.FoldChecksum(gopacket.ComputeChecksum(data[:n], init)); got != want {
					t.Fatalf("%d bytes, initial %#x: %#04x, want %#04x", n, init, got, want)
				}
			}
		}
	}
}

// TestIPSumJudgedBySender: a copy of pingpong's Accept whose destination
// address and port the capture damaged names a flow no segment began; its
// IPv4 header checksum failing is damage all the same, the server's
// headers (its SYN-ACK's) having verified. Not where its Ethernet source
// is damaged too: a sender whose headers were never seen verifying may
// leave them to its adapter.
func TestIPSumJudgedBySender(t *testing.T) {
	const accept = 9 // frame 10
	for _, v := range []struct {
		mac  bool
		want bool
	}{{false, true}, {true, false}} {
		fs := readRaw(t, pingpong)
		fs[accept].Data = bytes.Clone(fs[accept].Data)
		fs[accept].Data[14+19] ^= 0x40 // the destination address's last byte
		fs[accept].Data[34+3] ^= 0x20  // the destination port's low byte
		if v.mac {
			fs[accept].Data[6+5] ^= 0x01 // the Ethernet source's last byte
		}
		if f := frameOf(t, fs, accept+1); f != nil && f.TCPSum.IPSumBad != v.want {
			t.Errorf("source damaged %v: IPSumBad %v, want %v", v.mac, f.TCPSum.IPSumBad, v.want)
		}
	}
}

// TestSMCOptionMended: pingpong.pcap's SYN-ACK (frame 6) with the length
// of its timestamps option damaged (the list ends there, before the SMC
// option), or the SMC option's kind and length overwritten, verifies its
// checksum with that mended: its other bytes are the sender's. With its
// sequence number damaged too, or alone (its option found), or whole, it
// is not mended.
func TestSMCOptionMended(t *testing.T) {
	const opts = 14 + 20 + 20 // the SYN-ACK's TCP options
	whole := readRaw(t, pingpong)[5].Data
	for _, tc := range []struct {
		name    string
		damage  func(d []byte)
		damaged bool // SMCOptionDamaged
		mended  bool
	}{
		{"whole", func([]byte) {}, false, false},
		{"timestamps length", func(d []byte) { d[opts+7] ^= 0x40 }, true, true},
		{"SMC option kind and length", func(d []byte) { d[opts+22], d[opts+23] = 0x25, 0x00 }, true, true},
		{"timestamps length and sequence number", func(d []byte) { d[opts+7] ^= 0x40; d[14+20+7] ^= 0x01 }, true, false},
		{"sequence number", func(d []byte) { d[14+20+7] ^= 0x01 }, false, false},
	} {
		d := bytes.Clone(whole)
		tc.damage(d)
		f := decodeOne(t, d)
		if got := f.SMCOptionDamaged(); got != tc.damaged {
			t.Errorf("%s: SMCOptionDamaged %v, want %v", tc.name, got, tc.damaged)
		}
		if got := f.SMCOptionMended(); got != tc.mended {
			t.Errorf("%s: SMCOptionMended %v, want %v", tc.name, got, tc.mended)
		}
	}
}

// TestSYNFlagsMended: fallback-nosmc.pcap's SYN (frame 5, the SMC option
// and the MSS among its options) with its flags byte damaged in the
// capture's copy to FIN|RST: alone, the checksums' difference gives the
// byte sent; with the window's byte damaged too, its options say a SYN.
// Either way it is read as the SYN sent (its SMC option found), with a
// note. With its checksum made for the flags held (the sender's), and a
// segment with no option a SYN alone carries, nothing is mended.
func TestSYNFlagsMended(t *testing.T) {
	fs, _ := testutil.ReadFrames(t, testutil.Root(t)+"/testdata/reference/fallback-nosmc.pcap")
	const flags = 14 + 20 + 13
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	decodeAs := func(data []byte) *Frame {
		f := &Frame{Data: data}
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		d.decode(f, true)
		return f
	}
	mended := func(f *Frame) bool {
		return slices.ContainsFunc(f.CLCErr, func(e error) bool { return errors.Is(e, ErrTCPFlagsMended) })
	}
	for _, c := range []struct {
		name   string
		frame  int
		damage map[int]byte
		fix    bool // checksum made for the bytes held
		want   bool
	}{
		{"flags alone", 5, map[int]byte{flags: 0x27}, false, true},
		{"flags and window", 5, map[int]byte{flags: 0x27, flags + 1: 0xfa}, false, true},
		{"flags, checksum the sender's", 5, map[int]byte{flags: 0x27}, true, false},
		{"an ACK's flags", 7, map[int]byte{flags: 0x13}, false, false},
	} {
		data := slices.Clone(fs[c.frame-1].Data)
		for off, mask := range c.damage {
			data[off] ^= mask
		}
		if c.fix {
			s, _ := tcpSum(decodeAs(slices.Clone(data)))
			binary.BigEndian.PutUint16(data[14+20+16:], s.Want)
		}
		f := decodeAs(data)
		if got := mended(f) && f.TCP.SYN && !f.TCP.FIN && !f.TCP.RST && f.SMCOption; got != c.want || mended(f) != c.want {
			t.Errorf("%s: mended %v, SYN %v FIN %v RST %v, SMC option %v; want mended %v", c.name, mended(f), f.TCP.SYN, f.TCP.FIN, f.TCP.RST, f.SMCOption, c.want)
		}
	}
}
