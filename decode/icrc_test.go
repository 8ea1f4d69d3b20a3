package decode

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// TestICRCEveryPacket verifies the ICRC of every RoCE packet under
// testdata; the corpus notes (testdata/public/SOURCES.md) and §5.5 say
// every one is correct.
func TestICRCEveryPacket(t *testing.T) {
	total := 0
	eachRoCEPacket(t, func(name string, frame int, ip, bth []byte) {
		total++
		got, err := ICRCRoCEv2(ip)
		if err != nil {
			t.Errorf("%s frame %d: %v", name, frame, err)
			return
		}
		var b BTH
		if err := b.DecodeFromBytes(bth, &roceFeedback{}); err != nil {
			t.Fatalf("%s frame %d: %v", name, frame, err)
		}
		if b.ICRC != got {
			t.Errorf("%s frame %d: BTH.ICRC %#x, computed %#x", name, frame, b.ICRC, got)
		}
	})
	if total != 4123+199+1653 { // as TestWholeCaptures counts them
		t.Errorf("checked %d packets, want %d", total, 4123+199+1653)
	}
}

// TestICRCWorkedExample is §11.14: pingpong.pcap frame 23 ends in
// 28 58 e0 29 = CRC 0x29E05828.
func TestICRCWorkedExample(t *testing.T) {
	ip, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 23))
	got, err := ICRCRoCEv2(ip)
	if err != nil || got != 0x29E05828 {
		t.Fatalf("ICRC %#x, %v; want 0x29e05828", got, err)
	}
}

// TestICRCMasking flips bytes of a real packet: a variant field (TOS, TTL,
// IP checksum, UDP checksum, FECN/BECN byte) must not change the ICRC,
// anything else must.
func TestICRCMasking(t *testing.T) {
	orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 22))
	variant := map[int]bool{1: true, 8: true, 10: true, 11: true, 26: true, 27: true, 28 + 4: true}
	for i := range len(orig) - 4 {
		if i == 2 || i == 3 || i == 0 || i == 24 || i == 25 {
			continue // IP total length, version/IHL, UDP length: change the framing, tested below
		}
		ip := append([]byte(nil), orig...)
		ip[i] ^= 0x01
		_, err := ICRCRoCEv2(ip)
		if variant[i] {
			if err != nil {
				t.Errorf("flip at %d (variant field): %v", i, err)
			}
		} else if !errors.Is(err, ErrBadICRC) {
			t.Errorf("flip at %d: err %v, want ErrBadICRC", i, err)
		}
	}
	// A flipped ICRC byte is reported with the offset of the trailer.
	ip := append([]byte(nil), orig...)
	ip[len(ip)-1] ^= 0x80
	_, err := ICRCRoCEv2(ip)
	var de *Error
	if !errors.As(err, &de) || !errors.Is(err, ErrBadICRC) || de.Offset != len(ip)-4 {
		t.Errorf("flipped trailer: %v", err)
	}
}

// TestICRCFraming covers lengths that do not describe a RoCE packet.
func TestICRCFraming(t *testing.T) {
	orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 24))
	// Ethernet padding after the IP packet is ignored.
	padded := append(append([]byte(nil), orig...), 0, 0, 0, 0, 0, 0)
	if _, err := ICRCRoCEv2(padded); err != nil {
		t.Errorf("padded: %v", err)
	}
	for n := range len(orig) {
		if _, err := ICRCRoCEv2(orig[:n]); err == nil {
			t.Errorf("cut to %d bytes: no error", n)
		}
	}
	bad := append([]byte(nil), orig...)
	bad[0] = 0x55
	if _, err := ICRCRoCEv2(bad); !errors.Is(err, ErrUnknownType) {
		t.Errorf("IP version 5: %v", err)
	}
	bad[0] = 0x44
	if _, err := ICRCRoCEv2(bad); !errors.Is(err, ErrBadLength) {
		t.Errorf("IHL 4: %v", err)
	}
}

// TestICRCRoCEv1 uses the hwipl RoCEv1 packet, whose ICRC the source
// zero-filled: the check must fail with the computed value in hand, and
// the masked GRH fields (traffic class, flow label, hop limit) and the
// BTH FECN/BECN byte must not change that value.
func TestICRCRoCEv1(t *testing.T) {
	p := roceV1Packet(t)
	want, err := ICRCRoCEv1(p)
	if !errors.Is(err, ErrBadICRC) {
		t.Fatalf("zero ICRC: %v", err)
	}
	for _, off := range []int{0, 1, 2, 3, 7, 40 + 4} {
		q := append([]byte(nil), p...)
		q[off] ^= 0x0F
		if off == 0 {
			q[off] ^= 0x0F ^ 0x03 // keep the version nibble
		}
		if got, _ := ICRCRoCEv1(q); got != want {
			t.Errorf("flip at %d changed the ICRC: %#x vs %#x", off, got, want)
		}
	}
	// With the computed value written as the trailer, it verifies.
	q := append([]byte(nil), p...)
	q[len(q)-4], q[len(q)-3], q[len(q)-2], q[len(q)-1] = byte(want), byte(want>>8), byte(want>>16), byte(want>>24)
	if _, err := ICRCRoCEv1(q); err != nil {
		t.Errorf("with trailer: %v", err)
	}
	q[20] ^= 1 // SGID
	if _, err := ICRCRoCEv1(q); !errors.Is(err, ErrBadICRC) {
		t.Errorf("SGID flip: %v", err)
	}
	for n := range len(p) {
		if _, err := ICRCRoCEv1(p[:n]); err == nil || errors.Is(err, ErrBadICRC) {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
}

func TestICRCDoesNotMalloc(t *testing.T) {
	ip, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 18))
	var c ICRC
	if n := testing.AllocsPerRun(200, func() {
		if _, err := c.RoCEv2(ip); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("ICRCRoCEv2: %v allocations", n)
	}
	p := roceV1Packet(t)
	want, _ := ICRCRoCEv1(p)
	p[len(p)-4], p[len(p)-3], p[len(p)-2], p[len(p)-1] = byte(want), byte(want>>8), byte(want>>16), byte(want>>24)
	if n := testing.AllocsPerRun(200, func() { _, _ = c.RoCEv1(p) }); n != 0 {
		t.Errorf("ICRCRoCEv1: %v allocations", n)
	}
}

func BenchmarkICRCRoCEv2(b *testing.B) {
	for _, c := range []struct {
		name  string
		frame int
	}{{"CDC", 23}, {"ACK", 24}, {"ADD_LINK_88B", 18}} {
		ip, _, _ := roceSplit(roceFrame(b, "pingpong.pcap", c.frame))
		benchICRC(b, c.name, ip)
	}
	// A 1 KiB WRITE, longer than the scratch buffer (two passes).
	ip, _, _ := roceSplit(roceFrame(b, "pingpong.pcap", 23))
	big := append(append([]byte(nil), ip[:len(ip)-icrcLen]...), make([]byte, 1021+icrcLen)...)
	binary.BigEndian.PutUint16(big[2:4], uint16(len(big)))
	binary.BigEndian.PutUint16(big[24:26], uint16(len(big)-20))
	want, _ := ICRCRoCEv2(big)
	binary.LittleEndian.PutUint32(big[len(big)-icrcLen:], want)
	benchICRC(b, "1KiB", big)
}

func benchICRC(b *testing.B, name string, ip []byte) {
	b.Run(name, func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(ip)))
		var c ICRC
		for b.Loop() {
			_, _ = c.RoCEv2(ip)
		}
	})
}

// TestICRCSizes checks the one-pass CRC against a plain masked copy of the
// whole packet for RoCEv2 packets on both sides of the scratch buffer's
// size (above it the body is a second pass over the frame itself).
func TestICRCSizes(t *testing.T) {
	ip0, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 23)) // an IPv4 CDC
	var c ICRC
	extras := []int{0, 1, 63, 400, icrcScratch - 100, icrcScratch, icrcScratch + 1, 4096}
	for r := range 32 { // every length modulo 16 in the two-pass case
		extras = append(extras, icrcScratch+2+r, 1000+r)
	}
	for _, extra := range extras {
		ip := make([]byte, 0, len(ip0)+extra)
		ip = append(ip, ip0[:len(ip0)-icrcLen]...)
		for i := 0; i < extra; i++ {
			ip = append(ip, byte(i*7))
		}
		ip = append(ip, 0, 0, 0, 0)
		binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
		binary.BigEndian.PutUint16(ip[24:26], uint16(len(ip)-20))
		// The reference: ones for the LRH, then the packet with every
		// variant field set to ones (IBTA annex A17.3.3).
		m := append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ip[:len(ip)-icrcLen]...)
		m[8+1], m[8+8], m[8+10], m[8+11] = 0xFF, 0xFF, 0xFF, 0xFF
		m[8+26], m[8+27] = 0xFF, 0xFF
		m[8+28+4] = 0xFF
		want := crc32.ChecksumIEEE(m)
		binary.LittleEndian.PutUint32(ip[len(ip)-icrcLen:], want)
		got, err := c.RoCEv2(ip)
		if err != nil || got != want {
			t.Errorf("%d bytes more: got 0x%08x, %v; want 0x%08x", extra, got, err, want)
		}
	}
}
