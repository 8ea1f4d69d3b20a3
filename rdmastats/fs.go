package rdmastats

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// DefaultRoot is where sysfs is mounted on a live system. node_exporter's
// --path.sysfs has the same default; containers pass the host's /sys
// mounted elsewhere.
const DefaultRoot = "/sys"

// classDir is the RDMA device class below the sysfs root
// (rdmamap.RdmaClassDir without the leading /sys).
const classDir = "class/infiniband"

// ErrNoDevices reports that the sysfs root has no RDMA device at all:
// /sys/class/infiniband is missing (ib_core not loaded) or empty. It works
// like node_exporter's ErrNoData: callers show "no RDMA devices" and keep
// running instead of failing.
var ErrNoDevices = errors.New("no RDMA devices")

// FS reads RDMA devices from a sysfs tree. The zero value is not useful;
// build one with NewFS. FS holds no state besides its root and options, so
// copies are cheap and safe for concurrent use.
type FS struct {
	root   string
	noGIDs bool
}

// NewFS returns an FS rooted at a sysfs mount point; "" means DefaultRoot.
// Tests point it at testdata/sys.
func NewFS(root string) FS {
	if root == "" {
		root = DefaultRoot
	}
	return FS{root: root}
}

// WithoutGIDs returns an FS whose Devices and Device leave every port's
// GIDs nil, for a caller that keeps the GID tables of an earlier read. A
// GID table is one file per entry, whether used or not: an rxe port has
// 1024 with two in use, and reading one took 105-165 ms in a TCG lab
// guest, most of an smctop refresh (lab/README.md, Known behaviour), while
// the table changes only with the netdev's addresses.
func (f FS) WithoutGIDs() FS {
	f.noGIDs = true
	return f
}

// Root returns the sysfs mount point this FS reads.
func (f FS) Root() string { return f.root }

func (f FS) path(elem ...string) string {
	return filepath.Join(append([]string{f.root}, elem...)...)
}

// DeviceNames lists the RDMA devices under class/infiniband, sorted. It
// gives ErrNoDevices when the class directory is absent or empty.
func (f FS) DeviceNames() ([]string, error) {
	dir := f.path(classDir)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoDevices)
	}
	if err != nil {
		return nil, fmt.Errorf("listing RDMA devices: %w", err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		// On a live system each entry is a symlink into /sys/devices, so
		// e.IsDir() is false; only hidden names are skipped.
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s is empty: %w", dir, ErrNoDevices)
	}
	return names, nil // ReadDir already sorted them
}

// portNumbers lists the numeric entries of <dev>/ports in ascending order.
func (f FS) portNumbers(dev string) ([]int, error) {
	dir := f.path(classDir, dev, "ports")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		// A device being unregistered loses its ports first; it has no
		// ports rather than being broken.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing ports of %s: %w", dev, err)
	}
	ports := make([]int, 0, len(ents))
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n < 0 {
			continue
		}
		ports = append(ports, n)
	}
	slices.Sort(ports)
	return ports, nil
}

// readString returns the trimmed content of a sysfs attribute and whether
// it exists. Attributes a driver does not provide are simply absent, so
// only other failures are errors. Attributes are short (node_desc, the
// longest read here, is at most 64 bytes), so a stack buffer replaces the
// page-sized one os.ReadFile allocates for every sysfs file: a live rxe
// GID table alone is 1024 files.
func readString(path string) (string, bool, error) {
	var buf [256]byte
	b, ok, err := readSmall(path, buf[:])
	if err != nil || !ok {
		return "", ok, err
	}
	return string(bytes.TrimSpace(b)), true, nil
}

// unsupported reports whether a read error means "this attribute has no
// value here" rather than a failure. Reads of unused GID table entries'
// gid_attrs fail with EINVAL (seen on a real rxe0, testdata/README.md);
// EOPNOTSUPP, ENODEV and ENODATA are what drivers return for counters and
// attributes they cannot serve, so they are treated the same way.
func unsupported(err error) bool {
	return errors.Is(err, fs.ErrNotExist) ||
		errors.Is(err, syscall.EINVAL) ||
		errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENODEV) ||
		errors.Is(err, syscall.ENODATA)
}
