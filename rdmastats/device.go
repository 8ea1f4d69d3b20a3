package rdmastats

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Device is one RDMA device (/sys/class/infiniband/<Name>). String fields
// are empty when the driver does not provide the attribute: board_id and
// hca_type exist for Mellanox HCAs only, parent for software devices (rxe).
type Device struct {
	Name         string
	NodeType     string // node_type without its number: "CA", "RNIC", "switch"
	FWVersion    string // fw_ver; empty for rxe, which has no firmware
	NodeGUID     string // node_guid as printed, "b859:9f03:00d9:6c1e"
	SysImageGUID string // sys_image_guid
	NodeDesc     string // node_desc
	BoardID      string // board_id (PSID), Mellanox only
	HCAType      string // hca_type, Mellanox only ("MT4119")
	HWRev        string // hw_rev
	Parent       string // parent: the netdev a software device (rxe, siw) sits on

	// Driver and PCIAddr come from device/uevent (DRIVER, PCI_SLOT_NAME);
	// both are empty for virtual devices such as rxe, which have no bus
	// device.
	Driver  string
	PCIAddr string
	// Netdevs are the network interfaces of the device's bus function
	// (device/net/*), the mapping that still works for a port without any
	// GID yet.
	Netdevs []string

	// HWCounters are device-wide driver counters (<dev>/hw_counters), nil
	// when the driver keeps only per-port counters, as rxe and mlx5 in
	// legacy mode do.
	HWCounters Counters
	HWLifespan time.Duration

	Ports []Port

	// Errors are the counters of the device and its ports that exist but
	// could not be read or parsed; each is missing from its Counters.
	Errors []*CounterError
}

// Port is one port of a Device (ports/<Port>).
type Port struct {
	Port        int
	State       string // "ACTIVE", "DOWN", "INIT", "ARMED", "ACTIVE_DEFER"
	StateID     uint8  // the number before State in the file: 4 for ACTIVE
	PhysState   string // "LinkUp", "Disabled", "Polling" ...
	PhysStateID uint8  // 5 for LinkUp
	RateText    string // rate as printed: "25 Gb/sec (1X EDR)"
	Rate        uint64 // RateText in bytes per second, 0 when unparsable
	LinkLayer   LinkLayer

	// GIDs are the populated entries of the GID table, in index order.
	// Unused entries, which the kernel shows as all zeros, are left out.
	GIDs []GIDEntry

	// Counters are the PMA counters (counters/), nil when the port has
	// no PMA: rxe ports only have HWCounters. port_xmit_data and
	// port_rcv_data are in bytes here.
	Counters Counters
	// HWCounters are the driver's counters (hw_counters/), nil when the
	// driver exports none.
	HWCounters Counters
	// HWLifespan is hw_counters/lifespan: the driver serves cached values
	// for this long, so a shorter refresh interval shows false zero rates.
	HWLifespan time.Duration
}

// Port returns the port numbered n (from 1) and whether the device has it.
func (d Device) Port(n int) (Port, bool) {
	for _, p := range d.Ports {
		if p.Port == n {
			return p, true
		}
	}
	return Port{}, false
}

// Netdevs returns the network interfaces named by the port's GID entries
// (gid_attrs/ndevs), each once, in GID order. It is the RoCE mapping the
// SMC-R code uses to pick a device for a netdev.
func (p Port) Netdevs() []string {
	var out []string
	for _, g := range p.GIDs {
		if g.Netdev != "" && !slices.Contains(out, g.Netdev) {
			out = append(out, g.Netdev)
		}
	}
	return out
}

// LinkLayer is a port's link_layer.
type LinkLayer string

// Link layers as the kernel prints them.
const (
	LinkLayerInfiniBand LinkLayer = "InfiniBand"
	LinkLayerEthernet   LinkLayer = "Ethernet" // RoCE, iWARP
)

// GIDEntry is one populated GID table entry.
type GIDEntry struct {
	Index  int
	GID    GID
	Type   GIDType
	Netdev string // gid_attrs/ndevs/<Index>; empty on InfiniBand ports
}

// GIDType says which RoCE version an entry serves (gid_attrs/types).
type GIDType uint8

// GID types. The kernel prints "IB/RoCE v1" for both IB and RoCE v1
// entries; the port's link layer tells them apart.
const (
	GIDTypeUnknown GIDType = iota
	GIDTypeIB              // "IB/RoCE v1" on an InfiniBand port
	GIDTypeRoCEv1          // "IB/RoCE v1" on an Ethernet port
	GIDTypeRoCEv2          // "RoCE v2": UDP port 4791, what SMC-Rv2 needs
)

// String returns the type as `rdma`/ibv_devinfo users know it.
func (t GIDType) String() string {
	switch t {
	case GIDTypeIB:
		return "IB"
	case GIDTypeRoCEv1:
		return "RoCE v1"
	case GIDTypeRoCEv2:
		return "RoCE v2"
	}
	return "unknown"
}

func parseGIDType(s string, ll LinkLayer) GIDType {
	switch s {
	case "IB/RoCE v1":
		if ll == LinkLayerEthernet {
			return GIDTypeRoCEv1
		}
		return GIDTypeIB
	case "RoCE v2":
		return GIDTypeRoCEv2
	}
	return GIDTypeUnknown
}

// GID is a 16-byte RDMA global identifier, in wire order.
type GID [16]byte

// ParseGID parses the sysfs form, eight groups of four hex digits:
// "fe80:0000:0000:0000:5054:00ff:fe0a:0002".
func ParseGID(s string) (GID, error) {
	var g GID
	groups := strings.Split(s, ":")
	if len(groups) != 8 {
		return g, fmt.Errorf("GID %q: want 8 groups, have %d", s, len(groups))
	}
	for i, grp := range groups {
		if len(grp) != 4 {
			return g, fmt.Errorf("GID %q: group %d is not 4 hex digits", s, i)
		}
		v, err := strconv.ParseUint(grp, 16, 16)
		if err != nil {
			return g, fmt.Errorf("GID %q: %w", s, err)
		}
		binary.BigEndian.PutUint16(g[2*i:], uint16(v))
	}
	return g, nil
}

// String prints the GID in the sysfs form, which is also how smc_diag and
// the SMC netlink link dumps show GIDs.
func (g GID) String() string {
	var b strings.Builder
	b.Grow(39)
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%04x", binary.BigEndian.Uint16(g[i:]))
	}
	return b.String()
}

// Addr returns the GID as an IPv6 address; RoCE v2 GIDs are the IP
// addresses of the netdev (IPv4 ones as ::ffff:a.b.c.d).
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g) }

// IsZero reports whether the GID is all zeros, the content of an unused
// table entry.
func (g GID) IsZero() bool { return g == GID{} }

// Devices reads every RDMA device with its ports, GID tables and counters.
// It gives ErrNoDevices when there is none.
func (f FS) Devices() ([]Device, error) {
	names, err := f.DeviceNames()
	if err != nil {
		return nil, err
	}
	devs := make([]Device, 0, len(names))
	for _, n := range names {
		d, err := f.Device(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while we listed; rdma link delete races us
		}
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	if len(devs) == 0 {
		return nil, fmt.Errorf("all devices vanished while reading: %w", ErrNoDevices)
	}
	return devs, nil
}

// Device reads one RDMA device by name. A device that does not exist gives
// an error matching fs.ErrNotExist.
func (f FS) Device(name string) (Device, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		// Not a device name: as a path element it would escape the class
		// directory.
		return Device{}, fmt.Errorf("RDMA device %q: %w", name, fs.ErrNotExist)
	}
	dir := f.path(classDir, name)
	if _, err := os.Stat(dir); err != nil {
		return Device{}, fmt.Errorf("RDMA device %q: %w", name, err)
	}
	d := Device{Name: name}
	attrs := []struct {
		file string
		dst  *string
	}{
		{"node_type", &d.NodeType},
		{"fw_ver", &d.FWVersion},
		{"node_guid", &d.NodeGUID},
		{"sys_image_guid", &d.SysImageGUID},
		{"node_desc", &d.NodeDesc},
		{"board_id", &d.BoardID},
		{"hca_type", &d.HCAType},
		{"hw_rev", &d.HWRev},
		{"parent", &d.Parent},
	}
	for _, a := range attrs {
		s, _, err := readString(f.path(classDir, name, a.file))
		if err != nil {
			return Device{}, fmt.Errorf("RDMA device %s: %w", name, err)
		}
		*a.dst = s
	}
	_, d.NodeType = splitNumbered(d.NodeType)

	var err error
	if d.Driver, d.PCIAddr, err = readUevent(f.path(classDir, name, "device", "uevent")); err != nil {
		return Device{}, fmt.Errorf("RDMA device %s: %w", name, err)
	}
	if d.Netdevs, err = listNames(f.path(classDir, name, "device", "net")); err != nil {
		return Device{}, fmt.Errorf("RDMA device %s: %w", name, err)
	}
	bad := func(e *CounterError) { d.Errors = append(d.Errors, e) }
	hw := readCounters(f.path(classDir, name, "hw_counters"), Key{Device: name, Source: SourceHW}, bad)
	d.HWCounters, d.HWLifespan = hw.counters, hw.lifespan

	ports, err := f.portNumbers(name)
	if err != nil {
		return Device{}, err
	}
	for _, pn := range ports {
		p, err := f.port(name, pn, bad)
		if err != nil {
			return Device{}, fmt.Errorf("RDMA device %s port %d: %w", name, pn, err)
		}
		d.Ports = append(d.Ports, p)
	}
	return d, nil
}

func (f FS) port(dev string, pn int, bad func(*CounterError)) (Port, error) {
	ps := strconv.Itoa(pn)
	p := Port{Port: pn}
	read := func(file string) (string, error) {
		s, _, err := readString(f.path(classDir, dev, "ports", ps, file))
		return s, err
	}
	var state, phys, ll string
	var err error
	if state, err = read("state"); err != nil {
		return p, err
	}
	if phys, err = read("phys_state"); err != nil {
		return p, err
	}
	if p.RateText, err = read("rate"); err != nil {
		return p, err
	}
	if ll, err = read("link_layer"); err != nil {
		return p, err
	}
	p.StateID, p.State = splitNumbered(state)
	p.PhysStateID, p.PhysState = splitNumbered(phys)
	p.Rate = parseRate(p.RateText)
	p.LinkLayer = LinkLayer(ll)
	if !f.noGIDs {
		if p.GIDs, err = f.gids(dev, ps, p.LinkLayer); err != nil {
			return p, err
		}
	}
	pma := readCounters(f.path(classDir, dev, "ports", ps, "counters"), Key{dev, pn, SourcePMA, ""}, bad)
	hw := readCounters(f.path(classDir, dev, "ports", ps, "hw_counters"), Key{dev, pn, SourceHW, ""}, bad)
	p.Counters, p.HWCounters, p.HWLifespan = pma.counters, hw.counters, hw.lifespan
	return p, nil
}

// gids reads the populated entries of a port's GID table.
func (f FS) gids(dev, port string, ll LinkLayer) ([]GIDEntry, error) {
	dir := f.path(classDir, dev, "ports", port, "gids")
	attrs := f.path(classDir, dev, "ports", port, "gid_attrs")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing GIDs: %w", err)
	}
	var out []GIDEntry
	for _, e := range ents {
		idx, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s, ok, err := readString(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		g, err := ParseGID(s)
		if err != nil {
			return nil, fmt.Errorf("GID %d: %w", idx, err)
		}
		if g.IsZero() {
			continue
		}
		typ, _, err := readString(filepath.Join(attrs, "types", e.Name()))
		if err != nil {
			return nil, err
		}
		ndev, _, err := readString(filepath.Join(attrs, "ndevs", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, GIDEntry{Index: idx, GID: g, Type: parseGIDType(typ, ll), Netdev: ndev})
	}
	// ReadDir sorts by name, so "10" came before "2".
	slices.SortFunc(out, func(a, b GIDEntry) int { return a.Index - b.Index })
	return out, nil
}

// splitNumbered splits the "<n>: <NAME>" form of state, phys_state and
// node_type. Text without a number is returned whole with 0.
func splitNumbered(s string) (uint8, string) {
	num, name, ok := strings.Cut(s, ": ")
	if !ok {
		return 0, s
	}
	n, err := strconv.ParseUint(num, 10, 8)
	if err != nil {
		return 0, s
	}
	return uint8(n), name
}

// parseRate turns "25 Gb/sec (1X EDR)" or "2.5 Gb/sec (1X SDR)" into bytes
// per second. The kernel always prints Gb/sec with at most one decimal
// (ib_core sysfs.c rate_show), so anything else is unparsable and gives 0.
func parseRate(s string) uint64 {
	num, rest, ok := strings.Cut(s, " ")
	if !ok || !strings.HasPrefix(rest, "Gb/sec") {
		return 0
	}
	whole, frac, _ := strings.Cut(num, ".")
	w, err := strconv.ParseUint(whole, 10, 32)
	if err != nil {
		return 0
	}
	tenths := w * 10
	if frac != "" {
		if len(frac) != 1 || frac[0] < '0' || frac[0] > '9' {
			return 0
		}
		tenths += uint64(frac[0] - '0')
	}
	// tenths of Gb/s -> bytes/s: x 1e8 bits, / 8.
	return tenths * 100_000_000 / 8
}

// readUevent returns DRIVER and PCI_SLOT_NAME of a bus device's uevent
// file, which works whether device is a symlink (live) or a directory
// (fixtures).
func readUevent(path string) (driver, pci string, err error) {
	s, ok, err := readString(path)
	if err != nil || !ok {
		return "", "", err
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		switch k {
		case "DRIVER":
			driver = v
		case "PCI_SLOT_NAME":
			pci = v
		}
	}
	return driver, pci, nil
}

// listNames returns the entry names of dir, nil when it does not exist.
func listNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %q: %w", dir, err)
	}
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}
