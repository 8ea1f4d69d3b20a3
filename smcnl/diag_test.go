package smcnl

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/netlink/nltest"
)

// The sock_diag cases below carry the kernel's own values for the pingpong
// and decline-nordma connections (testdata/reference/*.client.log, Linux
// 6.12 guests): addresses, ports, mode, token, buffer sizes, cursors, link,
// GIDs and fallback codes. Cookie, UID and inode are not in the logs and are
// chosen to be distinguishable. Layouts: struct smc_diag_msg and its attributes
// (include/uapi/linux/smc_diag.h), host order
// (the hex below is x86 little-endian).

// mustHex decodes hex fixtures; on each line, the first word that is not
// hex starts a comment.
func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	var words []string
	for _, line := range strings.Split(s, "\n") {
		for _, w := range strings.Fields(line) {
			if _, err := hex.DecodeString(w); err != nil {
				break
			}
			words = append(words, w)
		}
	}
	b, err := hex.DecodeString(strings.Join(words, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func skipBigEndian(t testing.TB) {
	t.Helper()
	if !isLittle() {
		t.Skip("fixtures are x86 host-order bytes")
	}
}

// pingpongClientMsg: smc_diag_msg of the pingpong client,
// "10.10.0.2:49018 -> 10.10.0.1:5000 ESTABLISHED mode=SMCR".
const pingpongClientMsg = `
2b 01 00 00                                      family AF_SMC, state ACTIVE, mode SMCR, shutdown 0
bf 7a 13 88                                      sport 49018, dport 5000 (big-endian)
0a 0a 00 02 00000000 00000000 00000000           src 10.10.0.2
0a 0a 00 01 00000000 00000000 00000000           dst 10.10.0.1
00 00 00 00                                      interface
2a 00 00 00 01 00 00 00                          cookie words (low, high)
e8 03 00 00                                      uid 1000
39 30 00 00 00 00 00 00                          inode 12345
`

// pingpongClientConnInfo: smc_diag_conninfo at DIAG-END, "token=0x1
// sndbuf=65536 rmbe=65536 peer_rmbe=65536 rx_prod=0/32640 rx_cons=0/32664
// tx_prod=0/32664 tx_cons=0/32640"; tx_prep/sent/fin (not logged) equal
// tx_prod as after the last write completed, tx_fin with wrap 3 so a
// reserved/wrap mix-up shows.
const pingpongClientConnInfo = `
01 00 00 00  00 00 01 00  00 00 01 00  00 00 01 00     token, sndbuf, rmbe, peer_rmbe
0000 0000 807f0000                                      rx_prod 0/32640
0000 0000 987f0000                                      rx_cons 0/32664
0000 0000 987f0000                                      tx_prod 0/32664
0000 0000 807f0000                                      tx_cons 0/32640
00 00 00 00                                             flags
0000 0000 987f0000                                      tx_prep
0000 0000 987f0000                                      tx_sent
0000 0300 987f0000                                      tx_fin, wrap 3
`

// lgrInfo lays out struct smc_diag_lgrinfo (147 bytes).
func lgrInfo(linkID uint8, ibname string, port uint8, gid, peer string, role uint8) []byte {
	b := make([]byte, smcDiagLGRInfoLen)
	b[0] = linkID
	copy(b[1:65], ibname)
	b[65] = port
	copy(b[66:106], gid)
	copy(b[106:146], peer)
	b[146] = role
	return b
}

const (
	gidClient = "0000:0000:0000:0000:0000:ffff:0a0a:0002"
	gidServer = "0000:0000:0000:0000:0000:ffff:0a0a:0001"
)

func pingpongClientSocket(t testing.TB) []byte {
	b := mustHex(t, pingpongClientMsg)
	return append(b, nltest.MustMarshalAttributes([]netlink.Attribute{
		{Type: diagShutdown, Data: []byte{0}},
		{Type: diagFallback, Data: make([]byte, 8)},
		{Type: diagConnInfo, Data: mustHex(t, pingpongClientConnInfo)},
		{Type: diagLGRInfo, Data: lgrInfo(1, "rxe0", 1, gidClient, gidServer, 0)},
	})...)
}

// declineClientSocket: decline-nordma client, "10.10.0.2:55036 ->
// 10.10.0.1:5000 mode=TCP-FALLBACK fallback=0x05000000(PEERDECL)
// peer_diag=0x03030002(NOSMCRDEV)"; no token, so no CONNINFO or LGRINFO.
func declineClientSocket(t testing.TB) []byte {
	b := mustHex(t, `2b 01 01 00  d6 fc 13 88
		0a0a0002 00000000 00000000 00000000  0a0a0001 00000000 00000000 00000000
		00000000  00000000 00000000  00000000  0100000000000000`)
	return append(b, nltest.MustMarshalAttributes([]netlink.Attribute{
		{Type: diagShutdown, Data: []byte{0}},
		{Type: diagFallback, Data: mustHex(t, "00000005 02000303")},
	})...)
}

func TestParseSocket(t *testing.T) {
	skipBigEndian(t)
	tests := []struct {
		name string
		b    []byte
		want Socket
	}{
		{
			name: "pingpong client SMCR",
			b:    pingpongClientSocket(t),
			want: Socket{
				Family: afSMC, State: StateActive, Mode: ModeSMCR,
				Src:    netip.MustParseAddrPort("10.10.0.2:49018"),
				Dst:    netip.MustParseAddrPort("10.10.0.1:5000"),
				Cookie: 0x1_0000_002a, UID: 1000, Inode: 12345,
				Conn: &ConnInfo{
					Token: 1, SndBufSize: 65536, RMBESize: 65536, PeerRMBESize: 65536,
					RxProd: Cursor{0, 32640}, RxCons: Cursor{0, 32664},
					TxProd: Cursor{0, 32664}, TxCons: Cursor{0, 32640},
					TxPrep: Cursor{0, 32664}, TxSent: Cursor{0, 32664}, TxFin: Cursor{3, 32664},
				},
				LGR: &LGRInfo{LinkID: 1, IBDev: "rxe0", IBPort: 1, GID: gidClient, PeerGID: gidServer, Role: RoleClient},
			},
		},
		{
			name: "decline-nordma client fallback",
			b:    declineClientSocket(t),
			want: Socket{
				Family: afSMC, State: StateActive, Mode: ModeFallback,
				Src:            netip.MustParseAddrPort("10.10.0.2:55036"),
				Dst:            netip.MustParseAddrPort("10.10.0.1:5000"),
				Inode:          1,
				FallbackReason: 0x05000000, PeerDiagnosis: 0x03030002,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSocket(tt.b)
			if err != nil {
				t.Fatalf("ParseSocket: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSocketAddressFamilies(t *testing.T) {
	skipBigEndian(t)
	base := mustHex(t, pingpongClientMsg)
	tests := []struct {
		name     string
		family   byte
		src, dst string // 16-byte address fields in hex
		wantSrc  string
	}{
		// SMCPROTO_SMC6 fills all four words.
		{"AF_SMC v6", afSMC, "fd000000000000000000000000000002", "fd000000000000000000000000000001", "[fd00::2]:49018"},
		// A v6 socket talking to an IPv4 peer: v4-mapped, reported as IPv4.
		{"AF_SMC v4-mapped", afSMC, "00000000000000000000ffff0a0a0002", "00000000000000000000ffff0a0a0001", "10.10.0.2:49018"},
		// IPPROTO_SMC (6.11+): the kernel leaves the addresses zero
		// (smc_diag_msg_common_fill; seen in the lab's e2e-ipproto).
		{"IPPROTO_SMC zero", afINET, "00000000000000000000000000000000", "00000000000000000000000000000000", "0.0.0.0:49018"},
		{"AF_INET6 family", afINET6, "00000000000000000000000000000000", "00000000000000000000000000000000", "[::]:49018"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(base)
			b[0] = tt.family
			copy(b[8:24], mustHex(t, tt.src))
			copy(b[24:40], mustHex(t, tt.dst))
			s, err := ParseSocket(b)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Src.String(); got != tt.wantSrc {
				t.Fatalf("Src = %s, want %s", got, tt.wantSrc)
			}
		})
	}
}

func TestParseSocketTruncated(t *testing.T) {
	skipBigEndian(t)
	b := pingpongClientSocket(t)
	for n := range len(b) {
		s, err := ParseSocket(b[:n])
		// A cut inside an attribute header or payload must fail; a cut
		// exactly between attributes is a valid shorter message.
		if err == nil {
			if n < smcDiagMsgLen {
				t.Fatalf("len %d: no error for a short smc_diag_msg", n)
			}
			continue
		}
		if s != (Socket{}) {
			t.Fatalf("len %d: partial result %+v with error %v", n, s, err)
		}
	}
}

func TestParseSocketShortAttributes(t *testing.T) {
	skipBigEndian(t)
	for _, typ := range []uint16{diagConnInfo, diagLGRInfo, diagDMBInfo, diagFallback, diagShutdown} {
		b := append(mustHex(t, pingpongClientMsg), nltest.MustMarshalAttributes([]netlink.Attribute{
			{Type: typ, Data: []byte{}},
		})...)
		if _, err := ParseSocket(b); err == nil {
			t.Errorf("attribute %d with no payload: no error", typ)
		}
	}
}

func TestParseSocketDMB(t *testing.T) {
	skipBigEndian(t)
	dmb := mustHex(t, `07000000 00000000  1111111111111111 2222222222222222
		3333333333333333 4444444444444444 5555555555555555 6666666666666666`)
	for _, n := range []int{smcDiagDMBInfoOldLen, smcDiagDMBInfoLen} {
		b := mustHex(t, pingpongClientMsg)
		b[2] = byte(ModeSMCD)
		b = append(b, nltest.MustMarshalAttributes([]netlink.Attribute{{Type: diagDMBInfo, Data: dmb[:n]}})...)
		s, err := ParseSocket(b)
		if err != nil {
			t.Fatal(err)
		}
		want := &DMBInfo{LinkID: 7, PeerGID: 0x1111111111111111, MyGID: 0x2222222222222222,
			Token: 0x3333333333333333, PeerToken: 0x4444444444444444}
		if n == smcDiagDMBInfoLen {
			want.PeerGIDExt, want.MyGIDExt = 0x5555555555555555, 0x6666666666666666
		}
		if diff := cmp.Diff(want, s.DMB); diff != "" {
			t.Fatalf("DMB, %d bytes (-want +got):\n%s", n, diff)
		}
	}
}

func TestDiagConnSockets(t *testing.T) {
	skipBigEndian(t)
	wantReq := append([]byte{afSMC, 0, 0, 0x0b}, make([]byte, 48)...)
	nc := nltest.Dial(nltest.CheckRequest(
		[]netlink.HeaderType{sockDiagByFamily},
		[]netlink.HeaderFlags{netlink.Request | netlink.Dump},
		func(reqs []netlink.Message) ([]netlink.Message, error) {
			if !bytes.Equal(reqs[0].Data, wantReq) {
				t.Errorf("smc_diag_req = % x, want % x", reqs[0].Data, wantReq)
			}
			h := netlink.Header{Type: sockDiagByFamily, Sequence: reqs[0].Header.Sequence, PID: reqs[0].Header.PID}
			return nltest.Multipart([]netlink.Message{
				{Header: h, Data: pingpongClientSocket(t)},
				{Header: h, Data: declineClientSocket(t)},
				{Header: h}, // becomes NLMSG_DONE
			})
		}))
	d := NewDiagConn(nc)
	defer d.Close()
	var recorded int
	d.SetRecorder(func(r []netlink.Message) { recorded = len(r) })
	got, err := d.Sockets()
	if err != nil {
		t.Fatalf("Sockets: %v", err)
	}
	if len(got) != 2 || got[0].Mode != ModeSMCR || got[1].Mode != ModeFallback {
		t.Fatalf("Sockets = %+v, want the SMCR and the fallback socket", got)
	}
	if recorded != 2 {
		t.Fatalf("recorder saw %d replies, want 2", recorded)
	}
}

func TestDiagConnErrors(t *testing.T) {
	for _, tt := range []struct {
		errno syscall.Errno
		want  error
	}{
		{syscall.ENOENT, ErrNotSupported}, // no smc_diag handler registered
		{syscall.EPERM, os.ErrPermission},
		{syscall.EACCES, os.ErrPermission},
	} {
		nc := nltest.Dial(func(reqs []netlink.Message) ([]netlink.Message, error) {
			msgs, err := nltest.Error(int(tt.errno), reqs)
			msgs[0].Header.Flags = 0 // see errnoConn
			return msgs, err
		})
		_, err := NewDiagConn(nc).Sockets()
		if !errors.Is(err, tt.want) || !errors.Is(err, tt.errno) {
			t.Errorf("errno %v: err = %v, want %v wrapping the errno", tt.errno, err, tt.want)
		}
	}
}

func TestModeStateStrings(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{ModeSMCR.String(), "SMCR"},
		{ModeFallback.String(), "TCP-FALLBACK"},
		{ModeSMCD.String(), "SMCD"},
		{Mode(9).String(), "Mode(9)"},
		{StateActive.String(), "ACTIVE"},
		{StatePeerAbortWait.String(), "PEERABORTWAIT"},
		{State(99).String(), "State(99)"},
		{Shutdown(0).String(), "<->"},
		{Shutdown(3).String(), "R-W"},
		{Cursor{1, 2}.String(), "1/2"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestSocketParserReuse: a parser whose blocks are handed out again
// (blocks of one socket here, so every socket starts one) parses a dump
// as ParseSocket parses each reply.
func TestSocketParserReuse(t *testing.T) {
	dumps := [][]byte{pingpongClientSocket(t), declineClientSocket(t)}
	paths, _ := filepath.Glob(filepath.Join("testdata", "*", "diag.bin"))
	for _, path := range paths {
		msgs, err := SplitMessages(mustRead(t, path))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			dumps = append(dumps, m.Data)
		}
	}
	p := NewSocketParser(1)
	for round := 0; round < 3; round++ {
		p.Reuse()
		var got []Socket
		for _, b := range dumps {
			s, err := p.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		for i, b := range dumps {
			want, _ := ParseSocket(b)
			if !reflect.DeepEqual(got[i], want) {
				t.Fatalf("round %d, reply %d: %+v, want %+v", round, i, got[i], want)
			}
		}
	}
}

// TestSocketParserLinks: sockets on many links, in no order, each get
// their own link's LGRInfo, shared with the other sockets of that link
// alone, dump after dump.
func TestSocketParserLinks(t *testing.T) {
	base := mustHex(t, pingpongClientMsg)
	var dumps [][]byte
	var links []int
	const nLinks = 700 // the table grows several times
	for i := 0; i < 5*nLinks; i++ {
		l := (i * 7919) % nLinks
		peer := fmt.Sprintf("0000:0000:0000:0000:0000:ffff:0a%02x:%04x", l%3, l)
		dev := []string{"rxe0", "mlx5_0", "mlx5_1"}[l%3]
		dumps = append(dumps, append(slices.Clone(base), nltest.MustMarshalAttributes([]netlink.Attribute{
			{Type: diagLGRInfo, Data: lgrInfo(uint8(1+l%2), dev, 1, gidClient, peer, uint8(l%2))},
		})...))
		links = append(links, l)
	}
	p := NewSocketParser(len(dumps))
	for round := 0; round < 3; round++ {
		p.Reuse()
		byLink := map[int]*LGRInfo{}
		seen := map[*LGRInfo]int{}
		for i, b := range dumps {
			s, err := p.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := ParseSocket(b)
			if *s.LGR != *want.LGR {
				t.Fatalf("round %d, socket %d: %+v, want %+v", round, i, *s.LGR, *want.LGR)
			}
			if l, ok := byLink[links[i]]; ok && l != s.LGR {
				t.Fatalf("round %d, socket %d: a second LGRInfo for link %d", round, i, links[i])
			}
			if l, ok := seen[s.LGR]; ok && l != links[i] {
				t.Fatalf("round %d, socket %d: link %d shares link %d's LGRInfo", round, i, links[i], l)
			}
			byLink[links[i]], seen[s.LGR] = s.LGR, links[i]
		}
	}
}
