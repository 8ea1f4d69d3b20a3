package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestMendICRCOneByte changes every byte of a CDC and of a 1 KiB WRITE
// (IPv4) and of an IPv6 RoCE packet, each by several values: where the
// ICRC then fails, the mend names that byte and the value it had; where
// a variant field changed it does not fail. A packet whose ICRC holds is
// not mended.
func TestMendICRCOneByte(t *testing.T) {
	var c ICRC
	for _, tc := range []struct {
		file  string
		frame int
	}{{"pingpong.pcap", 23}, {"pingpong.pcap", 22}} {
		orig, _, _ := roceSplit(roceFrame(t, tc.file, tc.frame))
		orig = bytes.Clone(orig)
		if _, err := c.RoCEv2(orig); err != nil {
			t.Fatal(err)
		}
		mended := 0
		for off := range orig {
			for _, x := range []byte{0x01, 0x80, 0x5A, 0xFF} {
				ip := bytes.Clone(orig)
				ip[off] ^= x
				want, err := c.RoCEv2(ip)
				if err == nil {
					continue // a field the ICRC leaves out
				}
				got := binary.LittleEndian.Uint32(ip[len(ip)-icrcLen:])
				m, ok := MendICRCRoCEv2(ip, got, want)
				if icrcVariant(orig, 20, off) || off == 0 || off == 9 {
					// A length field: the packet read is not the one sent.
					if ok && m.Off != off {
						t.Errorf("%s frame %d: byte %d ^%#x mended at %d", tc.file, tc.frame, off, x, m.Off)
					}
					continue
				}
				if !ok || m.Off != off || m.Held != ip[off] || m.Sent != orig[off] {
					t.Errorf("%s frame %d: byte %d ^%#x: mend %+v %v, want offset %d sent %#x", tc.file, tc.frame, off, x, m, ok, off, orig[off])
				}
				mended++
			}
		}
		if mended < 3*len(orig) {
			t.Errorf("%s frame %d: %d changes mended of %d bytes", tc.file, tc.frame, mended, len(orig))
		}
		if _, ok := MendICRCRoCEv2(orig, binary.LittleEndian.Uint32(orig[len(orig)-icrcLen:]), 0); ok {
			t.Errorf("%s frame %d: a whole packet with a wrong computed ICRC mended", tc.file, tc.frame)
		}
	}
}

// TestMendICRCMoreBytes: packets changed in two or more bytes, or filled
// with 0xAA from a point on (editcap -E), are not read as one byte's
// change (bytes the ICRC leaves out aside).
func TestMendICRCMoreBytes(t *testing.T) {
	var c ICRC
	orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 23))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		ip := bytes.Clone(orig)
		if i%2 == 0 {
			for range 2 + r.IntN(3) {
				ip[20+r.IntN(len(ip)-20)] ^= byte(1 + r.IntN(255))
			}
		} else {
			for k := 28 + r.IntN(len(ip)-28); k < len(ip); k++ {
				ip[k] = 0xAA
			}
		}
		want, err := c.RoCEv2(ip)
		if err == nil {
			continue
		}
		m, ok := MendICRCRoCEv2(ip, binary.LittleEndian.Uint32(ip[len(ip)-icrcLen:]), want)
		if !ok {
			continue
		}
		// Right where the rest differs in fields the ICRC leaves out.
		ip[m.Off] = m.Sent
		for k := range ip {
			if ip[k] != orig[k] && !icrcVariant(orig, 20, k) {
				t.Errorf("variant %d: mended %+v, byte %d differs", i, m, k)
				break
			}
		}
	}
}

// FuzzMendICRC: any bytes, any two CRCs: no panic, and a mend names a
// byte of the packet.
func FuzzMendICRC(f *testing.F) {
	orig, _, _ := roceSplit(roceFrame(f, "pingpong.pcap", 23))
	f.Add(bytes.Clone(orig), uint32(1), uint32(2))
	f.Add([]byte{0x4f, 0, 0, 0xff}, uint32(0), uint32(1))
	f.Fuzz(func(t *testing.T, ip []byte, got, want uint32) {
		if m, ok := MendICRCRoCEv2(ip, got, want); ok && (m.Off < 0 || m.Off >= len(ip) || m.Held != ip[m.Off] || m.Held == m.Sent) {
			t.Fatalf("mend %+v of %d bytes", m, len(ip))
		}
	})
}

// TestMendICRCLong: a packet longer than mendAnyByte (a WRITE of 1 KiB)
// is mended where one bit changed, not where a whole byte did: the
// chance that damage of more bytes passes for one byte's grows with the
// length.
func TestMendICRCLong(t *testing.T) {
	var c ICRC
	orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 23))
	ip := make([]byte, 0, len(orig)+1024)
	ip = append(ip, orig[:len(orig)-icrcLen]...)
	for i := range 1024 {
		ip = append(ip, byte(i*7))
	}
	ip = append(ip, 0, 0, 0, 0)
	binary.BigEndian.PutUint16(ip[2:4], uint16(len(ip)))
	binary.BigEndian.PutUint16(ip[24:26], uint16(len(ip)-20))
	want, _ := c.RoCEv2(ip)
	binary.LittleEndian.PutUint32(ip[len(ip)-icrcLen:], want)
	for _, off := range []int{40, 500, len(ip) - 10, len(ip) - 2} {
		for _, x := range []byte{0x01, 0x40, 0x5A, 0xFF} {
			d := bytes.Clone(ip)
			d[off] ^= x
			w, err := c.RoCEv2(d)
			if err == nil {
				t.Fatalf("byte %d ^%#x: ICRC holds", off, x)
			}
			m, ok := MendICRCRoCEv2(d, binary.LittleEndian.Uint32(d[len(d)-icrcLen:]), w)
			if bit := x&(x-1) == 0; ok != bit || ok && (m.Off != off || m.Sent != ip[off]) {
				t.Errorf("byte %d ^%#x: mend %+v %v, want one only for a bit", off, x, m, ok)
			}
		}
	}
}

// TestMendICRCEveryPacket changes one byte of every RoCE packet under
// testdata (the public RoCE captures and the kernel's, all RoCEv2 over
// IPv4), at a place and by a value of its own: where the ICRC then
// fails, the mend names that byte and its value (a bit's change in a
// packet longer than mendAnyByte). A UDP length counts: the ICRC is
// framed by the IP length.
func TestMendICRCEveryPacket(t *testing.T) {
	var c ICRC
	r := rand.New(rand.NewPCG(7, 8))
	n := 0
	eachRoCEPacket(t, func(name string, frame int, orig, _ []byte) {
		ip := bytes.Clone(orig)
		off := r.IntN(len(ip))
		hdr := 40
		if ip[0]>>4 == 4 {
			hdr = int(ip[0]&0x0F) * 4
		}
		if off == 0 || icrcVariant(orig, hdr, off) {
			return // the IP version or a length: the framing, not a mend
		}
		x := byte(1 << r.IntN(8))
		if len(ip) <= mendAnyByte {
			x = byte(1 + r.IntN(255))
		}
		ip[off] ^= x
		want, err := c.RoCEv2(ip)
		if err == nil || !errors.Is(err, ErrBadICRC) {
			return // a field the ICRC leaves out
		}
		n++
		m, ok := MendICRCRoCEv2(ip, binary.LittleEndian.Uint32(ip[len(ip)-icrcLen:]), want)
		if !ok || m.Off != off || m.Sent != orig[off] {
			t.Errorf("%s frame %d: byte %d ^%#x: mend %+v %v", name, frame, off, x, m, ok)
		}
	})
	if n < 3000 {
		t.Errorf("%d packets mended, want the corpus's", n)
	}
}

// TestMendICRCAs: a packet whose PSN and DestQP were damaged in any
// number of bytes verifies with the key it was sent with (exact), and,
// with one byte more changed, names that byte; a wrong key, or more
// bytes changed besides, is not taken; nor is the key the packet holds.
func TestMendICRCAs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, frame := range []int{22, 23} { // a WRITE, a CDC
		orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", frame))
		const bth = 20 + 8
		k := ICRCKey{Src: bytes.Clone(orig[12:16]), Dst: bytes.Clone(orig[16:20]),
			QPN: uint32(orig[bth+5])<<16 | uint32(orig[bth+6])<<8 | uint32(orig[bth+7]),
			PSN: uint32(orig[bth+9])<<16 | uint32(orig[bth+10])<<8 | uint32(orig[bth+11])}
		if _, _, ok := MendICRCRoCEv2As(orig, k); ok {
			t.Errorf("frame %d: the key it holds taken", frame)
		}
		wrong := 0
		for i := range 4000 {
			ip := bytes.Clone(orig)
			for j := bth + 5; j < bth+12; j++ {
				if j != bth+8 {
					ip[j] = byte(r.IntN(256))
				}
			}
			copy(ip[12:], []byte{10, byte(r.IntN(256)), 0, byte(r.IntN(256))})
			more := -1
			switch i % 4 {
			case 1: // one byte more, after the BTH
				more = bth + 12 + r.IntN(len(ip)-bth-12)
				ip[more] ^= byte(1 + r.IntN(255))
			case 2: // two more, in two places
				a := bth + 12 + r.IntN(len(ip)-bth-13)
				ip[a] ^= byte(1 + r.IntN(255))
				ip[a+1+r.IntN(len(ip)-a-1)] ^= byte(1 + r.IntN(255))
			case 3: // a wrong PSN
				kk := k
				kk.PSN = (k.PSN + 1 + uint32(r.IntN(200))) & 0xFFFFFF
				if _, _, ok := MendICRCRoCEv2As(ip, kk); ok {
					wrong++
				}
				continue
			}
			m, exact, ok := MendICRCRoCEv2As(ip, k)
			switch {
			case bytes.Equal(ip[12:20], orig[12:20]) && bytes.Equal(ip[bth+5:bth+12], orig[bth+5:bth+12]) && more < 0:
				// The random key came out as sent: nothing to test.
			case i%4 == 0 && (!ok || !exact):
				t.Errorf("frame %d variant %d: key damaged only: %v %v", frame, i, exact, ok)
			case i%4 == 1 && (!ok || exact || m.Off != more || m.Held != ip[more] || m.Sent != orig[more]):
				t.Errorf("frame %d variant %d: byte %d: mend %+v %v %v, want sent %#x", frame, i, more, m, exact, ok, orig[more])
			case i%4 == 2 && ok:
				wrong++
			}
		}
		if wrong > 0 {
			t.Errorf("frame %d: %d packets taken with a wrong key or more bytes damaged", frame, wrong)
		}
	}
}

// TestMendICRCZeroed: a CDC (pingpong.pcap frame 23) with several of its
// reserved bytes damaged verifies with them zeroed (exact); with a byte
// outside them damaged too, that byte is named; with two outside, or
// with none of them nonzero, it is not mended.
func TestMendICRCZeroed(t *testing.T) {
	orig, _, _ := roceSplit(roceFrame(t, "pingpong.pcap", 23))
	orig = bytes.Clone(orig)
	const cdc = 20 + 8 + bthLen // the CDC message in the packet
	zero := [][2]int{{cdc + 8, cdc + 10}, {cdc + 16, cdc + 18}, {cdc + 26, cdc + 44}}
	if _, _, ok := MendICRCRoCEv2Zeroed(orig, zero); ok {
		t.Errorf("a whole packet, its reserved bytes zero, mended")
	}
	ip := bytes.Clone(orig)
	ip[cdc+9] ^= 0x40
	ip[cdc+30] ^= 0x6A
	ip[cdc+43] ^= 0xFF
	if m, exact, ok := MendICRCRoCEv2Zeroed(ip, zero); !ok || !exact {
		t.Errorf("reserved bytes damaged: mend %+v exact %v ok %v, want exact", m, exact, ok)
	}
	ip[cdc+4] ^= 0x01 // the token
	m, exact, ok := MendICRCRoCEv2Zeroed(ip, zero)
	if want := (ICRCMend{Off: cdc + 4, Held: ip[cdc+4], Sent: orig[cdc+4]}); !ok || exact || m != want {
		t.Errorf("the token damaged too: mend %+v exact %v ok %v, want %+v", m, exact, ok, want)
	}
	ip[cdc+2] ^= 0x10 // the sequence number
	if m, exact, ok := MendICRCRoCEv2Zeroed(ip, zero); ok {
		t.Errorf("two bytes damaged outside them: mend %+v exact %v", m, exact)
	}
}
