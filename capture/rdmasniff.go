//go:build linux && rdmasniff && cgo

package capture

import (
	"fmt"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
)

// OpenRDMA captures through libpcap's RDMA sniffer (an ibverbs device such
// as mlx5_0; libpcap >= 1.9 built with rdma-core), which sees the RoCE
// traffic a hardware RNIC keeps away from the netdev. Build with
// -tags rdmasniff (cgo, libpcap-dev).
func OpenRDMA(device, filter string, snaplen int) (*Reader, error) {
	if snaplen <= 0 {
		snaplen = 262144
	}
	h, err := pcap.OpenLive(device, int32(snaplen), true, pcap.BlockForever)
	if err != nil {
		return nil, fmt.Errorf("RDMA sniffer on %s: %w", device, err)
	}
	if filter != "" {
		if err := h.SetBPFFilter(filter); err != nil {
			h.Close()
			return nil, fmt.Errorf("-f %q: %w", filter, err)
		}
	}
	lt := h.LinkType()
	if lt != layers.LinkTypeEthernet {
		h.Close()
		return nil, fmt.Errorf("RDMA sniffer on %s: unsupported link type %d", device, int(lt))
	}
	r, err := NewReader(device, h, lt)
	if err != nil {
		h.Close()
		return nil, err
	}
	r.closer = closerFunc(func() error { h.Close(); return nil })
	return r, nil
}

type closerFunc func() error

func (c closerFunc) Close() error { return c() }

func openRDMA(device, filter string, snaplen int) (*Reader, error) {
	return OpenRDMA(device, filter, snaplen)
}
