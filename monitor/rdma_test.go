package monitor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBrokenCounterKeepsDevices puts one unparsable counter into a copy of
// the sysfs fixture: the snapshot must still hold both RNICs with their
// other counters, and the snapshot must name the broken one.
func TestBrokenCounterKeepsDevices(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../rdmastats/testdata/sys")); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(root, "class/infiniband/rxe0/ports/1/hw_counters/rdma_sends")
	if err := os.WriteFile(bad, []byte("N/A\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := New(Options{SysfsRoot: root})
	s := m.Refresh()
	var names []string
	for _, d := range s.Devices {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"mlx5_0", "rxe0"}) {
		t.Fatalf("devices = %q, want mlx5_0 and rxe0 (sources %+v)", names, s.Sources)
	}
	var recvs, sends bool
	for _, c := range s.Devices[1].Ports[0].Counters {
		recvs = recvs || c.Name == "rdma_recvs"
		sends = sends || c.Name == "rdma_sends"
	}
	if !recvs || sends {
		t.Errorf("rxe0 counters: rdma_recvs %v, rdma_sends %v; want the broken rdma_sends alone left out", recvs, sends)
	}
	want := []string{`rxe0/1 hw_counters/rdma_sends: unparsable "N/A"`}
	if got := s.CounterErrors(); !slices.Equal(got, want) {
		t.Errorf("CounterErrors() = %q, want %q", got, want)
	}
}

// TestGIDTablesKept: every refresh reads the counters and port states, but
// the GID tables (one sysfs file per entry, 1024 per rxe port) only when
// the last read is gidMaxAge old or a port changed state.
func TestGIDTablesKept(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("../rdmastats/testdata/sys")); err != nil {
		t.Fatal(err)
	}
	write := func(rel, v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, "class/infiniband/rxe0/ports/1", rel), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addGID := func(i, gid string) {
		write("gids/"+i, gid)
		write("gid_attrs/types/"+i, "RoCE v2")
		write("gid_attrs/ndevs/"+i, "eth0")
	}
	clock := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	m := New(Options{SysfsRoot: root, Now: func() time.Time { return clock }})
	refresh := func(after time.Duration) PortRow {
		t.Helper()
		clock = clock.Add(after)
		for _, d := range m.Refresh().Devices {
			for _, p := range d.Ports {
				if d.Name == "rxe0" && p.Port == 1 {
					return p
				}
			}
		}
		t.Fatal("no rxe0 port 1")
		return PortRow{}
	}
	hasGID := func(p PortRow, gid string) bool {
		for _, g := range p.GIDs {
			if strings.HasPrefix(g, gid+" ") {
				return true
			}
		}
		return false
	}
	sent := func(p PortRow) uint64 {
		for _, c := range p.Counters {
			if c.Name == "sent_pkts" {
				return c.Value
			}
		}
		return 0
	}
	const gid2, gid3 = "0000:0000:0000:0000:0000:ffff:0a0a:000c", "0000:0000:0000:0000:0000:ffff:0a0a:000d"

	if p := refresh(time.Second); len(p.GIDs) != 2 || hasGID(p, gid2) {
		t.Fatalf("first refresh: GIDs %v, want the fixture's two", p.GIDs)
	}
	addGID("2", gid2)
	write("hw_counters/sent_pkts", "999999")
	p := refresh(time.Second)
	if sent(p) != 999999 {
		t.Errorf("sent_pkts %d, want 999999: counters are read on every refresh", sent(p))
	}
	if hasGID(p, gid2) {
		t.Errorf("GIDs %v: the table was read again a second later with no port changed", p.GIDs)
	}
	write("state", "1: DOWN")
	if p := refresh(time.Second); p.State != "DOWN" || !hasGID(p, gid2) {
		t.Errorf("after the port went down: state %s, GIDs %v; want DOWN and the table read again", p.State, p.GIDs)
	}
	addGID("3", gid3)
	if p := refresh(time.Second); hasGID(p, gid3) {
		t.Errorf("GIDs %v: the table was read again a second later with no port changed", p.GIDs)
	}
	if p := refresh(gidMaxAge); !hasGID(p, gid3) {
		t.Errorf("GIDs %v: the table was not read again after gidMaxAge", p.GIDs)
	}
}
