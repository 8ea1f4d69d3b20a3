package rdmastats

import (
	"fmt"

	"github.com/Mellanox/rdmamap"
)

// LiveDeviceForNetdev returns the RDMA device of a network interface on
// the running system. It uses rdmamap, which cannot take a sysfs root but
// also asks rtnetlink for the link type, so it maps IPoIB interfaces by
// node GUID where FS.PortForNetdev needs the device/net link. Use
// FS.PortForNetdev when the FS root is not /sys (containers, tests).
func LiveDeviceForNetdev(netdev string) (string, error) {
	dev, err := rdmamap.GetRdmaDeviceForNetdevice(netdev)
	if err != nil {
		return "", fmt.Errorf("RDMA device for netdev %q: %w", netdev, err)
	}
	if dev == "" {
		// rdmamap reports an IPoIB netdev without a matching GUID as ""
		// with no error.
		return "", fmt.Errorf("no RDMA device for netdev %q", netdev)
	}
	return dev, nil
}
