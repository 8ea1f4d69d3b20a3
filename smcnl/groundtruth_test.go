package smcnl

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Ground truth for the recordings in testdata/ (see testdata/README.md):
// every expected value below is either in labstub.report, written by the
// lab's own independent netlink reader at the same moment, in the guest's
// dmesg, or the same quantity seen through a second kernel interface
// (sock_diag cursors against GET_STATS byte counters).

func recordedSockets(t *testing.T, dir string) []Socket {
	t.Helper()
	skipBigEndian(t)
	var ss []Socket
	for i, m := range readRecording(t, filepath.Join("testdata", dir, "diag.bin")) {
		s, err := ParseSocket(m.Data)
		if err != nil {
			t.Fatalf("%s diag reply %d: %v", dir, i, err)
		}
		ss = append(ss, s)
	}
	return ss
}

func recordedConn(t *testing.T, dir string) *Conn {
	t.Helper()
	if !isLittle() {
		t.Skip("recordings are x86 host-order bytes")
	}
	return replayConn(t, filepath.Join("testdata", dir))
}

var addrCmp = cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })

// pingpong-client-end: labstub.report "STATS: smcr.clnt_v2_succ=1
// smcr.rx_bytes=32000 smcr.tx_bytes=32001 smcr.rx_cnt=500 smcr.tx_cnt=501",
// "LGR: id=0x100 role=client type=SINGLE conns=0 v2_ver=2 v2_rel=1
// neg_eid="SMC-LAB-UEID"", "LINK: lgr=0x100 link_id=1 state=3 conns=0
// dev=rxe0 netdev=2 uid=0x1010000 peer_uid=0x1030000 gid=...:0a0a:0002
// peer_gid=...:0a0a:0001"; dmesg "link added: id 00000101, peerid 00000301".
func TestGroundTruthPingpongClientEnd(t *testing.T) {
	c := recordedConn(t, "pingpong-client-end")
	si, err := c.SysInfo()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(SysInfo{Version: 2, Release: 1, SMCRv2: true, LocalHost: "(none)"}, si); diff != "" {
		t.Errorf("SysInfo (-want +got):\n%s", diff)
	}
	us, err := c.UEIDs()
	if err != nil || len(us) != 1 || us[0] != "SMC-LAB-UEID" {
		t.Errorf("UEIDs = %q, %v", us, err)
	}
	st, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	got := [5]uint64{st.SMCR.ClientV2Succ, st.SMCR.RxBytes, st.SMCR.TxBytes, st.SMCR.RxCount, st.SMCR.TxCount}
	if want := [5]uint64{1, 32000, 32001, 500, 501}; got != want {
		t.Errorf("SMCR clnt_v2_succ/rx_bytes/tx_bytes/rx_cnt/tx_cnt = %v, want %v", got, want)
	}
	if st.SMCD != (TechStats{RMBUsageKnown: true}) {
		t.Errorf("SMC-D counters on a host without ISM: %+v", st.SMCD)
	}
	gs, err := c.LinkGroupsR()
	if err != nil {
		t.Fatal(err)
	}
	want := []LinkGroupR{{
		ID: 0x100, Role: RoleClient, Type: LGRTypeSingle, NetCookie: 1,
		V2Common:    &V2Common{Version: 2, Release: 1, PeerOS: 2, NegotiatedEID: "SMC-LAB-UEID", PeerHost: "(none)"},
		V2:          &LGRV2{Direct: true, MaxConns: 255, MaxLinks: 2},
		SndBufAlloc: 65536, RMBAlloc: 65536,
		Links: []Link{{
			ID: 1, IBDev: "rxe0", IBPort: 1, GID: gidClient, PeerGID: gidServer,
			NetDev: 2, UID: 0x01010000, PeerUID: 0x01030000, State: LinkActive,
		}},
	}}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("LinkGroupsR (-want +got):\n%s", diff)
	}
	fb, err := c.FallbackStats()
	if err != nil || fb.ClientTotal+fb.ServerTotal != 0 || len(fb.Client)+len(fb.Server) != 0 {
		t.Errorf("FallbackStats = %+v, %v; labstub saw none", fb, err)
	}
	if ss := recordedSockets(t, "pingpong-client-end"); len(ss) != 0 {
		t.Errorf("sockets after the run: %+v", ss)
	}
}

// pingpong-client-active: recorded while the connection was paused after 10
// round trips. The socket's cursors and the namespace's byte counters are
// two kernel interfaces over the same data and must agree.
func TestGroundTruthPingpongClientActive(t *testing.T) {
	c := recordedConn(t, "pingpong-client-active")
	ss := recordedSockets(t, "pingpong-client-active")
	if len(ss) != 1 {
		t.Fatalf("%d sockets, want the one paused connection", len(ss))
	}
	s := ss[0]
	if s.Mode != ModeSMCR || s.State != StateActive || s.Dst != netip.MustParseAddrPort("10.10.0.1:5000") ||
		s.Src.Addr() != netip.MustParseAddr("10.10.0.2") || s.Conn == nil || s.LGR == nil {
		t.Fatalf("socket = %+v, want an active SMC-R connection 10.10.0.2 -> 10.10.0.1:5000", s)
	}
	st, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if uint64(s.Conn.RxProd.Count) != st.SMCR.RxBytes || uint64(s.Conn.TxProd.Count) != st.SMCR.TxBytes {
		t.Errorf("cursors rx_prod %v tx_prod %v disagree with stats rx_bytes %d tx_bytes %d",
			s.Conn.RxProd, s.Conn.TxProd, st.SMCR.RxBytes, st.SMCR.TxBytes)
	}
	if s.Conn.TxSent != s.Conn.TxProd || s.Conn.RMBESize != 65536 || s.Conn.PeerRMBESize != 65536 {
		t.Errorf("conn = %+v, want tx_sent = tx_prod (paused) and 64 KiB RMBEs (stats rmb size 64K)", *s.Conn)
	}
	gs, err := c.LinkGroupsR()
	if err != nil || len(gs) != 1 || len(gs[0].Links) != 1 {
		t.Fatalf("LinkGroupsR = %+v, %v", gs, err)
	}
	g, l := gs[0], gs[0].Links[0]
	if g.Conns != 1 || l.ConnCount != 1 || l.ID != s.LGR.LinkID || l.GID != s.LGR.GID ||
		l.PeerGID != s.LGR.PeerGID || l.IBDev != s.LGR.IBDev || g.Role != s.LGR.Role {
		t.Errorf("link group %+v / link %+v disagree with the socket's LGRINFO %+v", g, l, *s.LGR)
	}
}

// decline-nordma: the reference log's client line "fallback=0x05000000(PEERDECL)
// peer_diag=0x03030002(NOSMCRDEV)", and labstub.report "FBSTATS:
// side=client reason=0x05000000 count=1" / "side=server
// reason=0x03030002 count=1", server "SOCK: 0.0.0.0:5000 -> 0.0.0.0:0
// state=LISTEN mode=SMCR".
func TestGroundTruthDeclineNoRDMA(t *testing.T) {
	ss := recordedSockets(t, "decline-nordma-client-active")
	if len(ss) != 1 {
		t.Fatalf("%d client sockets, want 1", len(ss))
	}
	s := ss[0]
	if s.Mode != ModeFallback || s.FallbackReason != 0x05000000 || s.PeerDiagnosis != 0x03030002 ||
		s.Conn != nil || s.LGR != nil || s.Dst != netip.MustParseAddrPort("10.10.0.1:5000") {
		t.Errorf("client socket = %+v", s)
	}
	fb, err := recordedConn(t, "decline-nordma-client-end").FallbackStats()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(FallbackStats{ClientTotal: 1, Client: []FallbackReason{{Code: 0x05000000, Count: 1}}}, fb); diff != "" {
		t.Errorf("client FallbackStats (-want +got):\n%s", diff)
	}

	srv := recordedConn(t, "decline-nordma-server-done")
	fb, err = srv.FallbackStats()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(FallbackStats{ServerTotal: 1, Server: []FallbackReason{{Code: 0x03030002, Count: 1}}}, fb); diff != "" {
		t.Errorf("server FallbackStats (-want +got):\n%s", diff)
	}
	// The server has SMC but no RoCE device: no SMC-R device, no link group.
	if ds, err := srv.DevicesR(); err != nil || len(ds) != 0 {
		t.Errorf("server DevicesR = %+v, %v; want none", ds, err)
	}
	if gs, err := srv.LinkGroupsR(); err != nil || len(gs) != 0 {
		t.Errorf("server LinkGroupsR = %+v, %v; want none", gs, err)
	}
	want := []Socket{{
		Family: afSMC, State: StateListen, Mode: ModeSMCR,
		Src: netip.MustParseAddrPort("0.0.0.0:5000"), Dst: netip.MustParseAddrPort("0.0.0.0:0"),
	}}
	got := recordedSockets(t, "decline-nordma-server-done")
	for i := range got {
		got[i].Cookie, got[i].Inode = 0, 0 // per-boot values
	}
	if diff := cmp.Diff(want, got, addrCmp); diff != "" {
		t.Errorf("server sockets (-want +got):\n%s", diff)
	}
}

// pingpong-server-done: the lab's shift_ids put lo and rxe0 under the user
// PNET ID LABSELF before the run (scenarios.sh), which the device dump
// must show as a user-set PNET ID on port 1 of rxe0 (netdev eth0 = 2).
func TestGroundTruthPingpongServerDevice(t *testing.T) {
	ds, err := recordedConn(t, "pingpong-server-done").DevicesR()
	if err != nil {
		t.Fatal(err)
	}
	want := []Device{{IBName: "rxe0", Ports: []Port{{Number: 1, PNETIDByUser: true, PNETID: "LABSELF", NetDev: 2, Active: true, Valid: true}}}}
	if diff := cmp.Diff(want, ds); diff != "" {
		t.Errorf("DevicesR (-want +got):\n%s", diff)
	}
}

// multiconn: four concurrent connections on one link group (labstub client
// -P 4 -n 300,200,120,80 -m 64,1000,4096,200), paused after 10 round trips
// each. labstub.report at the end: "STATS: smcr.clnt_v2_succ=4
// smcr.rx_bytes=726720 smcr.tx_bytes=726724 smcr.rx_cnt=700
// smcr.tx_cnt=704".
func TestGroundTruthMulticonn(t *testing.T) {
	ss := recordedSockets(t, "multiconn-client-active")
	if len(ss) != 4 {
		t.Fatalf("%d sockets, want 4", len(ss))
	}
	c := recordedConn(t, "multiconn-client-active")
	st, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	var rx, tx uint64
	tokens := map[uint32]bool{}
	sizes := map[uint32]bool{}
	for _, s := range ss {
		if s.Mode != ModeSMCR || s.Conn == nil || s.LGR == nil {
			t.Fatalf("socket %+v is not an SMC-R connection with details", s)
		}
		rx += uint64(s.Conn.RxProd.Count)
		tx += uint64(s.Conn.TxProd.Count)
		tokens[s.Conn.Token] = true
		// 10 round trips of this connection's message size (+1 byte the
		// client sends first): the sizes 64, 1000, 4096, 200 reappear.
		sizes[s.Conn.RxProd.Count/10] = true
	}
	if rx != st.SMCR.RxBytes || tx != st.SMCR.TxBytes {
		t.Errorf("sum of cursors rx %d tx %d, stats rx_bytes %d tx_bytes %d", rx, tx, st.SMCR.RxBytes, st.SMCR.TxBytes)
	}
	if len(tokens) != 4 {
		t.Errorf("alert tokens %v, want 4 distinct", tokens)
	}
	if want := map[uint32]bool{64: true, 1000: true, 4096: true, 200: true}; !cmp.Equal(want, sizes) {
		t.Errorf("message sizes from cursors %v, want %v", sizes, want)
	}
	gs, err := c.LinkGroupsR()
	if err != nil || len(gs) != 1 || len(gs[0].Links) != 1 {
		t.Fatalf("LinkGroupsR = %+v, %v; want one group with one link", gs, err)
	}
	if g := gs[0]; g.Conns != 4 || g.Links[0].ConnCount != 4 || g.SndBufAlloc != 4*65536 || g.RMBAlloc != 4*65536 {
		t.Errorf("link group %+v: want 4 connections and 4 x 64 KiB buffers", g)
	}

	st, err = recordedConn(t, "multiconn-client-end").Stats()
	if err != nil {
		t.Fatal(err)
	}
	got := [5]uint64{st.SMCR.ClientV2Succ, st.SMCR.RxBytes, st.SMCR.TxBytes, st.SMCR.RxCount, st.SMCR.TxCount}
	if want := [5]uint64{4, 726720, 726724, 700, 704}; got != want {
		t.Errorf("end SMCR clnt_v2_succ/rx_bytes/tx_bytes/rx_cnt/tx_cnt = %v, want %v", got, want)
	}
}

// multilink: two links (eth0/rxe0, eth1/rxe1, PNET ID LABNET) and two
// connections paused; then eth1 goes down and the link group fails over.
// labstub.report before: "LGR: id=0x100 role=client type=SYMMETRIC conns=2",
// "LINK: ... link_id=1 state=3 conns=1 dev=rxe0 netdev=2 uid=0x1010000
// peer_uid=0x1010000 ...:0a0a:0002 ...:0a0a:0001", "LINK: ... link_id=2
// state=3 conns=1 dev=rxe1 netdev=3 uid=0x2010000 peer_uid=0x2010000
// ...:0a0a:000c ...:0a0a:000b"; after: "type=SINGLE conns=2", only link 1
// with conns=2.
func TestGroundTruthMultilinkFailover(t *testing.T) {
	const gidC1, gidS1 = "0000:0000:0000:0000:0000:ffff:0a0a:000c", "0000:0000:0000:0000:0000:ffff:0a0a:000b"
	link1 := Link{ID: 1, IBDev: "rxe0", IBPort: 1, GID: gidClient, PeerGID: gidServer, NetDev: 2,
		UID: 0x01010000, PeerUID: 0x01010000, State: LinkActive, ConnCount: 1}
	link2 := Link{ID: 2, IBDev: "rxe1", IBPort: 1, GID: gidC1, PeerGID: gidS1, NetDev: 3,
		UID: 0x02010000, PeerUID: 0x02010000, State: LinkActive, ConnCount: 1}
	group := func(typ LGRType, links ...Link) []LinkGroupR {
		return []LinkGroupR{{
			ID: 0x100, Role: RoleClient, Type: typ, PNETID: "LABNET", Conns: 2, NetCookie: 1,
			V2Common:    &V2Common{Version: 2, Release: 1, PeerOS: 2, NegotiatedEID: "SMC-LAB-UEID", PeerHost: "(none)"},
			V2:          &LGRV2{Direct: true, MaxConns: 255, MaxLinks: 2},
			SndBufAlloc: 2 * 65536, RMBAlloc: 2 * 65536,
			Links: links,
		}}
	}
	after := link1
	after.ConnCount = 2
	for _, tt := range []struct {
		phase string
		want  []LinkGroupR
		// the links the two sockets' LGRINFO name: smc_diag reports
		// each connection's own link, so failover moves one of them
		sockLinks map[uint8]int
	}{
		{"before", group(LGRTypeSymmetric, link1, link2), map[uint8]int{1: 1, 2: 1}},
		{"after", group(LGRTypeSingle, after), map[uint8]int{1: 2}},
	} {
		t.Run(tt.phase, func(t *testing.T) {
			dir := "multilink-client-" + tt.phase
			gs, err := recordedConn(t, dir).LinkGroupsR()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, gs); diff != "" {
				t.Errorf("LinkGroupsR (-want +got):\n%s", diff)
			}
			got := map[uint8]int{}
			for _, s := range recordedSockets(t, dir) {
				if s.LGR == nil {
					t.Fatalf("socket without LGRINFO: %+v", s)
				}
				got[s.LGR.LinkID]++
				for _, l := range gs[0].Links {
					if l.ID == s.LGR.LinkID && (l.IBDev != s.LGR.IBDev || l.GID != s.LGR.GID) {
						t.Errorf("socket LGRINFO %+v disagrees with link %+v", *s.LGR, l)
					}
				}
			}
			if !cmp.Equal(tt.sockLinks, got) {
				t.Errorf("sockets per link %v, want %v", got, tt.sockLinks)
			}
		})
	}

	// Device view after failover: rxe1's port went inactive, rxe0 is now
	// the only path (critical).
	ds, err := recordedConn(t, "multilink-client-after").DevicesR()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].IBName != "rxe0" || !ds[0].Critical || ds[1].IBName != "rxe1" ||
		ds[1].Critical || len(ds[1].Ports) != 1 || ds[1].Ports[0].Active || ds[1].Ports[0].PNETID != "LABNET" {
		t.Errorf("DevicesR after failover = %+v", ds)
	}

	st, err := recordedConn(t, "multilink-client-end").Stats()
	if err != nil {
		t.Fatal(err)
	}
	// labstub.report: "smcr.clnt_v2_succ=3 smcr.rx_bytes=128000
	// smcr.tx_bytes=128003 smcr.rx_cnt=550 smcr.tx_cnt=553".
	got := [5]uint64{st.SMCR.ClientV2Succ, st.SMCR.RxBytes, st.SMCR.TxBytes, st.SMCR.RxCount, st.SMCR.TxCount}
	if want := [5]uint64{3, 128000, 128003, 550, 553}; got != want {
		t.Errorf("end SMCR clnt_v2_succ/rx_bytes/tx_bytes/rx_cnt/tx_cnt = %v, want %v", got, want)
	}
}

// long: one connection paused after 1500 x 64 B round trips, past the end
// of the 64 KiB RMBE, so every cursor has wrapped once: 1 x 65536 + 30464 =
// 96000 bytes, which GET_STATS counts linearly. labstub.report at the end:
// "STATS: smcr.clnt_v2_succ=2 smcr.rx_bytes=192008 smcr.tx_bytes=1240586
// smcr.rx_cnt=3001 smcr.tx_cnt=3042" (after the 1 MiB bulk transfer).
func TestGroundTruthLongCursorWrap(t *testing.T) {
	ss := recordedSockets(t, "long-client-active")
	if len(ss) != 1 || ss[0].Conn == nil {
		t.Fatalf("sockets = %+v, want one SMC-R connection", ss)
	}
	ci := ss[0].Conn
	st, err := recordedConn(t, "long-client-active").Stats()
	if err != nil {
		t.Fatal(err)
	}
	linear := func(c Cursor) uint64 { return uint64(c.Wrap)*uint64(ci.RMBESize) + uint64(c.Count) }
	if ci.RxProd.Wrap != 1 || ci.TxProd.Wrap != 1 {
		t.Errorf("rx_prod %v tx_prod %v: want wrap 1 after 96000 bytes through a 64 KiB RMBE", ci.RxProd, ci.TxProd)
	}
	if linear(ci.RxProd) != st.SMCR.RxBytes || linear(ci.TxProd) != st.SMCR.TxBytes || st.SMCR.RxBytes != 1500*64 {
		t.Errorf("cursors rx %v tx %v (RMBE %d) vs stats rx_bytes %d tx_bytes %d, want 96000 received",
			ci.RxProd, ci.TxProd, ci.RMBESize, st.SMCR.RxBytes, st.SMCR.TxBytes)
	}
	st, err = recordedConn(t, "long-client-end").Stats()
	if err != nil {
		t.Fatal(err)
	}
	got := [5]uint64{st.SMCR.ClientV2Succ, st.SMCR.RxBytes, st.SMCR.TxBytes, st.SMCR.RxCount, st.SMCR.TxCount}
	if want := [5]uint64{2, 192008, 1240586, 3001, 3042}; got != want {
		t.Errorf("end SMCR clnt_v2_succ/rx_bytes/tx_bytes/rx_cnt/tx_cnt = %v, want %v", got, want)
	}
}

// ipv6 and no-ueid: fallbacks. The lab client's own line
// (labstub.client.log, from its socket and its independent sock_diag code): "[fd00:10::2]:50324 -> [fd00:10::1]:5000 ... mode=TCP
// reason=0x03030000" and "10.10.0.2:42052 -> 10.10.0.1:5000 ... mode=TCP
// reason=0x03030000" (NOSMCDEV: SMC-Rv2 needs IPv4, resp. a UEID). The
// IPv6 socket is family 43 like the IPv4 one: only the address words
// tell them apart.
func TestGroundTruthFallbackAddresses(t *testing.T) {
	for _, tt := range []struct {
		dir      string
		src, dst string
	}{
		{"ipv6-client-active", "[fd00:10::2]:50324", "[fd00:10::1]:5000"},
		{"no-ueid-client-active", "10.10.0.2:42052", "10.10.0.1:5000"},
	} {
		ss := recordedSockets(t, tt.dir)
		if len(ss) != 1 {
			t.Fatalf("%s: %d sockets, want 1", tt.dir, len(ss))
		}
		s := ss[0]
		if s.Family != afSMC || s.Mode != ModeFallback || s.FallbackReason != 0x03030000 || s.PeerDiagnosis != 0 ||
			s.Src.String() != tt.src || s.Dst.String() != tt.dst {
			t.Errorf("%s: socket %v -> %v family %d mode %v reason %#x, want %s -> %s family 43 fallback 0x03030000",
				tt.dir, s.Src, s.Dst, s.Family, s.Mode, s.FallbackReason, tt.src, tt.dst)
		}
	}
}

// ipproto-client-active: an IPPROTO_SMC and an AF_SMC connection of the client,
// both SMC-R and running, to the server's IPPROTO_SMC listener (lab e2e-ipproto).
// smcping.conns holds smcping's own lines for them, whose local addresses come from
// getsockname, not from sock_diag: "ipproto 10.10.0.2:53626" and "smc 10.10.0.2:53616".
// The kernel reports the IPPROTO_SMC socket with family 2 and its ports but 0.0.0.0
// addresses (smc_diag_msg_common_fill fills addresses for AF_SMC only); the AF_SMC one
// with family 43 and its addresses. ipproto-server-done: the server's IPPROTO_SMC
// listener, family 2, 0.0.0.0:5000.
func TestGroundTruthIPPROTOSMC(t *testing.T) {
	conns := string(mustRead(t, filepath.Join("testdata", "ipproto-client-active", "smcping.conns")))
	for _, want := range []string{"conn 1 ipproto 10.10.0.2:53626 -> 10.10.0.1:5000: SMC-R", "conn 1 smc 10.10.0.2:53616 -> 10.10.0.1:5000: SMC-R"} {
		if !strings.Contains(conns, want) {
			t.Fatalf("smcping.conns lacks %q", want)
		}
	}
	byFamily := map[uint8]Socket{}
	for _, s := range recordedSockets(t, "ipproto-client-active") {
		if s.State != StateActive || s.Mode != ModeSMCR || s.Conn == nil || s.LGR == nil {
			t.Errorf("socket %+v: want active SMC-R with CONNINFO and LGRINFO", s)
		}
		if s.Inode == 0 || s.Cookie == 0 {
			t.Errorf("socket %v -> %v without inode or cookie", s.Src, s.Dst)
		}
		byFamily[s.Family] = s
	}
	if len(byFamily) != 2 {
		t.Fatalf("families %v, want 2 (IPPROTO_SMC) and 43 (AF_SMC)", byFamily)
	}
	for fam, want := range map[uint8][2]string{afINET: {"0.0.0.0:53626", "0.0.0.0:5000"}, afSMC: {"10.10.0.2:53616", "10.10.0.1:5000"}} {
		s := byFamily[fam]
		if s.Src.String() != want[0] || s.Dst.String() != want[1] {
			t.Errorf("family %d: %v -> %v, want %s -> %s", fam, s.Src, s.Dst, want[0], want[1])
		}
	}
	ls := recordedSockets(t, "ipproto-server-done")
	if len(ls) != 1 || ls[0].State != StateListen || ls[0].Family != afINET || ls[0].Src.String() != "0.0.0.0:5000" {
		t.Errorf("server sockets %+v, want one IPPROTO_SMC listener, family 2, 0.0.0.0:5000", ls)
	}
}

// smcd-client-active: the lab's 7.3 guest (e2e-smcd) while a paced smcping connection
// over 127.0.0.1 ran as SMC-D on the DIBS loopback; both of its ends are sockets of the
// one guest. smcping.conns is smcping's line for its client end (the local port from
// getsockname); sys/class/dibs/lo is the guest's sysfs (dibs_main.c gid_show writes the
// GID as a UUID). What sock_diag and GET_LGR_SMCD say must agree with both, and with
// each other: each end's DMB token is the other's peer token, both ends' link ID is a
// link group that counts them, GET_DEV_SMCD lists no loopback (smc_nl_prep_smcd_dev
// skips it) and the statistics count SMC-Dv2 connections only.
//
// The two ends share one link group (0x100, conns=2) while 0x200 has none:
// smcd_lgr_match (net/smc/smc_core.c) compares device and peer GID, not role, so on the
// loopback a client may join the server's group.
func TestGroundTruthSMCDLoopback(t *testing.T) {
	const dir = "smcd-client-active"
	conns := string(mustRead(t, filepath.Join("testdata", dir, "smcping.conns")))
	const client = "127.0.0.1:47884"
	if !strings.Contains(conns, "conn 1 smc "+client+" -> 127.0.0.1:5002: SMC-D") {
		t.Fatalf("smcping.conns: %q", conns)
	}
	uuid := strings.TrimSpace(string(mustRead(t, filepath.Join("testdata", dir, "sys", "class", "dibs", "lo", "gid"))))
	devs, err := DIBSDevices(filepath.Join("testdata", dir, "sys"))
	if err != nil || len(devs) != 1 || devs[0].Name != "lo" || devs[0].GID != uuid || devs[0].FabricID != "0xffff" {
		t.Fatalf("DIBS devices %+v, %v", devs, err)
	}
	ends := map[string]Socket{}
	for _, s := range recordedSockets(t, dir) {
		if s.State == StateActive {
			if s.Mode != ModeSMCD || s.DMB == nil || s.Conn == nil || s.LGR != nil {
				t.Errorf("active socket %v -> %v: mode %v, want SMC-D with DMBINFO and CONNINFO, no LGRINFO", s.Src, s.Dst, s.Mode)
				continue
			}
			ends[s.Src.String()] = s
		}
	}
	cl, srv := ends[client], ends["127.0.0.1:5002"]
	if cl.DMB == nil || srv.DMB == nil || cl.Dst != srv.Src || srv.Dst != cl.Src {
		t.Fatalf("the paced connection's ends: %+v", ends)
	}
	for _, s := range []Socket{cl, srv} {
		d := s.DMB
		if got := SMCDGID(d.MyGID, d.MyGIDExt); got != uuid {
			t.Errorf("%v: my GID %s, the loopback's %s", s.Src, got, uuid)
		}
		if got := SMCDGID(d.PeerGID, d.PeerGIDExt); got != uuid {
			t.Errorf("%v: peer GID %s, the loopback's %s (both ends are on it)", s.Src, got, uuid)
		}
	}
	if cl.DMB.Token != srv.DMB.PeerToken || srv.DMB.Token != cl.DMB.PeerToken || cl.DMB.Token == srv.DMB.Token {
		t.Errorf("DMB tokens do not cross: client %#x/%#x, server %#x/%#x", cl.DMB.Token, cl.DMB.PeerToken, srv.DMB.Token, srv.DMB.PeerToken)
	}
	c := recordedConn(t, dir)
	groups, err := c.LinkGroupsD()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[uint32]LinkGroupD{}
	for _, g := range groups {
		byID[g.ID] = g
		if SMCDGID(g.GID, g.ExtGID) != uuid || SMCDGID(g.PeerGID, g.PeerExtGID) != uuid || g.CHID != 0xffff ||
			g.V2Common == nil || g.V2Common.Version != 2 || g.V2Common.NegotiatedEID != "SMC-LAB-UEID" {
			t.Errorf("link group %+v (v2 %+v): want the loopback's GID on both ends, CHID 0xffff, SMCv2 with the lab's UEID", g, g.V2Common)
		}
	}
	if g := byID[cl.DMB.LinkID]; cl.DMB.LinkID != srv.DMB.LinkID || g.ID == 0 || g.Conns != 2 {
		t.Errorf("link IDs client %#x server %#x; groups %+v: want one group holding both ends", cl.DMB.LinkID, srv.DMB.LinkID, groups)
	}
	if devs, err := c.DevicesD(); err != nil || len(devs) != 0 {
		t.Errorf("GET_DEV_SMCD: %+v, %v; want the loopback left out", devs, err)
	}
	st, err := c.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.SMCD.ClientV2Succ == 0 || st.SMCD.ServerV2Succ != st.SMCD.ClientV2Succ || st.SMCR.ClientV2Succ != 0 || st.SMCD.TxBytes == 0 {
		t.Errorf("statistics: SMC-D %+v, SMC-R %+v", st.SMCD, st.SMCR)
	}
}
