package lab

import (
	"encoding/json"
	"net/netip"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/smcnl"
)

// e2e-smcd (7.3 only): SMC-D over the DIBS loopback "lo" in one guest, an smcping
// server and its clients on 127.0.0.1 (lab/guest/scenarios.sh smcd_client). The kernel's
// own view is smclab's raw dump (sock_diag and SMC netlink through package smcnl, written
// as JSON), taken just before and just after smctop's snapshot of the same moment while a
// paced connection runs; what stayed the same in both dumps is what smctop must show.

// kernelSock is one socket of `smclab diag -json` (smcnl.Socket as JSON: enums by name).
type kernelSock struct {
	Family      uint8
	State, Mode string
	Src, Dst    netip.AddrPort
	Cookie      uint64
	Inode       uint64
	Conn        *smcnl.ConnInfo
	DMB         *smcnl.DMBInfo
}

func kernelSockets(t *testing.T, path string) []kernelSock {
	t.Helper()
	var out []kernelSock
	if err := json.Unmarshal([]byte(readFile(t, path)), &out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func kernelLGRDs(t *testing.T, path string) []smcnl.LinkGroupD {
	t.Helper()
	var out struct {
		SMCD []smcnl.LinkGroupD `json:"smcd"`
	}
	if err := json.Unmarshal([]byte(readFile(t, path)), &out); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out.SMCD
}

// loGID is the DIBS loopback's GID as the guest's sysfs wrote it.
func loGID(t *testing.T, dir string) string {
	t.Helper()
	g := strings.TrimSpace(readFile(t, filepath.Join(dir, "e2e-smcd", "client", "dibs-lo-gid.txt")))
	if _, _, err := smcnl.ParseSMCDGID(g); err != nil {
		t.Fatalf("/sys/class/dibs/lo/gid: %v", err)
	}
	return g
}

// TestSmcpingProvesSMCD: smcping --check over 127.0.0.1 proves SMC-D and names the DIBS
// device, the link group and the DMB; its JSON carries the same, and the device's GID is
// the loopback's; --compare tcp measured SMC-D and TCP in the same run.
func TestSmcpingProvesSMCD(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smcd")
		need(t, have, "smcping")
		c := filepath.Join(dir, "e2e-smcd", "client")
		gid := loGID(t, dir)
		check := readFile(t, filepath.Join(c, "smcping-check.txt"))
		re := regexp.MustCompile(`^OK SMC-D via lo lgr 0x[0-9a-f]+ dmb 0x[0-9a-f]+ size [0-9]+ peer dmb 0x[0-9a-f]+ gid (\S+) peer (\S+) `)
		m := re.FindStringSubmatch(check)
		if rc["smcping-check"] != 0 || m == nil || m[1] != gid || m[2] != gid {
			t.Errorf("smcping --check exit %d:\n%s\nwant OK SMC-D via lo with the loopback's GID %s on both ends", rc["smcping-check"], check, gid)
		}
		var rep struct {
			Verdict string
			Conn    struct {
				Mode string
				DMB  *struct {
					Dev       string
					LGRID     uint32 `json:"lgr_id"`
					Token     uint64
					PeerToken uint64 `json:"peer_token"`
					Size      uint32
					GID       string
					PeerGID   string `json:"peer_gid"`
				} `json:"dmb"`
			} `json:"connection"`
		}
		raw := readFile(t, filepath.Join(c, "smcping-check-json.txt"))
		if err := json.Unmarshal([]byte(raw), &rep); err != nil {
			t.Fatalf("smcping --check -o json: %v\n%s", err, raw)
		}
		d := rep.Conn.DMB
		if rep.Verdict != "OK" || rep.Conn.Mode != "SMC-D" || d == nil || d.Dev != "lo" || d.LGRID == 0 ||
			d.Token == 0 || d.PeerToken == 0 || d.Token == d.PeerToken || d.Size == 0 || d.GID != gid || d.PeerGID != gid {
			t.Errorf("smcping --check -o json: %s", raw)
		}
		// The client's link group outlives the check's connection: the paced one reuses it.
		if d != nil {
			found := false
			for _, g := range kernelLGRDs(t, filepath.Join(c, "smclab-lgr-json.txt")) {
				found = found || g.ID == d.LGRID
			}
			if !found {
				t.Errorf("the check's link group %#x is not among the kernel's SMC-D link groups", d.LGRID)
			}
		}
		for _, s := range []string{"smcping-require", "smcping-compare", "smcping-diag", "smcping-diag2"} {
			if rc[s] != 0 {
				t.Errorf("%s exit %d, want 0:\n%s", s, rc[s], readFile(t, filepath.Join(c, s+".txt")))
			}
		}
		cmp := readFile(t, filepath.Join(c, "smcping-compare.txt"))
		if !strings.Contains(cmp, "SMC-D") || !strings.Contains(cmp, "TCP") {
			t.Errorf("smcping --compare tcp did not measure SMC-D and TCP:\n%s", cmp)
		}
	})
}

// TestSmctopJoinsSMCD: smctop --once -o json shows every SMC-D socket of the kernel's
// dump joined to its link group (smcd_diag_dmbinfo.linkid is the group's ID, which SMC
// netlink's GET_LGR_SMCD lists) and to the DIBS device lo (by GID), field by field as the
// kernel reported them; lo among the devices; the SMC-D statistics.
func TestSmctopJoinsSMCD(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smcd")
		need(t, have, "smctop")
		need(t, have, "smclab")
		c := filepath.Join(dir, "e2e-smcd", "client")
		for _, st := range []string{"smctop-once", "smclab-diag-json", "smclab-lgr-json", "smclab-diag-json2", "smclab-lgr-json2"} {
			if rc[st] != 0 {
				t.Fatalf("%s exit %d", st, rc[st])
			}
		}
		gid := loGID(t, dir)
		snap := readSnapshot(t, filepath.Join(c, "smctop1.json"))
		before, after := kernelSockets(t, filepath.Join(c, "smclab-diag-json.txt")), kernelSockets(t, filepath.Join(c, "smclab-diag-json2.txt"))
		stable := map[uint64]kernelSock{}
		for _, s := range before {
			for _, a := range after {
				if s.Inode == a.Inode && s.Mode == "SMCD" && a.Mode == "SMCD" && s.State == "ACTIVE" {
					stable[s.Inode] = s
				}
			}
		}
		// The paced connection to 5002: its client and its server socket.
		paced := 0
		for _, s := range stable {
			if s.Src.Port() == 5002 || s.Dst.Port() == 5002 {
				paced++
			}
		}
		if paced != 2 {
			t.Fatalf("the kernel's dumps show %d SMC-D sockets of the paced connection on 5002, want its two ends: %+v", paced, stable)
		}
		rows := map[uint64]monitor.ConnRow{}
		for _, r := range snap.Conns {
			rows[r.Inode] = r
		}
		lgrs := map[monitor.LGRID]monitor.LinkGroupRow{}
		for _, g := range snap.LinkGroups {
			lgrs[g.ID] = g
		}
		kgroups := map[uint32]smcnl.LinkGroupD{}
		for _, g := range kernelLGRDs(t, filepath.Join(c, "smclab-lgr-json.txt")) {
			kgroups[g.ID] = g
		}
		onLo := 0
		for ino, k := range stable {
			r, ok := rows[ino]
			if !ok {
				t.Errorf("kernel socket inode %d (%v -> %v) is not in smctop's snapshot", ino, k.Src, k.Dst)
				continue
			}
			d := k.DMB
			if d == nil || k.Conn == nil {
				t.Fatalf("kernel socket inode %d without DMBINFO or CONNINFO: %+v", ino, k)
			}
			want := map[string][2]any{
				"mode":      {r.Mode, monitor.ModeSMCD},
				"src":       {r.Src, k.Src},
				"dst":       {r.Dst, k.Dst},
				"cookie":    {r.Cookie, k.Cookie},
				"lgr_id":    {uint32(r.Link().LGRID), d.LinkID},
				"dibs_dev":  {r.Link().DIBSDev, "lo"},
				"gid":       {r.Link().GID, smcnl.SMCDGID(d.MyGID, d.MyGIDExt)},
				"peer_gid":  {r.Link().PeerGID, smcnl.SMCDGID(d.PeerGID, d.PeerGIDExt)},
				"token":     {r.Token, k.Conn.Token},
				"rmbe":      {r.RMBE, k.Conn.RMBESize},
				"peer_rmbe": {r.PeerRMBE, k.Conn.PeerRMBESize},
				"sndbuf":    {r.SndBuf, k.Conn.SndBufSize},
				"lo's gid":  {r.Link().GID, gid},
			}
			for f, v := range want {
				if v[0] != v[1] {
					t.Errorf("inode %d %s: smctop %v, kernel %v", ino, f, v[0], v[1])
				}
			}
			g, ok := lgrs[r.Link().LGRID]
			kg, kok := kgroups[d.LinkID]
			if !ok || !kok {
				t.Errorf("inode %d: link group %#x in smctop %v, in the kernel's GET_LGR_SMCD %v", ino, d.LinkID, ok, kok)
				continue
			}
			if r.Link().LGRKey != g.Key {
				t.Errorf("inode %d: lgr_key %q, the group's key %q", ino, r.Link().LGRKey, g.Key)
			}
			wantG := map[string][2]any{
				"kind":       {g.Kind, monitor.ModeSMCD},
				"dibs_dev":   {g.DIBSDev, "lo"},
				"gid":        {g.GID, smcnl.SMCDGID(kg.GID, kg.ExtGID)},
				"peer_gid":   {g.PeerGID, smcnl.SMCDGID(kg.PeerGID, kg.PeerExtGID)},
				"vlan":       {g.VLANID, kg.VLANID},
				"pnetid":     {g.PNETID, kg.PNETID},
				"redundant":  {g.Redundant, false},
				"max_links":  {g.MaxLinks, uint8(0)},
				"max_conns":  {g.MaxConns, uint8(0)},
				"links":      {len(g.Links), 0},
				"socket gid": {g.GID, r.Link().GID},
			}
			if v := kg.V2Common; v != nil {
				wantG["version"] = [2]any{g.Version, v.Version}
				wantG["release"] = [2]any{g.Release, v.Release}
				wantG["eid"] = [2]any{g.EID, v.NegotiatedEID}
				wantG["peer_host"] = [2]any{g.PeerHost, v.PeerHost}
			}
			for f, v := range wantG {
				if v[0] != v[1] {
					t.Errorf("link group %#x %s: smctop %v, kernel %v", d.LinkID, f, v[0], v[1])
				}
			}
			onLo++
		}
		// Counts that may move between the dumps (another socket closing) are compared
		// only where both dumps agree.
		after2 := map[uint32]smcnl.LinkGroupD{}
		for _, g := range kernelLGRDs(t, filepath.Join(c, "smclab-lgr-json2.txt")) {
			after2[g.ID] = g
		}
		for id, kg := range kgroups {
			if a, ok := after2[id]; ok && a.Conns == kg.Conns && a.DMBAlloc == kg.DMBAlloc && a.SndBufAlloc == kg.SndBufAlloc {
				g := lgrs[monitor.LGRID(id)]
				if g.Conns != kg.Conns || g.RMBAlloc != kg.DMBAlloc || g.SndBufAlloc != kg.SndBufAlloc {
					t.Errorf("link group %#x: smctop conns %d dmb %d sndbuf %d, kernel %d %d %d", id, g.Conns, g.RMBAlloc, g.SndBufAlloc, kg.Conns, kg.DMBAlloc, kg.SndBufAlloc)
				}
			}
		}
		if len(snap.LinkGroups) < 2 {
			t.Errorf("smctop shows %d link groups; the kernel's SMC-D groups: %d", len(snap.LinkGroups), len(kgroups))
		}
		var lo *monitor.DeviceRow
		for i, d := range snap.Devices {
			if d.Kind == monitor.DeviceDIBS && d.Name == "lo" {
				lo = &snap.Devices[i]
			}
		}
		if lo == nil || lo.GID != gid || !lo.SMC || int(lo.Conns) < onLo {
			t.Errorf("DIBS device lo in smctop: %+v; want GID %s and at least the %d SMC-D connections joined", lo, gid, onLo)
		}
		if snap.Overview.SMCD < 2 || snap.Overview.DIBSDevices != 1 || snap.Overview.NoRedundancy != 0 {
			t.Errorf("overview: %+v", snap.Overview)
		}
		if k := snap.Kernel; k == nil || k.SMCD.ClientSuccess < 2 || k.SMCD.ServerSuccess < 2 || k.SMCD.TxBytes == 0 || k.SMCD.RxBytes == 0 {
			t.Errorf("SMC-D statistics in smctop: %+v", snap.Kernel)
		}
		t.Logf("smctop joined %d SMC-D sockets to their link groups and to lo (GID %s)", onLo, gid)
	})
}

// TestSmctopMetricsSMCD: the exporter in the e2e-smcd guest carries the SMC-D sockets by
// mode, their link groups and the DIBS device, and passes promtool.
func TestSmctopMetricsSMCD(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		c := filepath.Join(dir, "e2e-smcd", "client")
		text := readFile(t, filepath.Join(c, "metrics.txt"))
		gid := loGID(t, dir)
		value := func(series string) (float64, bool) {
			for _, l := range strings.Split(text, "\n") {
				if rest, ok := strings.CutPrefix(l, series+" "); ok {
					v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
					return v, err == nil
				}
			}
			return 0, false
		}
		if v, ok := value(`smc_conn_sockets{mode="SMC-D",source="kernel"}`); !ok || v < 2 {
			t.Errorf(`smc_conn_sockets{mode="SMC-D",source="kernel"} = %v (present %v), want the paced connection's two sockets at least`, v, ok)
		}
		if v, ok := value(`smc_dibs_device_connections{device="lo"}`); !ok || v < 2 {
			t.Errorf(`smc_dibs_device_connections{device="lo"} = %v (present %v)`, v, ok)
		}
		for _, want := range []string{`smc_dibs_device_info{device="lo",`, `gid="` + gid + `"`, `smc_lgr_info{`, `kind="SMC-D"`,
			`smc_lgr_connections{`, `smc_conn_handshakes_total{side="client",tech="smcd"}`} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		promtoolCheck(t, text)
	})
}

// TestSmcdumpSMCDLoopback: smcdump's live capture on the guest's lo holds the SMC-Dv2
// handshakes, and the host's smcdump calls every connection in it SMC-D.
func TestSmcdumpSMCDLoopback(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smcd")
		need(t, have, "smcdump")
		if rc["smcdump-lo"] != 0 {
			t.Errorf("smcdump -i lo exit %d after SIGINT", rc["smcdump-lo"])
		}
		pcap := filepath.Join(dir, "e2e-smcd", "client", "smcd-lo.pcapng")
		out, err := exec.Command(buildSmcdump(t), "-r", pcap, "-q", "-z", "smc,conns").Output()
		if err != nil {
			t.Fatalf("smcdump -r %s -q -z smc,conns: %v", pcap, err)
		}
		n := 0
		for _, l := range strings.Split(string(out), "\n") {
			f := strings.Fields(l)
			if len(f) < 4 || f[0] == "ID" || strings.Trim(f[0], "0123456789") != "" {
				continue
			}
			n++
			if f[3] != "SMC-D" {
				t.Errorf("connection %s -> %s: %s, want SMC-D", f[1], f[2], f[3])
			}
		}
		if n < 2 {
			t.Errorf("smcdump found %d connections in the lo capture (the two --diag runs), want 2:\n%s", n, out)
		}
	})
}

// TestSmctopTracedThroughput: smctop's per-process traffic from the smc_tx_sendmsg and
// smc_rx_recvmsg tracepoints equals the kernel's own cursors of the socket (scenarios.sh
// traced_io). The paced smcping client, one SMC-D socket, is stopped while the kernel's
// dump is taken before and after and while smctop starts, so both count the same calls:
// what it sent is the movement of tx_prep (struct smc_diag_conninfo: the send buffer's
// producer cursor, advanced by sendmsg), what it read that of tx_cons (the consumer
// cursor of its own RMBE, advanced by recvmsg). smctop's snapshot is the first after the
// stop whose totals did not move since the one before. The connection's own row carries
// the traced calls of its last interval (a process with one SMC socket).
func TestSmctopTracedThroughput(t *testing.T) {
	onKernel(t, "7.3", func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smcd")
		need(t, have, "smctop", "smclab")
		if rc["smctop-traced"] != 0 {
			t.Fatalf("smctop-traced exit %d: no settled snapshot after the client stopped", rc["smctop-traced"])
		}
		c := filepath.Join(dir, "e2e-smcd", "client")
		pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(c, "traced-pid.txt"))))
		if err != nil {
			t.Fatal(err)
		}
		// The client's socket: the one of its descriptors (guest's /proc/PID/fd) that the
		// kernel's dump lists with SMC connection state.
		inodes := map[uint64]bool{}
		for _, f := range strings.Fields(readFile(t, filepath.Join(c, "traced-inodes.txt"))) {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("traced-inodes.txt: %v", err)
			}
			inodes[n] = true
		}
		sock := func(name string) kernelSock {
			for _, s := range kernelSockets(t, filepath.Join(c, name)) {
				if inodes[s.Inode] && s.Conn != nil {
					return s
				}
			}
			t.Fatalf("%s: no SMC socket of process %d (inodes %v)", name, pid, inodes)
			return kernelSock{}
		}
		before, after := sock("traced-diag-before.json"), sock("traced-diag-after.json")
		local := before.Src
		moved := func(a, b smcnl.Cursor, size uint32) uint64 {
			return (uint64(b.Wrap)*uint64(size) + uint64(b.Count)) - (uint64(a.Wrap)*uint64(size) + uint64(a.Count))
		}
		wantTx := moved(before.Conn.TxPrep, after.Conn.TxPrep, before.Conn.SndBufSize)
		wantRx := moved(before.Conn.TxCons, after.Conn.TxCons, before.Conn.RMBESize)

		// The settled snapshot is the last complete line or close to it: smctop was stopped
		// right after it, the client still stopped.
		lines := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(c, "smctop-traced.jsonl"))), "\n")
		var snap monitor.Snapshot
		for i := len(lines) - 1; i >= 0; i-- {
			if json.Unmarshal([]byte(lines[i]), &snap) == nil {
				break
			}
		}
		var p *monitor.ProcessRow
		for i := range snap.Processes {
			if snap.Processes[i].PID == pid {
				p = &snap.Processes[i]
			}
		}
		if p == nil {
			t.Fatalf("smctop's last snapshot has no process %d: %+v (sources %+v)", pid, snap.Processes, snap.Sources)
		}
		t.Logf("process %d %s: traced tx %d B in %d calls, rx %d B in %d calls; kernel tx_prep moved %d, tx_cons %d",
			pid, p.Comm, p.TxBytes, p.TxCalls, p.RxBytes, p.RxCalls, wantTx, wantRx)
		if p.TxCalls < 10 || p.TxBytes == 0 {
			t.Errorf("process %d: %d send calls traced, want the ten round trips the scenario waited for", pid, p.TxCalls)
		}
		if p.TxBytes != wantTx || p.RxBytes != wantRx {
			t.Errorf("traced tx %d rx %d B; the kernel's cursors moved tx_prep %d, tx_cons %d B", p.TxBytes, p.RxBytes, wantTx, wantRx)
		}
		if p.Comm != "smcping" || p.Conns != 1 {
			t.Errorf("process row %+v: want smcping with its one SMC socket", *p)
		}
		// While it ran, its connection's row carried the traced calls per interval.
		traced := false
		for _, l := range lines {
			var s monitor.Snapshot
			if json.Unmarshal([]byte(l), &s) != nil {
				continue
			}
			for _, cn := range s.Conns {
				traced = traced || (cn.PID == pid && cn.Src == local && cn.Traced != nil && cn.Traced.TxCalls > 0)
			}
		}
		if !traced {
			t.Errorf("no snapshot's connection %s (pid %d) carries traced calls", local, pid)
		}
	})
}
