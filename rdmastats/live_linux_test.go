package rdmastats

import (
	"net"
	"testing"
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
