// Package rdmastats reads RDMA NICs (RNICs) from sysfs: devices, ports,
// GID tables, the netdev mapping, and the port counters, turned into
// per-second rates for smctop and the Prometheus collectors.
//
// # Entry points
//
// An FS is rooted at a sysfs mount point, as node_exporter's --path.sysfs
// is, so tests and containers read any tree:
//
//	fsys := rdmastats.NewFS("/sys")
//	devs, err := fsys.Devices()      // devices, ports, GIDs, counters
//	if errors.Is(err, rdmastats.ErrNoDevices) {
//		// no RDMA devices: show that and keep running
//	}
//	prev, _ := fsys.Snapshot()       // counters only: cheap to repeat
//	// ... one refresh interval later
//	cur, _ := fsys.Snapshot()
//	rates, _ := rdmastats.Rates(prev, cur, cur.Time.Sub(prev.Time))
//	for _, r := range rates {
//		if r.Unhealthy() { ... }    // see Classify
//	}
//
// # Counters and units
//
// Counters come from two directories per port: counters/ holds the IB PMA
// PortCounters, which mlx5 also serves for RoCE ports, and hw_counters/
// holds the driver's own (mlx5, rxe, ...); rxe has no PMA, so only the
// latter. Both are keyed by the kernel's file name. port_xmit_data and
// port_rcv_data count 4-byte words in sysfs and are multiplied by 4 here,
// so every data counter is in bytes (UnitOf). hw_counters/lifespan is the
// driver's cache time, not a counter; it is reported separately.
//
// # Absent is not zero
//
// A counter the driver does not export has no key in Counters or
// Snapshot.Values; files the kernel answers with EINVAL, EOPNOTSUPP or
// "N/A (no PMA)" count as absent too. Rates reports a counter missing from
// either snapshot as StatusAbsent, never as a zero rate, and a counter
// that went backwards as StatusReset with the value counted since the
// reset, never as a negative or wrapped-around rate.
//
// A counter file that exists but cannot be read or parsed (a driver
// printing "N/A", an I/O error) is left out the same way and reported as
// a CounterError in Device.Errors or Snapshot.Errors, naming device, port
// and file; the other counters and devices are still read, so one bad
// file does not hide every RNIC.
//
// # Netdevs
//
// FS.PortForNetdev maps a network interface to its device and port
// through the tree under the root. LiveDeviceForNetdev asks
// Mellanox/rdmamap, which reads the live /sys and rtnetlink.
package rdmastats
