//go:build !linux

package capture

import (
	"fmt"
	"runtime"
)

// OpenLive needs AF_PACKET, which only Linux has.
func OpenLive(iface, filter string, snaplen int) (*Reader, error) {
	return nil, fmt.Errorf("live capture is not implemented on %s/%s", runtime.GOOS, runtime.GOARCH)
}
