package lab

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/smcnl"
)

// The facts issue 31 brought from smc-tools into smctop, each held to the kernel's own
// replies recorded in the guest (smclab record, rec-PHASE-NAME.bin) just before and just
// after the smctop snapshot: what the two recordings agree on, smctop must show as is;
// what moves between them (cursors, counters) must lie between them.

// phaseRecording copies a guest's rec-PHASE-*.bin into a directory of smcnl/testdata's
// layout, so monitor.ReplayKernel and smcnl parse them as they parse a live kernel.
func phaseRecording(t *testing.T, dir, phase string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "rec-"+phase+"-*.bin"))
	if len(files) == 0 {
		t.Fatalf("no rec-%s-*.bin in %s (the guest did not record)", phase, dir)
	}
	out := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.Base(f), "rec-"+phase+"-")
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// kernelView is what one recording says of the new facts.
type kernelView struct {
	socks   map[uint64]smcnl.Socket
	stats   smcnl.Stats
	sys     smcnl.SysInfo
	ueids   []string
	seid    smcnl.SEID
	pnet    []smcnl.PNETEntry
	hasPNET bool
}

func readView(t *testing.T, rec string) kernelView {
	t.Helper()
	ss, err := smcnl.ReplaySockets(rec)
	if err != nil {
		t.Fatal(err)
	}
	v := kernelView{socks: map[uint64]smcnl.Socket{}}
	for _, s := range ss {
		v.socks[s.Inode] = s
	}
	c, err := smcnl.Replay(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v.stats, err = c.Stats(); err != nil {
		t.Fatal(err)
	}
	if v.sys, err = c.SysInfo(); err != nil {
		t.Fatal(err)
	}
	if v.ueids, err = c.UEIDs(); err != nil {
		t.Fatal(err)
	}
	if v.seid, err = c.SEID(); err != nil {
		t.Fatal(err)
	}
	if p, err := smcnl.ReplayPNET(rec); err == nil {
		v.pnet, err = p.PNETIDs()
		p.Close()
		if err != nil {
			t.Fatal(err)
		}
		v.hasPNET = true
	}
	return v
}

// between checks before <= got <= after for a value that only grows.
func between(t *testing.T, what string, before, got, after uint64) {
	t.Helper()
	if got < before || got > after {
		t.Errorf("%s: smctop %d, the kernel %d before and %d after", what, got, before, after)
	}
}

// cursorPos is a cursor's position in bytes since the connection began.
func cursorPos(wrap uint16, count, size uint32) uint64 {
	return uint64(wrap)*uint64(size) + uint64(count)
}

// checkSMCToolsFields holds one smctop snapshot to the recordings a (before) and b
// (after) of the same guest.
func checkSMCToolsFields(t *testing.T, snap monitor.Snapshot, a, b kernelView) (withCursors int) {
	t.Helper()
	rows := map[uint64]monitor.ConnRow{}
	for _, r := range snap.Conns {
		if r.Source == monitor.SourceKernel {
			rows[r.Inode] = r
		}
	}
	for ino, ka := range a.socks {
		kb, ok := b.socks[ino]
		r, shown := rows[ino]
		if !ok || !shown || ka.State != kb.State || ka.Mode != kb.Mode {
			continue // came or went, or changed, while smctop looked
		}
		if ka.Shutdown == kb.Shutdown && r.Shutdown != ka.Shutdown.String() {
			t.Errorf("inode %d shutdown: smctop %q, kernel %v", ino, r.Shutdown, ka.Shutdown)
		}
		if r.UID == nil || *r.UID != ka.UID || r.IfIndex != ka.IfIndex {
			t.Errorf("inode %d uid %v ifindex %d: kernel %d %d", ino, r.UID, r.IfIndex, ka.UID, ka.IfIndex)
		}
		if ka.Family == 43 && ka.State == smcnl.StateListen && r.FamilyUnknown {
			t.Errorf("inode %d: listener %v of unknown family, though the guest's /proc/net/tcp and tcp6 tell", ino, r.Src)
		}
		ca, cb, c := ka.Conn, kb.Conn, r.Cursors
		if ca == nil || cb == nil {
			if c != nil && ca == nil && cb == nil {
				t.Errorf("inode %d: cursors %+v without the kernel's SMC_DIAG_CONNINFO", ino, c)
			}
			continue
		}
		if c == nil {
			t.Errorf("inode %d: no cursors; the kernel reports them", ino)
			continue
		}
		withCursors++
		for _, x := range []struct {
			name      string
			a, got, b uint64
		}{
			{"rx_prod", cursorPos(ca.RxProd.Wrap, ca.RxProd.Count, ca.RMBESize), cursorPos(c.RxProd.Wrap, c.RxProd.Count, ca.RMBESize), cursorPos(cb.RxProd.Wrap, cb.RxProd.Count, ca.RMBESize)},
			{"rx_cons", cursorPos(ca.RxCons.Wrap, ca.RxCons.Count, ca.PeerRMBESize), cursorPos(c.RxCons.Wrap, c.RxCons.Count, ca.PeerRMBESize), cursorPos(cb.RxCons.Wrap, cb.RxCons.Count, ca.PeerRMBESize)},
			{"tx_prod", cursorPos(ca.TxProd.Wrap, ca.TxProd.Count, ca.PeerRMBESize), cursorPos(c.TxProd.Wrap, c.TxProd.Count, ca.PeerRMBESize), cursorPos(cb.TxProd.Wrap, cb.TxProd.Count, ca.PeerRMBESize)},
			{"tx_cons", cursorPos(ca.TxCons.Wrap, ca.TxCons.Count, ca.RMBESize), cursorPos(c.TxCons.Wrap, c.TxCons.Count, ca.RMBESize), cursorPos(cb.TxCons.Wrap, cb.TxCons.Count, ca.RMBESize)},
			{"tx_prep", cursorPos(ca.TxPrep.Wrap, ca.TxPrep.Count, ca.SndBufSize), cursorPos(c.TxPrep.Wrap, c.TxPrep.Count, ca.SndBufSize), cursorPos(cb.TxPrep.Wrap, cb.TxPrep.Count, ca.SndBufSize)},
			{"tx_sent", cursorPos(ca.TxSent.Wrap, ca.TxSent.Count, ca.SndBufSize), cursorPos(c.TxSent.Wrap, c.TxSent.Count, ca.SndBufSize), cursorPos(cb.TxSent.Wrap, cb.TxSent.Count, ca.SndBufSize)},
			{"tx_fin", cursorPos(ca.TxFin.Wrap, ca.TxFin.Count, ca.SndBufSize), cursorPos(c.TxFin.Wrap, c.TxFin.Count, ca.SndBufSize), cursorPos(cb.TxFin.Wrap, cb.TxFin.Count, ca.SndBufSize)},
		} {
			between(t, "inode "+strconv.FormatUint(ino, 10)+" "+x.name, x.a, x.got, x.b)
		}
		if *ca == *cb {
			// Nothing moved: every cursor, flag and lag is the kernel's, exactly.
			want := [][2]any{
				{uint8(c.RxFlags.Prod), ca.RxProdFlags}, {uint8(c.RxFlags.Conn), ca.RxConnStateFlags},
				{uint8(c.TxFlags.Prod), ca.TxProdFlags}, {uint8(c.TxFlags.Conn), ca.TxConnStateFlags},
				{c.TxUnconfirmed, cursorPos(ca.TxProd.Wrap, ca.TxProd.Count, ca.PeerRMBESize) - cursorPos(ca.RxCons.Wrap, ca.RxCons.Count, ca.PeerRMBESize)},
			}
			for i, w := range want {
				if w[0] != w[1] {
					t.Errorf("inode %d (unmoved) field %d: smctop %v, kernel %v", ino, i, w[0], w[1])
				}
			}
		}
		if da, db := ka.DMB, kb.DMB; da != nil && db != nil && ka.Mode == smcnl.ModeSMCD {
			if r.DMB == nil || uint64(r.DMB.Token) != da.Token || uint64(r.DMB.PeerToken) != da.PeerToken || da.Token != db.Token {
				t.Errorf("inode %d DMB tokens: smctop %+v, kernel %#x/%#x", ino, r.DMB, da.Token, da.PeerToken)
			}
		}
	}

	// The statistics only grow: every counter lies between the two recordings.
	k := snap.Kernel
	if k == nil {
		t.Fatal("no kernel statistics in smctop's snapshot")
	}
	for _, tech := range []struct {
		name   string
		got    monitor.TechTotals
		ka, kb smcnl.TechStats
	}{{"smcr", k.SMCR, a.stats.SMCR, b.stats.SMCR}, {"smcd", k.SMCD, a.stats.SMCD, b.stats.SMCD}} {
		g, x, y := tech.got, tech.ka, tech.kb
		for _, c := range []struct {
			name      string
			a, got, b uint64
		}{
			{"client_v1", x.ClientV1Succ, g.ClientV1Success, y.ClientV1Succ}, {"client_v2", x.ClientV2Succ, g.ClientV2Success, y.ClientV2Succ},
			{"server_v1", x.ServerV1Succ, g.ServerV1Success, y.ServerV1Succ}, {"server_v2", x.ServerV2Succ, g.ServerV2Success, y.ServerV2Succ},
			{"splice", x.SpliceCount, g.Calls.Splice, y.SpliceCount}, {"cork", x.CorkCount, g.Calls.Cork, y.CorkCount},
			{"nodelay", x.NodelayCount, g.Calls.Nodelay, y.NodelayCount}, {"urgent", x.UrgDataCount, g.Calls.UrgentData, y.UrgDataCount},
			{"sendpage", x.SendpageCount, g.Calls.Sendpage, y.SendpageCount},
			{"rx_full", x.RxRMBStats.Full, g.RxBuffer.Full, y.RxRMBStats.Full}, {"tx_full", x.TxRMBStats.Full, g.TxBuffer.Full, y.TxRMBStats.Full},
			{"tx_full_peer", x.TxRMBStats.FullPeer, g.TxBuffer.FullPeer, y.TxRMBStats.FullPeer},
			{"rx_small", x.RxRMBStats.SizeSmall, g.RxBuffer.SizeSmall, y.RxRMBStats.SizeSmall}, {"tx_small_peer", x.TxRMBStats.SizeSmallPeer, g.TxBuffer.SizeSmallPeer, y.TxRMBStats.SizeSmallPeer},
			{"rx_alloc", x.RxRMBStats.Alloc, g.RxBuffer.Alloc, y.RxRMBStats.Alloc}, {"tx_alloc", x.TxRMBStats.Alloc, g.TxBuffer.Alloc, y.TxRMBStats.Alloc},
			{"rx_reuse", x.RxRMBStats.Reuse, g.RxBuffer.Reuse, y.RxRMBStats.Reuse}, {"tx_reuse", x.TxRMBStats.Reuse, g.TxBuffer.Reuse, y.TxRMBStats.Reuse},
			{"rx_downgrade", x.RxRMBStats.Downgrade, g.RxBuffer.Downgrade, y.RxRMBStats.Downgrade},
		} {
			between(t, tech.name+" "+c.name, c.a, c.got, c.b)
		}
		for i, bucket := range monitor.SizeBuckets {
			between(t, tech.name+" rx buffer size "+bucket, x.RxRMBSize[i], g.RxBufferSizes[i], y.RxRMBSize[i])
			between(t, tech.name+" tx buffer size "+bucket, x.TxRMBSize[i], g.TxBufferSizes[i], y.TxRMBSize[i])
			between(t, tech.name+" rx payload "+bucket, x.RxPayloadSize[i], g.RxPayloadSizes[i], y.RxPayloadSize[i])
			between(t, tech.name+" tx payload "+bucket, x.TxPayloadSize[i], g.TxPayloadSizes[i], y.TxPayloadSize[i])
		}
	}

	// System information, EIDs and the PNET table do not move.
	si := snap.System
	if si == nil {
		t.Fatal("no system information in smctop's snapshot")
	}
	if a.sys == b.sys && (si.Version != a.sys.Version || si.Release != a.sys.Release || si.SMCRv2 != a.sys.SMCRv2 ||
		si.SMCDv2 != a.sys.ISMv2 || si.LocalHost != strings.TrimSpace(a.sys.LocalHost)) {
		t.Errorf("system: smctop %+v, kernel %+v", si, a.sys)
	}
	if slices.Equal(a.ueids, b.ueids) && !slices.Equal(si.UEIDs, a.ueids) && !(len(a.ueids) == 0 && len(si.UEIDs) == 0) {
		t.Errorf("UEIDs: smctop %q, kernel %q", si.UEIDs, a.ueids)
	}
	if a.seid == b.seid {
		switch {
		case a.seid.Reported && (si.SEID == nil || si.SEID.EID != a.seid.EID || si.SEID.Enabled != a.seid.Enabled):
			t.Errorf("SEID: smctop %+v, kernel %+v", si.SEID, a.seid)
		case !a.seid.Reported && si.SEID != nil:
			t.Errorf("SEID: smctop %+v, the kernel reports none", si.SEID)
		}
	}
	if !a.hasPNET {
		t.Fatal("no rec-*-pnet.bin: the guest's smclab did not record the PNET table")
	}
	if slices.Equal(a.pnet, b.pnet) {
		var want []monitor.PNETRow
		for _, e := range a.pnet {
			want = append(want, monitor.PNETRow{PNETID: e.PNETID, NetDev: e.EthName, Device: e.IBName, DevPort: e.IBPort})
		}
		if !slices.Equal(si.PNET, want) && !(len(want) == 0 && len(si.PNET) == 0) {
			t.Errorf("PNET table: smctop %+v, kernel %+v", si.PNET, a.pnet)
		}
	}
	return withCursors
}

// dibsLo returns smctop's row of the DIBS loopback, nil without one.
func dibsLo(snap monitor.Snapshot) *monitor.DeviceRow {
	for i, d := range snap.Devices {
		if d.Kind == monitor.DeviceDIBS && d.Name == "lo" {
			return &snap.Devices[i]
		}
	}
	return nil
}

// TestSmctopSMCToolsFieldsSMCR: e2e-smc's server and client on 6.12 and 7.3, the paced
// SMC-R connection running: every socket's shutdown, cursors (between the recordings;
// exact where nothing moved), the statistics (v1/v2, calls, buffer events, the size
// histograms), system information, UEIDs, SEID and PNET table as the kernel replied. On
// 7.3 the DIBS loopback carries no SMC-D (on the server shift_ids gave it a PNET ID no
// netdev has): smctop says it is not used, with the user-set PNET ID the table has.
func TestSmctopSMCToolsFieldsSMCR(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		_, have := steps(t, dir, "e2e-smc")
		need(t, have, "smctop", "smclab")
		for _, role := range []string{"server", "client"} {
			t.Run(role, func(t *testing.T) {
				d := filepath.Join(dir, "e2e-smc", role)
				a, b := readView(t, phaseRecording(t, d, "obsa")), readView(t, phaseRecording(t, d, "obsb"))
				snap := readSnapshot(t, filepath.Join(d, "smctop1.json"))
				if n := checkSMCToolsFields(t, snap, a, b); n == 0 {
					t.Errorf("no socket with cursors in both recordings and smctop: the paced connection is missing")
				}
				lo := dibsLo(snap)
				switch kernelOf(dir) {
				case "7.3":
					// The server's shift_ids put lo under LABNOSMCD; the client's lo has
					// no PNET ID. Either way the PNET table the kernel replied says it.
					want := ""
					for _, e := range a.pnet {
						if e.IBName == "lo" {
							want = e.PNETID
						}
					}
					if role == "server" && want != "LABNOSMCD" {
						t.Errorf("the server's PNET table %+v lacks lo under LABNOSMCD (shift_ids)", a.pnet)
					}
					if lo == nil || lo.SMC || lo.PNETID != want || lo.PNETIDByUser != (want != "") {
						t.Errorf("DIBS lo: %+v; want not used by SMC (GET_DEV_SMCD never lists it, no SMC-D group is on it), PNET ID %q as the PNET table has it", lo, want)
					}
				default:
					if lo != nil {
						t.Errorf("6.12 has no DIBS, smctop shows %+v", lo)
					}
				}
				if snap.Overview.UnlistedConns == nil {
					t.Errorf("overview %+v: the kernel was read, the count of connections without socket is known", snap.Overview)
				}
			})
		}
	})
}

// TestSmctopSMCToolsFieldsSMCD: e2e-smcd on 7.3, SMC-D over the DIBS loopback: the same
// fields, the DMB tokens of both ends of the paced connection, the SEID the kernel
// reports once SMC-D v2 capable, and lo used by SMC since SMC-D link groups are on it.
func TestSmctopSMCToolsFieldsSMCD(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		_, have := steps(t, dir, "e2e-smcd")
		need(t, have, "smctop", "smclab")
		d := filepath.Join(dir, "e2e-smcd", "client")
		a, b := readView(t, phaseRecording(t, d, "active")), readView(t, phaseRecording(t, d, "active2"))
		snap := readSnapshot(t, filepath.Join(d, "smctop1.json"))
		if n := checkSMCToolsFields(t, snap, a, b); n < 2 {
			t.Errorf("%d SMC-D sockets with cursors in both recordings and smctop, want the paced connection's two ends", n)
		}
		dmb := 0
		for _, r := range snap.Conns {
			if r.Mode == monitor.ModeSMCD && r.DMB != nil && r.DMB.Token != 0 {
				dmb++
			}
		}
		if dmb < 2 || !a.seid.Reported || snap.System.SEID == nil {
			t.Errorf("SMC-D: %d sockets with DMB tokens, SEID kernel %+v smctop %+v", dmb, a.seid, snap.System.SEID)
		}
		if lo := dibsLo(snap); lo == nil || !lo.SMC {
			t.Errorf("DIBS lo: %+v; want used by SMC (its SMC-D link groups)", lo)
		}
	})
}
