//go:build !linux

package rdmastats

import (
	"fmt"
	"runtime"
)

// LiveDeviceForNetdev needs Linux sysfs and rtnetlink.
func LiveDeviceForNetdev(netdev string) (string, error) {
	return "", fmt.Errorf("RDMA device for netdev %q: not supported on %s/%s", netdev, runtime.GOOS, runtime.GOARCH)
}
