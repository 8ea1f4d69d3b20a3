//go:build linux && !(rdmasniff && cgo)

package capture

import "fmt"

// openRDMA without the libpcap RDMA sniffer compiled in.
func openRDMA(device, filter string, snaplen int) (*Reader, error) {
	return nil, fmt.Errorf("%s is an RDMA device: capturing on it needs a build with -tags rdmasniff (cgo, libpcap with RDMA support)", device)
}
