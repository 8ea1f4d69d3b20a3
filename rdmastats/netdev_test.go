package rdmastats

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestPortForNetdev(t *testing.T) {
	t.Parallel()
	// A tree for the fallbacks: rxe1 with no GIDs yet but its parent
	// attribute, and a dual-port mlx4 function whose second netdev has
	// dev_port 1 and no RoCE GIDs (an IPoIB port, say).
	root := copyFixture(t)
	writeFile(t, root, "class/infiniband/rxe1/parent", "eth1\n")
	writeFile(t, root, "class/infiniband/rxe1/ports/1/state", "1: DOWN\n")
	writeFile(t, root, "class/infiniband/mlx4_0/device/net/ib1/dev_port", "1\n")
	writeFile(t, root, "class/infiniband/mlx4_0/device/net/ib0/dev_port", "0\n")
	writeFile(t, root, "class/infiniband/mlx4_0/device/net/enp1s0/ifindex", "9\n") // no dev_port file
	writeFile(t, root, "class/infiniband/mlx4_0/device/net/bad/dev_port", "x\n")

	tests := []struct {
		root, netdev string
		dev          string
		port         int
	}{
		{fixtureRoot, "eth0", "rxe0", 1},        // GID ndevs
		{fixtureRoot, "enp59s0f0", "mlx5_0", 1}, // GID ndevs
		{root, "eth1", "rxe1", 1},               // parent
		{root, "ib1", "mlx4_0", 2},              // device/net + dev_port
		{root, "ib0", "mlx4_0", 1},              // device/net + dev_port
		{root, "enp1s0", "mlx4_0", 1},           // device/net without dev_port
		{root, "bad", "mlx4_0", 1},              // unparsable dev_port
	}
	for _, tt := range tests {
		dev, port, err := NewFS(tt.root).PortForNetdev(tt.netdev)
		if err != nil || dev != tt.dev || port != tt.port {
			t.Errorf("PortForNetdev(%q) = %q, %d, %v; want %q, %d", tt.netdev, dev, port, err, tt.dev, tt.port)
		}
	}
	for _, netdev := range []string{"eth9", "", "lo", ".", "..", "../net"} {
		dev, port, err := NewFS(root).PortForNetdev(netdev)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("PortForNetdev(%q) = %q, %d, %v; want fs.ErrNotExist", netdev, dev, port, err)
		}
	}
}

// TestPortForNetdevPrefersGIDs checks the order: a RoCE GID naming the
// netdev wins over another device whose bus function lists it.
func TestPortForNetdevPrefersGIDs(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	writeFile(t, root, "class/infiniband/aaa0/device/net/eth0/dev_port", "0\n")
	dev, port, err := NewFS(root).PortForNetdev("eth0")
	if err != nil || dev != "rxe0" || port != 1 {
		t.Errorf("PortForNetdev(eth0) = %q, %d, %v; want rxe0, 1", dev, port, err)
	}
}

func TestPortForNetdevBrokenNdev(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	p := filepath.Join(root, "class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("0", p); err != nil { // a loop: unreadable even for root
		t.Fatal(err)
	}
	if _, _, err := NewFS(root).PortForNetdev("eth0"); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("PortForNetdev over an unreadable ndevs file: error = %v, want a read error", err)
	}
}
