package rdmastats

import (
	"net"
	"slices"
	"testing"

	"github.com/Mellanox/rdmamap"
)

// TestLiveDeviceForNetdev runs rdmamap against this machine. The loopback
// interface never has an RDMA device, on any host, so the answer is known.
func TestLiveDeviceForNetdev(t *testing.T) {
	if _, err := net.InterfaceByName("lo"); err != nil {
		t.Skipf("needs a loopback interface named lo: %v", err)
	}
	if dev, err := LiveDeviceForNetdev("lo"); err == nil {
		t.Errorf(`LiveDeviceForNetdev("lo") = %q, want an error`, dev)
	}
	if dev, err := LiveDeviceForNetdev("no-such-netdev0"); err == nil {
		t.Errorf(`LiveDeviceForNetdev("no-such-netdev0") = %q, want an error`, dev)
	}
}

// TestLiveMatchesRdmamap cross-checks FS on the real /sys against rdmamap,
// which reads the same tree by its own code: same devices, same counter
// names per port, same netdev mapping. It needs an RDMA device (a lab
// guest with rxe, or any RoCE host) and skips elsewhere.
func TestLiveMatchesRdmamap(t *testing.T) {
	want := rdmamap.GetRdmaDeviceList()
	if len(want) == 0 {
		t.Skip("needs an RDMA device in /sys/class/infiniband (e.g. rdma link add rxe0 type rxe netdev eth0)")
	}
	slices.Sort(want)
	f := NewFS("/sys")
	got, err := f.DeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("DeviceNames() = %q, rdmamap says %q", got, want)
	}
	devs, err := f.Devices()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		for _, p := range d.Ports {
			stats, err := rdmamap.GetRdmaSysfsAllStats(d.Name, p.Port)
			if err != nil {
				t.Errorf("rdmamap %s/%d: %v", d.Name, p.Port, err)
				continue
			}
			compareNames(t, d.Name+"/counters", p.Counters, stats.Stats)
			compareNames(t, d.Name+"/hw_counters", p.HWCounters, stats.HwStats)
			for _, nd := range p.Netdevs() {
				if dev, err := LiveDeviceForNetdev(nd); err != nil || dev != d.Name {
					t.Errorf("LiveDeviceForNetdev(%q) = %q, %v; FS says %s", nd, dev, err, d.Name)
				}
			}
		}
	}
}

// compareNames checks that both readers saw the same counter files;
// values move between the two reads, so only names are compared.
// rdmamap reports lifespan as a counter and unsupported ones as 0.
func compareNames(t *testing.T, where string, ours Counters, theirs []rdmamap.RdmaStatEntry) {
	t.Helper()
	for _, e := range theirs {
		if _, ok := ours[e.Name]; !ok && e.Name != lifespanFile && e.Value != 0 {
			t.Errorf("%s: rdmamap has %s=%d, FS does not", where, e.Name, e.Value)
		}
	}
	for name := range ours {
		if !slices.ContainsFunc(theirs, func(e rdmamap.RdmaStatEntry) bool { return e.Name == name }) {
			t.Errorf("%s: FS has %s, rdmamap does not", where, name)
		}
	}
}
