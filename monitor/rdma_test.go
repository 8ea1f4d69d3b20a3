package monitor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
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
