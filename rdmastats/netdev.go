package rdmastats

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PortForNetdev returns the RDMA device and port behind a network
// interface, read under the FS root. It tries, in order:
//
//  1. the GID tables (ports/<n>/gid_attrs/ndevs/*), the RoCE mapping the
//     kernel's SMC-R code and rdmamap use;
//  2. the parent attribute of software devices (rxe, siw);
//  3. the device's bus function (device/net/<netdev>), with the port from
//     the netdev's dev_port (0-based, so dual-port mlx4 functions map
//     right), which also covers IPoIB and ports without a GID yet.
//
// No match gives an error matching fs.ErrNotExist; no device at all gives
// ErrNoDevices.
func (f FS) PortForNetdev(netdev string) (dev string, port int, err error) {
	if netdev == "" || netdev == "." || netdev == ".." || strings.ContainsRune(netdev, '/') {
		// Not an interface name; as a path element it would match the
		// device/net directory itself.
		return "", 0, fmt.Errorf("no RDMA device for netdev %q: %w", netdev, fs.ErrNotExist)
	}
	names, err := f.DeviceNames()
	if err != nil {
		return "", 0, err
	}
	for _, d := range names {
		ports, err := f.portNumbers(d)
		if err != nil {
			return "", 0, err
		}
		for _, pn := range ports {
			dir := f.path(classDir, d, "ports", strconv.Itoa(pn), "gid_attrs", "ndevs")
			idx, err := listNames(dir)
			if err != nil {
				return "", 0, err
			}
			for _, i := range idx {
				s, ok, err := readString(filepath.Join(dir, i))
				if err != nil {
					return "", 0, err
				}
				if ok && s == netdev {
					return d, pn, nil
				}
			}
		}
	}
	for _, d := range names {
		s, ok, err := readString(f.path(classDir, d, "parent"))
		if err != nil {
			return "", 0, err
		}
		if ok && s == netdev {
			return d, 1, nil // software devices have a single port
		}
	}
	for _, d := range names {
		if _, err := os.Stat(f.path(classDir, d, "device", "net", netdev)); err != nil {
			continue
		}
		s, ok, err := readString(f.path(classDir, d, "device", "net", netdev, "dev_port"))
		if err != nil {
			return "", 0, err
		}
		n, perr := strconv.Atoi(s)
		if !ok || perr != nil || n < 0 {
			n = 0
		}
		return d, n + 1, nil
	}
	return "", 0, fmt.Errorf("no RDMA device for netdev %q: %w", netdev, fs.ErrNotExist)
}
