package probe

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/smcnl"
)

// diagFromLog rebuilds what smc_diag reported for conn0 from the "DIAG"
// line of a lab guest log in testdata/reference (Linux 6.12 ground
// truth), e.g.
//
//	CLIENT conn0 DIAG 10.10.0.2:55036 -> 10.10.0.1:5000 ESTABLISHED mode=TCP-FALLBACK fallback=0x05000000(PEERDECL) peer_diag=0x03030002(NOSMCRDEV)
//
// It also returns the kernel names the log gives for both codes.
func diagFromLog(t *testing.T, name string) (DiagSocket, map[string]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "reference", name))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		i := slicesIndex(f, "DIAG")
		if i < 0 || len(f) < i+4 || f[i+2] != "->" {
			continue
		}
		d := DiagSocket{Src: netip.MustParseAddrPort(f[i+1]), Dst: netip.MustParseAddrPort(f[i+3])}
		kv := map[string]string{}
		for _, w := range f[i+4:] {
			if k, v, ok := strings.Cut(w, "="); ok {
				kv[k] = v
			}
		}
		names := map[string]string{}
		code := func(k string) DeclineCode {
			v, n, _ := strings.Cut(kv[k], "(")
			u, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 32)
			if err != nil && v != "" {
				t.Fatalf("%s: %s=%q: %v", name, k, kv[k], err)
			}
			names[k] = strings.TrimSuffix(n, ")")
			return DeclineCode(u)
		}
		d.Reason, d.PeerDiagnosis = code("fallback"), code("peer_diag")
		switch kv["mode"] {
		case "SMCR":
			d.Mode = ModeSMCR
			dev, port, _ := strings.Cut(kv["dev"], "/")
			p, _ := strconv.Atoi(port)
			id, _ := strconv.Atoi(kv["link"])
			d.Link = &Link{LinkID: uint8(id), IBDev: dev, IBPort: uint8(p), GID: kv["gid"], PeerGID: kv["peer_gid"], Role: kv["role"]}
		case "TCP-FALLBACK":
			d.Mode = ModeFallback
		default:
			t.Fatalf("%s: mode %q", name, kv["mode"])
		}
		return d, names
	}
	t.Fatalf("%s: no DIAG line", name)
	return DiagSocket{}, nil
}

func slicesIndex(f []string, s string) int {
	for i, v := range f {
		if v == s {
			return i
		}
	}
	return -1
}

type fakeInspector struct {
	socks []DiagSocket
	err   error
}

func (f fakeInspector) Sockets() ([]DiagSocket, error) { return f.socks, f.err }

func TestProveLabGroundTruth(t *testing.T) {
	tests := []struct {
		log       string
		mode      Mode
		text      string // the --check line body
		reason    DeclineCode
		peerDiag  DeclineCode
		fallsBack bool
	}{
		{log: "pingpong.client.log", mode: ModeSMCR,
			text: "SMC-R via rxe0 port 1 link 1 gid 0000:0000:0000:0000:0000:ffff:0a0a:0002 peer 0000:0000:0000:0000:0000:ffff:0a0a:0001"},
		{log: "pingpong.server.log", mode: ModeSMCR,
			text: "SMC-R via rxe0 port 1 link 1 gid 0000:0000:0000:0000:0000:ffff:0a0a:0001 peer 0000:0000:0000:0000:0000:ffff:0a0a:0002"},
		{log: "decline-nordma.client.log", mode: ModeFallback, fallsBack: true, reason: 0x05000000, peerDiag: 0x03030002,
			text: "fallback 0x05000000 PEERDECL (peer 0x03030002 NOSMCRDEV: " + DeclineCode(0x03030002).Meaning() + ")"},
		{log: "decline-nordma.server.log", mode: ModeFallback, fallsBack: true, reason: 0x03030002,
			text: "fallback 0x03030002 NOSMCRDEV: " + DeclineCode(0x03030002).Meaning()},
		{log: "fallback-nosmc.client.log", mode: ModeFallback, fallsBack: true, reason: 0x03010000,
			text: "fallback 0x03010000 PEERNOSMC: " + DeclineCode(0x03010000).Meaning()},
		{log: "no-ueid.client.log", mode: ModeFallback, fallsBack: true, reason: 0x03030000,
			text: "fallback 0x03030000 NOSMCDEV: " + DeclineCode(0x03030000).Meaning()},
	}
	for _, tt := range tests {
		t.Run(tt.log, func(t *testing.T) {
			d, names := diagFromLog(t, tt.log)
			d.Inode, d.Cookie = 4711, 0x2000000004711
			// Decoys: a listener and another connection with the same ports reversed.
			in := fakeInspector{socks: []DiagSocket{
				{Inode: 1, Cookie: 0x2000000000001, Src: netip.MustParseAddrPort("0.0.0.0:5000"), Mode: ModeFallback, Reason: 0x03010000},
				{Inode: 2, Cookie: 0x2000000000002, Src: d.Dst, Dst: d.Src, Mode: ModeFallback, Reason: 0x09990000},
				d,
			}}
			for _, how := range []struct {
				name string
				id   SocketID
			}{
				{"by inode", SocketID{Inode: 4711}},
				{"by cookie", SocketID{Cookie: 0x2000000004711}},
				{"by both", SocketID{Inode: 4711, Cookie: 0x2000000004711}},
			} {
				p := Prove(in, how.id)
				if p.Err != nil || p.Mode != tt.mode {
					t.Fatalf("%s: Prove = %+v", how.name, p)
				}
				if got := p.String(); got != tt.text {
					t.Errorf("%s: String() = %q\nwant           %q", how.name, got, tt.text)
				}
			}
			// Our names must be the kernel names the lab tool printed.
			p := Prove(in, SocketID{Inode: 4711})
			if n := names["fallback"]; n != "" && p.Reason != 0 && p.Reason.String() != n {
				t.Errorf("reason name %q, log says %q", p.Reason, n)
			}
			if n := names["peer_diag"]; n != "none" && n != "" && p.PeerDiagnosis.String() != n {
				t.Errorf("peer diagnosis name %q, log says %q", p.PeerDiagnosis, n)
			}
			err := p.Require()
			var fe *FallbackError
			if got := errors.As(err, &fe); got != tt.fallsBack {
				t.Fatalf("Require() = %v, FallbackError %v, want %v", err, got, tt.fallsBack)
			}
			if fe != nil && (fe.Reason != tt.reason || fe.PeerDiagnosis != tt.peerDiag) {
				t.Errorf("FallbackError = %+v, want reason %#x peer %#x", fe, tt.reason, tt.peerDiag)
			}
		})
	}
}

func TestProveNotFound(t *testing.T) {
	d, _ := diagFromLog(t, "pingpong.client.log")
	d.Inode, d.Cookie = 10, 0x100
	in := fakeInspector{socks: []DiagSocket{d}}
	for _, id := range []SocketID{{Inode: 11}, {Cookie: 0x101}, {}} {
		p := Prove(in, id)
		if p.Mode != ModeUnknown || p.Err == nil {
			t.Fatalf("Prove(%v) = %+v, want not found", id, p)
		}
	}
	p := Prove(in, SocketID{Inode: 11})
	if err := p.Require(); !errors.Is(err, ErrNotProven) {
		t.Errorf("Require() = %v, want ErrNotProven", err)
	}
	diagErr := &UnsupportedError{Feature: "SMC sock_diag", Needs: "the smc_diag kernel module", Err: os.ErrNotExist}
	p = Prove(fakeInspector{err: diagErr}, SocketID{Inode: 10})
	if err := p.Require(); !errors.Is(err, ErrNotProven) || !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "smc_diag") {
		t.Errorf("Require() = %v, want ErrNotProven wrapping the smc_diag error", err)
	}
	if p := Prove(nil, SocketID{Inode: 1}); p.Err == nil {
		t.Error("nil inspector proved something")
	}
}

// TestFindLGR uses the link group and link the pingpong client dumped
// over SMC_GEN_NETLINK (LINK: lines of pingpong.client.log).
func TestFindLGR(t *testing.T) {
	gid, peer := "0000:0000:0000:0000:0000:ffff:0a0a:0002", "0000:0000:0000:0000:0000:ffff:0a0a:0001"
	groups := []smcnl.LinkGroupR{
		{ID: 0x200, Role: smcnl.RoleServer, Links: []smcnl.Link{{ID: 1, IBDev: "rxe0", IBPort: 1, GID: gid, PeerGID: peer}}},
		{ID: 0x100, Role: smcnl.RoleClient, Links: []smcnl.Link{{ID: 1, IBDev: "rxe0", IBPort: 1, GID: gid, PeerGID: peer}}},
	}
	s := smcnl.Socket{Mode: smcnl.ModeSMCR, Inode: 9, LGR: &smcnl.LGRInfo{LinkID: 1, IBDev: "rxe0", IBPort: 1, GID: gid, PeerGID: peer, Role: smcnl.RoleClient}}
	d := fromSMCNL(s, groups, nil)
	if d.Mode != ModeSMCR || d.Link == nil || !d.Link.HasLGRID || d.Link.LGRID != 0x100 {
		t.Fatalf("fromSMCNL = %+v link %+v", d, d.Link)
	}
	p := Proof{Mode: d.Mode, Link: d.Link}
	want := fmt.Sprintf("SMC-R via rxe0 port 1 link 1 lgr 0x100 gid %s peer %s", gid, peer)
	if p.String() != want {
		t.Errorf("String() = %q, want %q", p.String(), want)
	}
	s.LGR.PeerGID = "other"
	if d := fromSMCNL(s, groups, nil); d.Link.HasLGRID {
		t.Errorf("matched a link group with a different peer GID: %+v", d.Link)
	}
	fb := fromSMCNL(smcnl.Socket{Mode: smcnl.ModeFallback, FallbackReason: 0x05000000, PeerDiagnosis: 0x03030002}, nil, nil)
	if fb.Mode != ModeFallback || fb.Reason != 0x05000000 || fb.PeerDiagnosis != 0x03030002 || fb.Link != nil {
		t.Errorf("fallback = %+v", fb)
	}
}

func TestKernelInspectorWithoutSMCDiag(t *testing.T) {
	_, err := KernelInspector{}.Sockets()
	if err == nil {
		t.Skip("this kernel answers SMC sock_diag; the missing-module message cannot be tested here")
	}
	if errors.Is(err, ErrNotSupported) && !strings.Contains(err.Error(), "smc_diag") {
		t.Errorf("error %q does not name the smc_diag module", err)
	}
	t.Logf("kernel inspector: %v", err)
}

// linerInspector is a fakeInspector that also prints sock_diag lines.
type linerInspector struct {
	fakeInspector
	lines map[uint64]string
}

func (l linerInspector) SocketLine(id SocketID) (string, error) {
	if s, ok := l.lines[id.Inode]; ok {
		return s, nil
	}
	return "", errors.New("not found")
}

// TestFinalDiag checks --diag's lines: numbered over all protocols, the
// kernel's line for SMC sockets found, the reason otherwise.
func TestFinalDiag(t *testing.T) {
	conn := func(inode uint64) *connRun {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return &connRun{conn: &Conn{Conn: a, Inode: inode}}
	}
	modes := []*modeRun{
		{proto: ProtoSMC, conns: []*connRun{conn(7), conn(8)}},
		{proto: ProtoTCP, conns: []*connRun{conn(9)}},
	}
	in := linerInspector{lines: map[uint64]string{7: "socket state=ACTIVE mode=SMCR token=0x1234"}}
	got := finalDiag(in, modes)
	want := []string{"conn 1 smc: socket state=ACTIVE mode=SMCR token=0x1234", "conn 2 smc: error: not found", "conn 3 tcp: not an SMC socket"}
	if !slices.Equal(got, want) {
		t.Errorf("finalDiag = %q, want %q", got, want)
	}
	got = finalDiag(fakeInspector{}, modes[:1])
	if len(got) != 2 || !strings.HasSuffix(got[0], "no sock_diag line from this inspector") {
		t.Errorf("without SocketLiner: %q", got)
	}
}

// TestFromSMCNLToken: the alert token from sock_diag's CONNINFO reaches
// the proof, which the server logs and -o json reports.
func TestFromSMCNLToken(t *testing.T) {
	d := fromSMCNL(smcnl.Socket{Inode: 3, Mode: smcnl.ModeSMCR, Conn: &smcnl.ConnInfo{Token: 0x2a7}}, nil, nil)
	if p := Prove(fakeInspector{socks: []DiagSocket{d}}, SocketID{Inode: 3}); p.Token != 0x2a7 || p.Mode != ModeSMCR {
		t.Errorf("proof %+v, want SMC-R with token 0x2a7", p)
	}
}

// TestProveIPPROTOSMC: sock_diag reports IPPROTO_SMC sockets with all-zero
// addresses (smc_diag_msg_common_fill fills them for AF_SMC only; seen in
// the lab's e2e-ipproto scenario), so two connections to the same port look
// alike but for the source port, and a listener looks like a connection.
// Inode and cookie find the right one; without them nothing is proven.
func TestProveIPPROTOSMC(t *testing.T) {
	zero := func(port uint16) netip.AddrPort { return netip.AddrPortFrom(netip.IPv4Unspecified(), port) }
	socks := []DiagSocket{
		{Inode: 20, Cookie: 0x4020, Src: zero(5000), Dst: zero(0), Mode: ModeFallback, Reason: 0x03010000},
		{Inode: 21, Cookie: 0x4021, Src: zero(40001), Dst: zero(5000), Mode: ModeFallback, Reason: 0x03030000},
		{Inode: 22, Cookie: 0x4022, Src: zero(40002), Dst: zero(5000), Mode: ModeSMCR, Token: 0x33},
	}
	in := fakeInspector{socks: socks}
	for _, id := range []SocketID{{Inode: 22}, {Cookie: 0x4022}} {
		if p := Prove(in, id); p.Mode != ModeSMCR || p.Token != 0x33 {
			t.Errorf("Prove(%v) = %+v, want the SMC-R connection", id, p)
		}
	}
	if p := Prove(in, SocketID{}); p.Err == nil || !strings.Contains(p.Err.Error(), "neither inode nor cookie") {
		t.Errorf("Prove without keys = %+v, want an error saying why", p)
	}
}

// TestSMCDProofRecorded: the client end of an SMC-D connection over the 7.3 lab's DIBS
// loopback (smcnl/testdata/smcd-client-active: its sock_diag reply and the guest's
// /sys/class/dibs) proves SMC-D via lo with its link group, DMB and GIDs, exactly as
// smcping printed it in the guest (smcping.conns); without the DIBS device list the
// proof still has the rest.
func TestSMCDProofRecorded(t *testing.T) {
	const dir = "../smcnl/testdata/smcd-client-active"
	socks, err := smcnl.ReplaySockets(dir)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := smcnl.DIBSDevices(filepath.Join(dir, "sys"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "smcping.conns"))
	if err != nil {
		t.Fatal(err)
	}
	_, want, _ := strings.Cut(strings.TrimSpace(string(b)), ": ")
	var client *smcnl.Socket
	for i, s := range socks {
		if s.Src.String() == "127.0.0.1:47884" {
			client = &socks[i]
		}
	}
	if client == nil {
		t.Fatal("no socket from 127.0.0.1:47884 in the recording")
	}
	d := fromSMCNL(*client, nil, devs)
	if got := (Proof{Mode: d.Mode, DMB: d.DMB}).String(); got != want {
		t.Errorf("proof %q\nsmcping in the guest said %q", got, want)
	}
	d = fromSMCNL(*client, nil, nil)
	if got := (Proof{Mode: d.Mode, DMB: d.DMB}).String(); got != strings.Replace(want, "SMC-D via lo ", "SMC-D ", 1) {
		t.Errorf("proof without DIBS devices %q", got)
	}
}
