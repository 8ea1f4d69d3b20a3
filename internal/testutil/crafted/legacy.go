package crafted

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
)

// LegacyVector is a lab capture with one message put in the shape an
// older kernel sent it (Kernel says which), or in a shape no kernel
// accepts after which the connection went on: Build writes it into
// t.TempDir() and returns its path.
type LegacyVector struct {
	Name   string
	Kernel string // the kernels that sent this shape
	Build  func(t testing.TB) string
}

// Frames of decline-nordma.pcap (Linux 6.12: the server has no RoCE
// device and declines the client's v2 Proposal; the connection then
// carries its data over TCP).
const (
	dnProposal = 8  // CLC Proposal v2, client -> server
	dnDecline  = 10 // CLC Decline v2, 44 bytes, server -> client
)

// Frames of pingpong.pcap.
const (
	ppDeleteLinkReq = 4122 // LLC DELETE_LINK_V2 request ALL, reason 0x00020000
)

// LegacyVectors are the crafted captures of issue 28, point 9.
var LegacyVectors = []LegacyVector{
	{"decline-v2-28", "Linux 5.10 to 5.15", func(t testing.TB) string {
		// The 44-byte v2 Decline as those kernels sent it: the same
		// header version 2 and os_type in byte 20, on the 28-byte struct
		// smc_clc_msg_decline (no peer_diagnosis_v2[]; trailer at 24).
		fs := declineNordma(t)
		resizeCLC(t, fs, dnDecline, func(m []byte) []byte {
			out := append([]byte(nil), m[:24]...)
			out = append(out, m[len(m)-4:]...)
			binary.BigEndian.PutUint16(out[5:], uint16(len(out)))
			return out
		})
		return write(t, "decline-v2-28", fs)
	}},
	{"decline-malformed", "none: a 32-byte v2 Decline no kernel sends or accepts", func(t testing.TB) string {
		// A v2 Decline of 32 bytes: refused by every kernel, yet its
		// sender fell back and the data that follows says the other side
		// did too.
		fs := declineNordma(t)
		resizeCLC(t, fs, dnDecline, func(m []byte) []byte {
			out := append([]byte(nil), m[:28]...)
			out = append(out, m[len(m)-4:]...)
			binary.BigEndian.PutUint16(out[5:], uint16(len(out)))
			return out
		})
		return write(t, "decline-malformed", fs)
	}},
	{"proposal-v1-smcd", "Linux 4.19 to 5.9 on a host with an ISM device", func(t testing.TB) string {
		// The client offers SMC-D v1 only, as smc_clc_send_proposal of
		// those kernels wrote it: no SMC-R part (struct smc_clc_msg_local
		// zero), iparea_offset 40 for the struct smc_clc_msg_smcd of the
		// time (the ISM GID and 32 zero bytes: res[32]), the IPv4 prefix
		// area; the server, without an ISM device, declines in the v1
		// 28-byte Decline with SMC_CLC_DECL_NOSMCDDEV.
		fs := declineNordma(t)
		resizeCLC(t, fs, dnProposal, func(m []byte) []byte {
			p := make([]byte, 92)
			copy(p, m[:5])                                    // eyecatcher, type 1
			binary.BigEndian.PutUint16(p[5:], uint16(len(p))) // length
			p[7] = 0x10 | byte(decode.SMCTypeD)               // version 1, SMC-D
			binary.BigEndian.PutUint16(p[38:], 40)            // iparea_offset
			binary.BigEndian.PutUint64(p[40:], 0x0123456789abcdef)
			copy(p[80:], []byte{10, 10, 0, 0, 24}) // 10.10.0.0/24, no IPv6
			copy(p[88:], m[:4])                    // trailer
			return p
		})
		resizeCLC(t, fs, dnDecline, func(m []byte) []byte {
			d := append([]byte(nil), m[:28]...)
			binary.BigEndian.PutUint16(d[5:], 28)
			d[7] = 0x10 | byte(decode.SMCTypeD)
			clear(d[8:16])
			binary.BigEndian.PutUint32(d[16:], uint32(decode.DeclineNoSMCDDev))
			clear(d[20:24])
			copy(d[24:], m[len(m)-4:])
			return d
		})
		return write(t, "proposal-v1-smcd", fs)
	}},
	{"delete-link-reason0", "Linux up to 5.7 (smc_llc_prep_delete_link set no reason)", func(t testing.TB) string {
		// The link group's DELETE_LINK request with reason 0; the rest
		// is the lab's 6.12 capture.
		fs := pingpong(t)
		m := smcMsg(t, fs, ppDeleteLinkReq, byte(decode.LLCDeleteLinkV2))
		binary.BigEndian.PutUint32(m[5:], 0)
		FixICRC(t, fs[ppDeleteLinkReq-1].Data)
		return write(t, "delete-link-reason0", fs)
	}},
}

func declineNordma(t testing.TB) []testutil.Packet {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, filepath.Join(testutil.Root(t), "testdata", "reference", "decline-nordma.pcap"))
	return fs
}

// resizeCLC replaces the TCP payload of frame n (Ethernet, IPv4 without
// options) by what fn makes of it, and keeps the connection whole: the IP
// length and checksum, the TCP checksum, the sequence numbers of the
// sender's later segments and the acknowledgements of the peer's.
func resizeCLC(t testing.TB, fs []testutil.Packet, n int, fn func(m []byte) []byte) {
	t.Helper()
	const ipOff = 14
	d := fs[n-1].Data
	ip := d[ipOff:]
	tcpOff := ipOff + int(ip[0]&0x0f)*4
	hdr := tcpOff + int(d[tcpOff+12]>>4)*4
	old := d[hdr:]
	m := fn(append([]byte(nil), old...))
	delta := uint32(len(m) - len(old))
	nd := append(append([]byte(nil), d[:hdr]...), m...)
	binary.BigEndian.PutUint16(nd[ipOff+2:], uint16(len(nd)-ipOff))
	fs[n-1].Data = nd
	fs[n-1].CI.CaptureLength, fs[n-1].CI.Length = len(nd), len(nd)
	FixIPv4TCP(nd)
	src, dst := string(d[ipOff+12:ipOff+16])+string(d[tcpOff:tcpOff+2]), string(d[ipOff+16:ipOff+20])+string(d[tcpOff+2:tcpOff+4])
	for i := n; i < len(fs); i++ {
		f := fs[i].Data
		if len(f) < ipOff+20 || f[ipOff+9] != 6 { // IPv4 protocol TCP
			continue
		}
		to := ipOff + int(f[ipOff]&0x0f)*4
		s := string(f[ipOff+12:ipOff+16]) + string(f[to:to+2])
		r := string(f[ipOff+16:ipOff+20]) + string(f[to+2:to+4])
		switch {
		case s == src && r == dst:
			binary.BigEndian.PutUint32(f[to+4:], binary.BigEndian.Uint32(f[to+4:])+delta)
		case s == dst && r == src:
			binary.BigEndian.PutUint32(f[to+8:], binary.BigEndian.Uint32(f[to+8:])+delta)
		default:
			continue
		}
		FixIPv4TCP(f)
	}
}

// FixIPv4TCP recomputes the IPv4 header and TCP checksums of an Ethernet
// frame.
func FixIPv4TCP(d []byte) {
	const ipOff = 14
	ip := d[ipOff:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^csum(0, ip[:ihl]))
	seg := ip[ihl:total]
	seg[16], seg[17] = 0, 0
	var pseudo [12]byte
	copy(pseudo[:8], ip[12:20])
	pseudo[9] = 6
	binary.BigEndian.PutUint16(pseudo[10:], uint16(len(seg)))
	binary.BigEndian.PutUint16(seg[16:], ^csum(csum(0, pseudo[:]), seg))
}

// csum adds b to the ones' complement sum s (RFC 1071).
func csum(s uint16, b []byte) uint16 {
	sum := uint32(s)
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}
