package monitor

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/smcscope/smcscope/smcnl"
)

// TestKernelCursorsFromReply holds every kernel row's cursors, flags,
// shutdown state and SMC-D tokens to the kernel's reply they come from
// (the recorded sock_diag dump), on 6.12 (SMC-R, a wrapped RMBE) and 7.3
// (SMC-D over the DIBS loopback).
func TestKernelCursorsFromReply(t *testing.T) {
	for _, rec := range []string{"pingpong-client-active", "long-client-active", "multilink-client-before", "smcd-client-active"} {
		t.Run(rec, func(t *testing.T) {
			dir := "../smcnl/testdata/" + rec
			socks, err := smcnl.ReplaySockets(dir)
			if err != nil {
				t.Fatal(err)
			}
			s := New(Options{Kernel: recorded(t, rec), Now: fixedClock()}).Refresh()
			byKey := map[string]ConnRow{}
			for _, c := range s.Conns {
				byKey[c.Key] = c
			}
			for _, sk := range socks {
				rows, _, _ := kernelConns([]smcnl.Socket{sk}, newLinkIndex(nil), nil)
				r := byKey[rows[0].Key]
				if r.UID == nil || *r.UID != sk.UID || r.IfIndex != sk.IfIndex {
					t.Errorf("%s: uid %v ifindex %d, reply %d %d", r.Key, r.UID, r.IfIndex, sk.UID, sk.IfIndex)
				}
				if r.Shutdown != sk.Shutdown.String() {
					t.Errorf("%s: shutdown %q, reply %v", r.Key, r.Shutdown, sk.Shutdown)
				}
				if sk.Conn == nil {
					if r.Cursors != nil {
						t.Errorf("%s: cursors %+v without SMC_DIAG_CONNINFO", r.Key, r.Cursors)
					}
					continue
				}
				c, k := r.Cursors, sk.Conn
				if c == nil {
					t.Fatalf("%s: no cursors", r.Key)
				}
				for _, p := range []struct {
					name string
					got  Cursor
					want smcnl.Cursor
				}{{"rx_prod", c.RxProd, k.RxProd}, {"rx_cons", c.RxCons, k.RxCons}, {"tx_prod", c.TxProd, k.TxProd},
					{"tx_cons", c.TxCons, k.TxCons}, {"tx_prep", c.TxPrep, k.TxPrep}, {"tx_sent", c.TxSent, k.TxSent}, {"tx_fin", c.TxFin, k.TxFin}} {
					if p.got.Wrap != p.want.Wrap || p.got.Count != p.want.Count {
						t.Errorf("%s: %s %v, reply %v", r.Key, p.name, p.got, p.want)
					}
				}
				if uint8(c.RxFlags.Prod) != k.RxProdFlags || uint8(c.RxFlags.Conn) != k.RxConnStateFlags ||
					uint8(c.TxFlags.Prod) != k.TxProdFlags || uint8(c.TxFlags.Conn) != k.TxConnStateFlags {
					t.Errorf("%s: flags rx %v tx %v, reply %+v", r.Key, c.RxFlags, c.TxFlags, k)
				}
				if sk.DMB != nil && r.Mode == ModeSMCD && (r.DMB == nil || uint64(r.DMB.Token) != sk.DMB.Token || uint64(r.DMB.PeerToken) != sk.DMB.PeerToken) {
					t.Errorf("%s: DMB %+v, reply %+v", r.Key, r.DMB, sk.DMB)
				}
			}
		})
	}
}

// TestCursorLags: the lags the cursors imply, on the recorded sockets
// whose values the lab's ground truth names (smcnl/testdata/README.md):
// the long run's cursors have wrapped the 64 KiB RMBE once (wrap 1), and
// the SMC-D server end had 64 bytes sent the peer had not yet read (its
// tx_prod 2816, the peer's consumer cursor 2752; 7.3 guest).
func TestCursorLags(t *testing.T) {
	for _, tt := range []struct {
		rec, key                    string
		unread, unconfirmed, unsent uint64
		rxFlags, txFlags            string
		wantDMB                     bool
	}{
		{"long-client-active", "inode:430", 0, 0, 0, "00:00", "00:00", false},
		{"smcd-client-active", "inode:607", 0, 64, 0, "00:00", "00:00", true},
		{"smcd-client-active", "inode:603", 0, 0, 0, "00:00", "00:00", true},
	} {
		s := New(Options{Kernel: recorded(t, tt.rec), Now: fixedClock()}).Refresh()
		for _, c := range s.Conns {
			if c.Key != tt.key {
				continue
			}
			cur := c.Cursors
			if cur.RxUnread != tt.unread || cur.TxUnconfirmed != tt.unconfirmed || cur.TxUnsent != tt.unsent ||
				cur.RxFlags.String() != tt.rxFlags || cur.TxFlags.String() != tt.txFlags || (c.DMB != nil) != tt.wantDMB {
				t.Errorf("%s %s: %+v dmb %v", tt.rec, tt.key, cur, c.DMB)
			}
		}
	}
	// The wrap: 1/30465 from 1/30464 is one byte; 1/10 from 0/65000 in a
	// 65536-byte ring is 546 (smc_curs_diff).
	var c Cursors
	kernelCursors(&c, &smcnl.ConnInfo{RMBESize: 65536, PeerRMBESize: 65536, SndBufSize: 65536,
		RxProd: smcnl.Cursor{Wrap: 1, Count: 10}, TxCons: smcnl.Cursor{Count: 65000},
		TxProd: smcnl.Cursor{Wrap: 2, Count: 5}, RxCons: smcnl.Cursor{Wrap: 1, Count: 65535},
		TxPrep: smcnl.Cursor{Wrap: 0, Count: 100}, TxSent: smcnl.Cursor{Wrap: 0, Count: 100},
		RxConnStateFlags: 0x40, TxProdFlags: 0x80})
	if c.RxUnread != 546 || c.TxUnconfirmed != 6 || c.TxUnsent != 0 || c.RxFlags.String() != "00:40" ||
		c.RxFlags.Names() != "peer-conn-closed" || c.TxFlags.Names() != "write-blocked" {
		t.Errorf("lags %+v", c)
	}
}

// TestUnconfirmedSince: unconfirmed bytes that stand still keep the time
// they began; a peer that reads (its consumer cursor moves) starts it
// again; a socket keeps the time it entered its state.
func TestUnconfirmedSince(t *testing.T) {
	k := &cursorKernel{Kernel: recorded(t, "smcd-client-active")}
	clock := fixedClock()
	m := New(Options{Kernel: k, Now: clock})
	first := m.Refresh()
	second := m.Refresh()
	k.move = true
	third := m.Refresh()
	get := func(s Snapshot) ConnRow {
		for _, c := range s.Conns {
			if c.Key == "inode:607" {
				return c
			}
		}
		t.Fatal("no inode:607")
		return ConnRow{}
	}
	a, b, c := get(first), get(second), get(third)
	if !b.Cursors.UnconfirmedSince.Equal(a.Cursors.UnconfirmedSince) || a.Cursors.UnconfirmedSince.IsZero() {
		t.Errorf("still: since %v then %v", a.Cursors.UnconfirmedSince, b.Cursors.UnconfirmedSince)
	}
	if !c.Cursors.UnconfirmedSince.Equal(third.Time) {
		t.Errorf("moved: since %v, want %v", c.Cursors.UnconfirmedSince, third.Time)
	}
	if !c.StateSince.Equal(first.Time) {
		t.Errorf("state since %v, want the first refresh %v", c.StateSince, first.Time)
	}
}

// cursorKernel moves the peer's consumer cursor of every socket once move is set.
type cursorKernel struct {
	Kernel
	move bool
}

func (k *cursorKernel) Sockets() ([]smcnl.Socket, error) {
	ss, err := k.Kernel.Sockets()
	for i := range ss {
		if c := ss[i].Conn; c != nil && k.move {
			cc := *c
			cc.RxCons.Count += 32
			ss[i].Conn = &cc
		}
	}
	return ss, err
}

// TestKernelStatsFull: every counter of the recorded GET_STATS reply in
// the snapshot, the v1/v2 split summing to the totals, and the buffer
// counters kept apart (buffers_full stays their sum).
func TestKernelStatsFull(t *testing.T) {
	k := recorded(t, "smcd-client-active")
	st, err := k.Stats()
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Kernel: k, Now: fixedClock()}).Refresh()
	for _, tt := range []struct {
		name string
		got  TechTotals
		want smcnl.TechStats
	}{{"smcr", s.Kernel.SMCR, st.SMCR}, {"smcd", s.Kernel.SMCD, st.SMCD}} {
		g, w := tt.got, tt.want
		if g.ClientV1Success != w.ClientV1Succ || g.ClientV2Success != w.ClientV2Succ || g.ServerV1Success != w.ServerV1Succ ||
			g.ServerV2Success != w.ServerV2Succ || g.ClientSuccess != w.ClientV1Succ+w.ClientV2Succ {
			t.Errorf("%s: successes %+v, reply %+v", tt.name, g, w)
		}
		if [9]uint64(g.RxBufferSizes) != [9]uint64(w.RxRMBSize) || [9]uint64(g.TxBufferSizes) != [9]uint64(w.TxRMBSize) ||
			[9]uint64(g.RxPayloadSizes) != [9]uint64(w.RxPayloadSize) || [9]uint64(g.TxPayloadSizes) != [9]uint64(w.TxPayloadSize) {
			t.Errorf("%s: histograms differ from the reply", tt.name)
		}
		if g.RxBuffer.Full != w.RxRMBStats.Full || g.TxBuffer.FullPeer != w.TxRMBStats.FullPeer || g.RxBuffer.Alloc != w.RxRMBStats.Alloc ||
			g.TxBuffer.Reuse != w.TxRMBStats.Reuse || g.RxBuffer.SizeSmall != w.RxRMBStats.SizeSmall || g.TxBuffer.Downgrade != w.TxRMBStats.Downgrade {
			t.Errorf("%s: buffer events %+v %+v, reply %+v %+v", tt.name, g.RxBuffer, g.TxBuffer, w.RxRMBStats, w.TxRMBStats)
		}
		if g.Calls.Nodelay != w.NodelayCount || g.Calls.Cork != w.CorkCount || g.Calls.Splice != w.SpliceCount || g.Calls.UrgentData != w.UrgDataCount {
			t.Errorf("%s: calls %+v", tt.name, g.Calls)
		}
	}
	if s.Kernel.SMCD.RxBufferSizes.Total() == 0 || s.Kernel.SMCD.ClientV2Success == 0 {
		t.Errorf("the SMC-D run made v2 connections with buffers: %+v", s.Kernel.SMCD)
	}
	b, err := json.Marshal(s.Kernel.SMCD.RxBufferSizes)
	if err != nil {
		t.Fatal(err)
	}
	var back SizeHistogram
	if err := json.Unmarshal(b, &back); err != nil || back != s.Kernel.SMCD.RxBufferSizes {
		t.Errorf("histogram JSON %s read back as %v (%v)", b, back, err)
	}
}

// TestSystemInfo: SYS_INFO, the EIDs and the PNET table as the kernel
// replied, on 6.12 (SMC-R only, no SEID) and on 7.3 (SMC-D v2 capable
// through the DIBS loopback: a SEID reported, empty and not in use).
// A recording without pnet.bin leaves the table unknown (null), not
// empty.
func TestSystemInfo(t *testing.T) {
	for _, tt := range []struct {
		rec  string
		want SystemInfo
	}{
		{"pingpong-client-active", SystemInfo{Version: 2, Release: 1, SMCRv2: true, LocalHost: "(none)", UEIDs: []string{"SMC-LAB-UEID"}}},
		{"no-ueid-client-active", SystemInfo{Version: 2, Release: 1, SMCRv2: true, LocalHost: "(none)", UEIDs: []string{}}},
		{"smcd-client-active", SystemInfo{Version: 2, Release: 1, SMCRv2: true, SMCDv2: true, LocalHost: "(none)",
			SEID: &SEID{}, UEIDs: []string{"SMC-LAB-UEID"}}},
	} {
		s := New(Options{Kernel: recorded(t, tt.rec), Now: fixedClock()}).Refresh()
		if s.System == nil {
			t.Fatalf("%s: no system info", tt.rec)
		}
		got := *s.System
		if len(got.Errors) != 1 || got.PNET != nil {
			t.Errorf("%s: errors %q pnet %v, want the missing pnet.bin only", tt.rec, got.Errors, got.PNET)
		}
		got.Errors = nil
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", tt.rec, d)
		}
	}
}

// pnetKernel adds a PNET table to a recording: lo (the DIBS loopback)
// and eth1 under LABNET, as smc_pnet -a LABNET -I lo -I eth1 makes it.
type pnetKernel struct{ Kernel }

func (pnetKernel) PNETIDs() ([]smcnl.PNETEntry, error) {
	return []smcnl.PNETEntry{{PNETID: "LABNET", EthName: "eth1"}, {PNETID: "LABNET", IBName: "lo", IBPort: 1}}, nil
}

// noSMCD is a host whose SMC-D sockets and groups are gone.
type noSMCD struct{ Kernel }

func (noSMCD) Sockets() ([]smcnl.Socket, error)         { return nil, nil }
func (noSMCD) LinkGroupsD() ([]smcnl.LinkGroupD, error) { return nil, nil }

// TestDIBSUsedBySMC: a DIBS device is used by SMC as the kernel says:
// the loopback, which GET_DEV_SMCD never lists, while the kernel's SMC-D
// groups or sockets are on it, and not once they are gone; its PNET ID
// is the PNET table's entry for it, user-set.
func TestDIBSUsedBySMC(t *testing.T) {
	sys := filepath.Join(smcdRecording, "sys")
	dev := func(s Snapshot) DeviceRow {
		for _, d := range s.Devices {
			if d.Kind == DeviceDIBS && d.Name == "lo" {
				return d
			}
		}
		t.Fatal("no DIBS lo")
		return DeviceRow{}
	}
	used := dev(New(Options{Kernel: pnetKernel{recorded(t, "smcd-client-active")}, SysfsRoot: sys, Now: fixedClock()}).Refresh())
	if !used.SMC || used.PNETID != "LABNET" || !used.PNETIDByUser || used.Conns != 2 {
		t.Errorf("lo with SMC-D connections: %+v", used)
	}
	idle := dev(New(Options{Kernel: noSMCD{recorded(t, "smcd-client-active")}, SysfsRoot: sys, Now: fixedClock()}).Refresh())
	if idle.SMC || idle.PNETID != "" {
		t.Errorf("lo without SMC-D groups, not in GET_DEV_SMCD: %+v", idle)
	}
}

// TestDIBSListed: an ISM that GET_DEV_SMCD lists (by its PCI parent) is
// used by SMC with the PNET ID the kernel gives it, hardware-set.
func TestDIBSListed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "class", "dibs", "ism0")
	pci := filepath.Join(root, "devices", "pci0000:00", "0000:00:05.0")
	for _, d := range []string{dir, pci} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(pci, filepath.Join(dir, "device")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gid"), []byte("01234567-89ab-cdef-0123-456789abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := listedISM{noSMCD{recorded(t, "smcd-client-active")}}
	s := New(Options{Kernel: k, SysfsRoot: root, Now: fixedClock()}).Refresh()
	var got *DeviceRow
	for i := range s.Devices {
		if s.Devices[i].Name == "ism0" {
			got = &s.Devices[i]
		}
	}
	if got == nil || !got.SMC || got.PNETID != "NET1" || got.PNETIDByUser {
		t.Errorf("listed ISM: %+v", got)
	}
}

type listedISM struct{ Kernel }

func (listedISM) DevicesD() ([]smcnl.Device, error) {
	return []smcnl.Device{{PCIID: "0000:00:05.0", Ports: []smcnl.Port{{Number: 1, PNETID: "NET1"}}}}, nil
}

// TestListenerFamily: an AF_SMC listener's all-zero address is [::] when
// only an IPv6 TCP socket listens on its port (/proc/net/tcp6), 0.0.0.0
// when only an IPv4 one does, and of unknown family otherwise (the
// recording of the 7.3 guest's listeners on 5000 and 5002).
func TestListenerFamily(t *testing.T) {
	proc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proc, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	const head = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	tcp6 := head + "   0: 00000000000000000000000000000000:138A 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1 0000000000000000 100 0 0 10 0\n"
	tcp := head + "   0: 00000000:1388 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 101 1 0000000000000000 100 0 0 10 0\n"
	for name, body := range map[string]string{"tcp": tcp, "tcp6": tcp6} {
		if err := os.WriteFile(filepath.Join(proc, "net", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := map[uint16]string{}
	unknown := map[uint16]bool{}
	s := New(Options{Kernel: recorded(t, "smcd-client-active"), ProcRoot: proc, Now: fixedClock()}).Refresh()
	for _, c := range s.Conns {
		if c.Mode == ModeListen {
			got[c.Src.Port()], unknown[c.Src.Port()] = c.Src.Addr().String(), c.FamilyUnknown
		}
	}
	if got[5002] != "::" || got[5000] != "0.0.0.0" || unknown[5000] || unknown[5002] {
		t.Errorf("listeners %v unknown %v", got, unknown)
	}
	s = New(Options{Kernel: recorded(t, "smcd-client-active"), Now: fixedClock()}).Refresh()
	for _, c := range s.Conns {
		if c.Mode == ModeListen && !c.FamilyUnknown {
			t.Errorf("%s without /proc/net: family known", c.Key)
		}
	}
}

// TestUnlistedConns: a socket the application closed leaves sock_diag
// while its group still counts its connection; the overview says how
// many such connections there are.
func TestUnlistedConns(t *testing.T) {
	s := New(Options{Kernel: closedOne{recorded(t, "multiconn-client-active")}, Now: fixedClock()}).Refresh()
	if n := s.Overview.UnlistedConns; n == nil || *n != 1 || s.Overview.SMCR != 3 {
		t.Errorf("overview %+v, want 3 SMC-R sockets and 1 connection without a socket", s.Overview)
	}
	s = New(Options{Kernel: recorded(t, "multiconn-client-active"), Now: fixedClock()}).Refresh()
	if n := s.Overview.UnlistedConns; n == nil || *n != 0 {
		t.Errorf("every connection has its socket: %+v", s.Overview)
	}
	// A capture without the kernel cannot tell: absent, not 0.
	w, err := OpenWire("../samples/pingpong.pcap", "", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := New(Options{Wire: w, Now: fixedClock()})
	defer m.Close()
	if n := m.Refresh().Overview.UnlistedConns; n != nil {
		t.Errorf("a capture's overview says %d connections without socket", *n)
	}
}

// closedOne drops the first SMC-R socket from the dump.
type closedOne struct{ Kernel }

func (k closedOne) Sockets() ([]smcnl.Socket, error) {
	ss, err := k.Kernel.Sockets()
	for i, s := range ss {
		if s.Mode == smcnl.ModeSMCR && s.State == smcnl.StateActive {
			return append(ss[:i:i], ss[i+1:]...), err
		}
	}
	return ss, err
}

// closingKernel puts every SMC socket in APPCLOSEWAIT1 with its receiving
// side shut (the peer closed, the application did not), and counts one
// more too-small buffer on every read.
type closingKernel struct {
	Kernel
	small uint64
}

func (k *closingKernel) Sockets() ([]smcnl.Socket, error) {
	ss, err := k.Kernel.Sockets()
	for i := range ss {
		if ss[i].Mode == smcnl.ModeSMCD && ss[i].State == smcnl.StateActive {
			ss[i].State, ss[i].Shutdown = smcnl.StateAppCloseWait1, 1
		}
	}
	return ss, err
}

func (k *closingKernel) Stats() (smcnl.Stats, error) {
	s, err := k.Kernel.Stats()
	k.small++
	s.SMCD.RxRMBStats.SizeSmall += k.small
	return s, err
}

// TestSocketFindings: a socket a minute in a closing state, sent data
// unread by the peer for 30 s, and buffers made too small are each a
// kernel finding, found once when crossed (the 7.3 SMC-D recording, its
// server end with 64 bytes the peer has not read).
func TestSocketFindings(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	m := New(Options{Kernel: &closingKernel{Kernel: recorded(t, "smcd-client-active")}, Now: func() time.Time { at = at.Add(31 * time.Second); return at }})
	count := func(s Snapshot) map[string]int {
		n := map[string]int{}
		for _, e := range s.Events {
			if e.Finding != 0 {
				n[e.Finding.String()+" "+e.Conn]++
			}
		}
		return n
	}
	m.Refresh()
	s := m.Refresh() // 31 s: the unconfirmed bytes cross 30 s
	if n := count(s); n["smc.kernel.tx_unconfirmed inode:607"] != 1 || n["smc.kernel.close_stuck inode:607"] != 0 || n["smc.kernel.buffer_small "] != 1 {
		t.Errorf("after 31 s: %v", n)
	}
	m.Refresh()
	s = m.Refresh() // 62 s in the state at the third refresh: stuck; nothing found twice
	n := count(s)
	if n["smc.kernel.close_stuck inode:607"] != 1 || n["smc.kernel.close_stuck inode:603"] != 1 || n["smc.kernel.tx_unconfirmed inode:607"] != 1 {
		t.Errorf("after 93 s: %v", n)
	}
	for _, e := range s.Events {
		if e.Finding.String() == "smc.kernel.close_stuck" && e.Conn == "inode:607" && !strings.Contains(e.Text, "APPCLOSEWAIT1 (shutdown R->) for 1m2s") {
			t.Errorf("close_stuck text %q", e.Text)
		}
	}
}

// TestRecordedDIBSUnused: the lab's 7.3 e2e-smc server (smcnl/testdata/
// e2e-smc-server-obs): GET_DEV_SMCD empty, no SMC-D group, the DIBS
// loopback under LABNOSMCD in the PNET table; smctop says lo is not used
// by SMC and has that user-set PNET ID, as smctop in that guest said.
func TestRecordedDIBSUnused(t *testing.T) {
	const rec = "../smcnl/testdata/e2e-smc-server-obs"
	s := New(Options{Kernel: recorded(t, "e2e-smc-server-obs"), SysfsRoot: filepath.Join(rec, "sys"), Now: fixedClock()}).Refresh()
	var lo *DeviceRow
	for i := range s.Devices {
		if s.Devices[i].Kind == DeviceDIBS && s.Devices[i].Name == "lo" {
			lo = &s.Devices[i]
		}
	}
	if lo == nil || lo.SMC || lo.PNETID != "LABNOSMCD" || !lo.PNETIDByUser || lo.Conns != 0 {
		t.Errorf("lo: %+v", lo)
	}
	if s.System == nil || len(s.System.PNET) != 3 || s.System.SEID == nil || !s.System.SMCDv2 {
		t.Errorf("system: %+v", s.System)
	}
	for _, c := range s.Conns {
		if c.Key == "inode:1044" && (c.Cursors == nil || c.Cursors.TxUnconfirmed != 64) {
			t.Errorf("the paced connection's server end: %+v", c.Cursors)
		}
	}
}

// TestSMCToolsJSONRoundTrip: what --remote reads back from another host's
// /snapshot.json is what that host had: cursors and flags, DMB tokens
// (all 64 bits, which a JSON number would round), histograms, system info.
func TestSMCToolsJSONRoundTrip(t *testing.T) {
	s := New(Options{Kernel: pnetKernel{recorded(t, "smcd-client-active")}, SysfsRoot: filepath.Join(smcdRecording, "sys"), Now: fixedClock()}).Refresh()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(s.Conns, back.Conns, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); d != "" {
		t.Errorf("connections (-sent +read):\n%s", d)
	}
	if d := cmp.Diff(s.Kernel, back.Kernel); d != "" {
		t.Errorf("statistics (-sent +read):\n%s", d)
	}
	if d := cmp.Diff(s.System, back.System); d != "" {
		t.Errorf("system (-sent +read):\n%s", d)
	}
	if !strings.Contains(string(b), `"token":"0x`) || !strings.Contains(string(b), `"rx_buffer_sizes":{"8K":0,`) {
		t.Errorf("DMB tokens as hex and histograms by bucket name expected in %s", b)
	}
}
