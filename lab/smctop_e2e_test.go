package lab

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/monitor"
)

func readSnapshot(t *testing.T, path string) monitor.Snapshot {
	t.Helper()
	var s monitor.Snapshot
	if err := json.Unmarshal([]byte(readFile(t, path)), &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

// smctopCounter returns a port counter of a device in a snapshot.
func smctopCounter(s monitor.Snapshot, dev, name string) (monitor.Counter, bool) {
	for _, d := range s.Devices {
		if d.Name != dev {
			continue
		}
		for _, p := range d.Ports {
			for _, c := range p.Counters {
				if c.Name == name {
					return c, true
				}
			}
		}
	}
	return monitor.Counter{}, false
}

// TestSmctopJoinsLiveConnection: in e2e-smc, while the paced connection to port 5002
// runs, smctop --once -o json on the server shows it as SMC-R joined (by inode, through
// its link) to the link group that smclab lists, its link on rxe0, and rxe0 as SMC's
// device with packet counters that agree with sysfs and increase between the two
// snapshots. The guest reads observe<k>.txt just before smctop<k>.json and, before the
// second pair, waits until rxe0 has sent packets since smctop1.json; each snapshot's
// delta spans its own refresh interval, after observe<k>.txt was read. Whether a ping
// fell into that interval is up to the guest's scheduler, so a zero delta is allowed.
func TestSmctopJoinsLiveConnection(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		srv := filepath.Join(dir, "e2e-smc", "server")
		var sent, sysfs []uint64
		for k := 1; k <= 2; k++ {
			sysfs = append(sysfs, hwCounters(t, readFile(t, filepath.Join(srv, fmt.Sprintf("observe%d.txt", k))), "rxe0")["sent_pkts"])
		}
		for k := 1; k <= 2; k++ {
			s := readSnapshot(t, filepath.Join(srv, fmt.Sprintf("smctop%d.json", k)))
			var conn *monitor.ConnRow
			for i, c := range s.Conns {
				if c.Mode == "SMC-R" && c.Src.String() == "10.10.0.1:5002" {
					conn = &s.Conns[i]
				}
			}
			if conn == nil {
				t.Fatalf("snapshot %d: no SMC-R connection from 10.10.0.1:5002: %+v", k, s.Conns)
			}
			if conn.Inode == 0 || conn.Link().LGRID == 0 || conn.Link().IBDev != "rxe0" || conn.Link().Role != "server" {
				t.Errorf("snapshot %d: connection not joined: %+v", k, *conn)
			}
			var lgr *monitor.LinkGroupRow
			for i, g := range s.LinkGroups {
				if g.ID == conn.Link().LGRID {
					lgr = &s.LinkGroups[i]
				}
			}
			if lgr == nil || len(lgr.Links) == 0 || lgr.Links[0].IBDev != "rxe0" || lgr.Conns == 0 {
				t.Errorf("snapshot %d: link group %#x of the connection: %+v", k, conn.Link().LGRID, lgr)
			}
			var rxe *monitor.DeviceRow
			for i, d := range s.Devices {
				if d.Name == "rxe0" {
					rxe = &s.Devices[i]
				}
			}
			if rxe == nil || !rxe.SMC {
				t.Errorf("snapshot %d: rxe0 missing or not marked as SMC's device: %+v", k, s.Devices)
			}
			c, ok := smctopCounter(s, "rxe0", "sent_pkts")
			if !ok {
				t.Fatalf("snapshot %d: no rxe0 sent_pkts", k)
			}
			if base := sysfs[k-1]; c.Value < base || c.Delta > c.Value-base || (k == 1 && c.Value > sysfs[1]) {
				t.Errorf("snapshot %d: rxe0 sent_pkts %d (delta %d over the snapshot's interval); sysfs read %d before it and %d after snapshot 1",
					k, c.Value, c.Delta, base, sysfs[1])
			}
			sent = append(sent, c.Value)
		}
		if sent[1] <= sent[0] {
			t.Errorf("rxe0 sent_pkts did not increase between the snapshots: %v", sent)
		}
	})
}

// TestSmctopFallbacks: in e2e-decline the paced connection falls back; smctop shows it
// with the kernel's reason and the peer's diagnosis by name, on both sides.
func TestSmctopFallbacks(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		for _, tt := range []struct {
			role, reason, peer string
		}{
			{"client", "PEERDECL", declineReason(dir).name},
			{"server", declineReason(dir).name, ""},
		} {
			s := readSnapshot(t, filepath.Join(dir, "e2e-decline", tt.role, "smctop1.json"))
			found := false
			for _, c := range s.Conns {
				if c.Mode == "fallback" && (c.Src.Port() == 5002 || c.Dst.Port() == 5002) &&
					strings.Contains(c.FallbackReason().Name, tt.reason) && strings.Contains(c.PeerDiagnosisReason().Name, tt.peer) && c.FallbackReason().Meaning != "" {
					found = true
				}
			}
			if !found {
				t.Errorf("e2e-decline %s: no fallback on port 5002 with reason %s peer %q: %+v", tt.role, tt.reason, tt.peer, s.Conns)
			}
			if s.Overview.Fallback == 0 {
				t.Errorf("e2e-decline %s: overview counts no fallback: %+v", tt.role, s.Overview)
			}
		}
	})
}

// TestSmctopMultilinkFailover: smctop watching the multilink client across eth1 going
// down sees both links of the link group, later one link, and the link-down and failover
// events (derived from its snapshots, or from the kernel's tracepoints). The guest takes
// eth1 down only once a snapshot shows both links, and ends smctop only once one shows
// the failover, so the stream holds both whatever a refresh costs.
func TestSmctopMultilinkFailover(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		skipKernelTimedOut(t, dir, "multilink")
		text := readFile(t, filepath.Join(dir, "multilink", "client", "smctop-stream.jsonl"))
		var snaps []monitor.Snapshot
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var s monitor.Snapshot
			if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
				t.Fatalf("snapshot %d: %v", len(snaps)+1, err)
			}
			snaps = append(snaps, s)
		}
		if len(snaps) < 2 {
			t.Fatalf("%d snapshots in the stream", len(snaps))
		}
		active := func(s monitor.Snapshot) (devs []string) {
			for _, g := range s.LinkGroups {
				for _, l := range g.Links {
					if l.State == "ACTIVE" {
						devs = append(devs, l.IBDev)
					}
				}
			}
			return devs
		}
		both, one := -1, -1
		for i, s := range snaps {
			devs := active(s)
			slices.Sort(devs)
			switch {
			case both < 0 && slices.Equal(devs, []string{"rxe0", "rxe1"}):
				both = i
			case both >= 0 && slices.Equal(devs, []string{"rxe0"}):
				one = i
			}
			if one >= 0 {
				break
			}
		}
		if both < 0 || one < 0 {
			var seen [][]string
			for _, s := range snaps {
				seen = append(seen, active(s))
			}
			t.Errorf("want a snapshot with active links on rxe0 and rxe1, then one on rxe0 alone; active links per snapshot: %v", seen)
		}
		kinds := map[monitor.EventKind]bool{}
		traced := false
		for _, e := range snaps[len(snaps)-1].Events {
			kinds[e.Kind] = true
			// The guest mounts tracefs: the link going down comes from the
			// kernel's own smc:smcr_link_down tracepoint, read by smctop from a
			// private tracefs instance.
			traced = traced || (e.Source == "tracepoint" && e.Kind == monitor.EventLinkDown && strings.Contains(e.Text, "rxe1"))
		}
		if !traced {
			t.Errorf("no smc:smcr_link_down tracepoint event on rxe1; sources %+v, events %+v", snaps[len(snaps)-1].Sources, snaps[len(snaps)-1].Events)
		}
		if !kinds[monitor.EventLinkDown] || !kinds[monitor.EventFailover] {
			t.Errorf("events of the last snapshot lack link-down or failover: %+v", snaps[len(snaps)-1].Events)
		}
	})
}

// TestSmctopMetrics: the exporter, scraped inside the e2e-smc server guest during the
// paced connection, passes promtool and carries the same join as --once.
func TestSmctopMetrics(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		text := readFile(t, filepath.Join(dir, "e2e-smc", "server", "metrics.txt"))
		for _, want := range []string{`smc_conn_sockets{mode="SMC-R",source="kernel"}`, `smc_link_info{device="rxe0"`, `smc_rnic_sent_pkts_total{device="rxe0"`} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %s", want)
			}
		}
		promtoolCheck(t, text)
	})
}

// promtoolCheck has promtool check an exporter's scrape; without promtool it skips,
// saying how to get it.
func promtoolCheck(t *testing.T, text string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skipf("promtool not installed (make test-deps installs prometheus): %v", err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestSmctopNonRoot: smctop run as deploy/systemd/smctop.service runs it (user 65534,
// only CAP_DAC_OVERRIDE and CAP_SYS_PTRACE, ambient) sees in e2e-smc, on both sides,
// what root's smctop saw a moment before: every source root had, the same SMC sockets
// (by inode) with their owners, the same link groups and links.
func TestSmctopNonRoot(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		for _, role := range []string{"server", "client"} {
			d := filepath.Join(dir, "e2e-smc", role)
			root := readSnapshot(t, filepath.Join(d, "smctop1.json"))
			user := readSnapshot(t, filepath.Join(d, "smctop-nonroot.json"))
			avail := map[monitor.SourceName]monitor.Source{}
			for _, s := range user.Sources {
				avail[s.Name] = s
			}
			for _, s := range root.Sources {
				// The tracepoints need CAP_DAC_OVERRIDE: without it events come
				// from snapshot differences, still "available".
				traced := s.Name == monitor.SourceEvents || s.Name == monitor.SourceThroughput
				if u := avail[s.Name]; s.Available && (!u.Available || traced && u.Detail != s.Detail) {
					t.Errorf("%s: source %s: root %q, unprivileged %v %q", role, s.Name, s.Detail, u.Available, u.Detail)
				}
			}
			sockets := func(s monitor.Snapshot) map[uint64]int {
				m := map[uint64]int{}
				for _, c := range s.Conns {
					if c.Source == monitor.SourceKernel && c.Inode != 0 {
						m[c.Inode] = c.PID
					}
				}
				return m
			}
			rs, us := sockets(root), sockets(user)
			if len(rs) == 0 {
				t.Fatalf("%s: root's smctop lists no SMC socket", role)
			}
			for ino, pid := range rs {
				upid, ok := us[ino]
				switch {
				case !ok:
					t.Errorf("%s: socket inode %d: root sees it, the unprivileged smctop does not", role, ino)
				case pid != 0 && upid != pid:
					t.Errorf("%s: socket inode %d: owner pid %d as root, %d unprivileged", role, ino, pid, upid)
				}
			}
			groups := func(s monitor.Snapshot) []string {
				var out []string
				for _, g := range s.LinkGroups {
					for _, l := range g.Links {
						out = append(out, fmt.Sprintf("%s link %s %s", g.Key, l.Name(), l.State))
					}
				}
				slices.Sort(out)
				return out
			}
			if r, u := groups(root), groups(user); !slices.Equal(r, u) || len(r) == 0 {
				t.Errorf("%s: link groups as root %v, unprivileged %v", role, r, u)
			}
		}
	})
}
