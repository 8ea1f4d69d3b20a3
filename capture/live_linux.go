package capture

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/sys/unix"
)

// OpenLive captures on an interface through an AF_PACKET socket (no cgo).
// filter is a -f argument (see CompileFilter); empty means DefaultFilterExpr.
// snaplen <= 0 keeps whole frames.
func OpenLive(iface, filter string, snaplen int) (*Reader, error) {
	ifc, err := net.InterfaceByName(iface)
	if err != nil {
		// Not a netdev: an ibverbs device (mlx5_0) goes to libpcap's RDMA
		// sniffer, which sees what a hardware RNIC hides from the netdev.
		if _, serr := os.Stat("/sys/class/infiniband/" + iface); serr == nil && !strings.Contains(iface, "/") {
			return openRDMA(iface, filter, snaplen)
		}
		return nil, fmt.Errorf("no interface %q: %w", iface, err)
	}
	prog := defaultFilter
	if filter != "" {
		if prog, err = CompileFilter(filter); err != nil {
			return nil, err // names -f itself
		}
	}
	if ifc.Flags&net.FlagLoopback != 0 {
		// lo hands a packet socket every frame twice (see SkipOutgoing).
		if prog, err = SkipOutgoing(prog); err != nil {
			return nil, err
		}
	}
	if err := probePacketSocket(); err != nil {
		return nil, &LiveError{Iface: iface, Err: err}
	}
	h, err := pcapgo.NewEthernetHandle(iface)
	if err != nil {
		return nil, &LiveError{Iface: iface, Err: err}
	}
	if snaplen > 0 {
		if err := h.SetCaptureLength(snaplen); err != nil {
			h.Close()
			return nil, &LiveError{Iface: iface, Err: err}
		}
	}
	if err := h.SetBPF(prog); err != nil {
		h.Close()
		return nil, &LiveError{Iface: iface, Err: fmt.Errorf("attaching the filter: %w", err)}
	}
	r, err := NewReader(iface, h, layers.LinkTypeEthernet)
	if err != nil {
		h.Close()
		return nil, err
	}
	r.closer = h
	r.drops = func() (uint64, error) {
		st, err := h.Stats() // counts since the previous call
		if err != nil {
			return 0, err
		}
		return uint64(st.Drops), nil
	}
	return r, nil
}

// probePacketSocket opens and closes a packet socket so that a missing
// capability is reported as such (pcapgo flattens the errno into text).
func probePacketSocket() error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
			return ErrNoPermission
		}
		return err
	}
	return unix.Close(fd)
}
