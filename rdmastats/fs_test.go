package rdmastats

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixtureRoot is the sysfs tree described in testdata/README.md.
const fixtureRoot = "testdata/sys"

func mustGID(t *testing.T, s string) GID {
	t.Helper()
	g, err := ParseGID(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// copyFixture copies testdata/sys into a temporary root that a test may
// change.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(fixtureRoot)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// writeFile creates root/rel with content, making parents.
func writeFile(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDevicesFixture(t *testing.T) {
	t.Parallel()
	devs, err := NewFS(fixtureRoot).Devices()
	if err != nil {
		t.Fatal(err)
	}
	mlxGID0 := mustGID(t, "fe80:0000:0000:0000:ba59:9fff:fed9:6c1e")
	mlxGID2 := mustGID(t, "0000:0000:0000:0000:0000:ffff:c0a8:0a0b")
	want := []Device{
		{
			Name:         "mlx5_0",
			NodeType:     "CA",
			FWVersion:    "16.35.2000",
			NodeGUID:     "b859:9f03:00d9:6c1e",
			SysImageGUID: "b859:9f03:00d9:6c1e",
			NodeDesc:     "MT4119 ConnectX5   Mellanox Technologies",
			BoardID:      "MT_0000000080",
			HCAType:      "MT4119",
			HWRev:        "0x0",
			Driver:       "mlx5_core",
			PCIAddr:      "0000:3b:00.0",
			Netdevs:      []string{"enp59s0f0"},
			Ports: []Port{{
				Port:        1,
				State:       "ACTIVE",
				StateID:     4,
				PhysState:   "LinkUp",
				PhysStateID: 5,
				RateText:    "25 Gb/sec (1X EDR)",
				Rate:        3_125_000_000,
				LinkLayer:   LinkLayerEthernet,
				GIDs: []GIDEntry{
					{0, mlxGID0, GIDTypeRoCEv1, "enp59s0f0"},
					{1, mlxGID0, GIDTypeRoCEv2, "enp59s0f0"},
					{2, mlxGID2, GIDTypeRoCEv1, "enp59s0f0"},
					{3, mlxGID2, GIDTypeRoCEv2, "enp59s0f0"},
				},
				Counters: Counters{
					"VL15_dropped":                    0,
					"excessive_buffer_overrun_errors": 0,
					"link_downed":                     0,
					"link_error_recovery":             0,
					"local_link_integrity_errors":     0,
					"multicast_rcv_packets":           204,
					"multicast_xmit_packets":          127,
					"port_rcv_constraint_errors":      0,
					"port_rcv_data":                   1197312441 * 4,
					"port_rcv_errors":                 0,
					"port_rcv_packets":                4931306,
					"port_rcv_remote_physical_errors": 0,
					"port_rcv_switch_relay_errors":    0,
					"port_xmit_constraint_errors":     0,
					"port_xmit_data":                  1320887523 * 4,
					"port_xmit_discards":              0,
					"port_xmit_packets":               5284117,
					"port_xmit_wait":                  0,
					"symbol_error":                    0,
					"unicast_rcv_packets":             4931102,
					"unicast_xmit_packets":            5283990,
				},
				HWCounters: Counters{
					"duplicate_request":          5,
					"implied_nak_seq_err":        0,
					"local_ack_timeout_err":      1,
					"np_cnp_sent":                845,
					"np_ecn_marked_roce_packets": 845,
					"out_of_buffer":              0,
					"out_of_sequence":            12,
					"packet_seq_err":             3,
					"req_cqe_error":              0,
					"req_cqe_flush_error":        0,
					"req_remote_access_errors":   0,
					"req_remote_invalid_request": 0,
					"resp_cqe_error":             0,
					"resp_cqe_flush_error":       0,
					"resp_local_length_error":    0,
					"resp_remote_access_errors":  0,
					"rnr_nak_retry_err":          0,
					"roce_adp_retrans":           0,
					"roce_adp_retrans_to":        0,
					"roce_slow_restart":          0,
					"roce_slow_restart_cnps":     0,
					"roce_slow_restart_trans":    0,
					"rp_cnp_handled":             812,
					"rp_cnp_ignored":             0,
					"rx_atomic_requests":         0,
					"rx_dct_connect":             0,
					"rx_icrc_encapsulated":       0,
					"rx_read_requests":           2,
					"rx_write_requests":          1048577,
				},
				HWLifespan: 10 * time.Millisecond,
			}},
		},
		{
			Name:         "rxe0",
			NodeType:     "CA",
			NodeGUID:     "5054:00ff:fe0a:0002",
			SysImageGUID: "5054:00ff:fe0a:0002",
			NodeDesc:     "rxe",
			Parent:       "eth0",
			Ports: []Port{{
				Port:        1,
				State:       "ACTIVE",
				StateID:     4,
				PhysState:   "LinkUp",
				PhysStateID: 5,
				RateText:    "2.5 Gb/sec (1X SDR)",
				Rate:        312_500_000,
				LinkLayer:   LinkLayerEthernet,
				GIDs: []GIDEntry{
					{0, mustGID(t, "fe80:0000:0000:0000:5054:00ff:fe0a:0002"), GIDTypeRoCEv2, "eth0"},
					{1, mustGID(t, "0000:0000:0000:0000:0000:ffff:0a0a:0002"), GIDTypeRoCEv2, "eth0"},
				},
				// rxe has no PMA: Counters stays nil, not empty.
				HWCounters: Counters{
					"ack_deferred":           1027,
					"completer_retry_err":    0,
					"duplicate_request":      0,
					"link_downed":            0,
					"out_of_seq_request":     0,
					"rcvd_pkts":              2052,
					"rcvd_rnr_err":           0,
					"rcvd_seq_err":           0,
					"rdma_recvs":             515,
					"rdma_sends":             516,
					"retry_exceeded_err":     0,
					"retry_rnr_exceeded_err": 0,
					"send_err":               0,
					"send_rnr_err":           0,
					"sent_pkts":              2052,
				},
				HWLifespan: 12 * time.Millisecond,
			}},
		},
	}
	if diff := cmp.Diff(want, devs); diff != "" {
		t.Errorf("Devices() mismatch (-want +got):\n%s", diff)
	}
	if devs[1].Ports[0].Counters != nil {
		t.Errorf("rxe0 PMA counters = %v, want nil (absent directory)", devs[1].Ports[0].Counters)
	}
	if p, ok := devs[0].Port(1); !ok || p.RateText != "25 Gb/sec (1X EDR)" {
		t.Errorf("mlx5_0 Port(1) = %+v, %v; want port 1", p, ok)
	}
	if _, ok := devs[0].Port(2); ok {
		t.Error("mlx5_0 Port(2) found, the device has one port")
	}
	if got := devs[1].Ports[0].Netdevs(); !cmp.Equal(got, []string{"eth0"}) {
		t.Errorf("rxe0 port netdevs = %q, want [eth0]", got)
	}
}

func TestDeviceNames(t *testing.T) {
	t.Parallel()
	got, err := NewFS(fixtureRoot).DeviceNames()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mlx5_0", "rxe0"}; !cmp.Equal(got, want) {
		t.Errorf("DeviceNames() = %q, want %q", got, want)
	}
}

func TestNewFSDefaultRoot(t *testing.T) {
	t.Parallel()
	if got := NewFS("").Root(); got != "/sys" {
		t.Errorf(`NewFS("").Root() = %q, want /sys`, got)
	}
	if got := NewFS(fixtureRoot).Root(); got != fixtureRoot {
		t.Errorf("Root() = %q, want %q", got, fixtureRoot)
	}
}

func TestNoDevices(t *testing.T) {
	t.Parallel()
	noClass := t.TempDir()
	emptyClass := t.TempDir()
	if err := os.MkdirAll(filepath.Join(emptyClass, "class/infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, root := range map[string]string{"no class": noClass, "empty class": emptyClass, "missing root": filepath.Join(noClass, "nope")} {
		f := NewFS(root)
		if _, err := f.Devices(); !errors.Is(err, ErrNoDevices) {
			t.Errorf("%s: Devices() error = %v, want ErrNoDevices", name, err)
		}
		if _, err := f.Snapshot(); !errors.Is(err, ErrNoDevices) {
			t.Errorf("%s: Snapshot() error = %v, want ErrNoDevices", name, err)
		}
		if _, _, err := f.PortForNetdev("eth0"); !errors.Is(err, ErrNoDevices) {
			t.Errorf("%s: PortForNetdev() error = %v, want ErrNoDevices", name, err)
		}
	}
}

func TestDeviceNotExist(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", ".", "..", "../infiniband/rxe0", "rxe0/ports"} {
		if d, err := NewFS(fixtureRoot).Device(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Device(%q) = %v, %v; want fs.ErrNotExist", name, d.Name, err)
		}
	}
	_, err := NewFS(fixtureRoot).Device("mlx5_9")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Device(mlx5_9) error = %v, want fs.ErrNotExist", err)
	}
	if errors.Is(err, ErrNoDevices) {
		t.Errorf("Device(mlx5_9) error %v matches ErrNoDevices, but other devices exist", err)
	}
}

// TestSymlinkedClass builds the live layout: class/infiniband/<dev> is a
// symlink into devices/, so a reader that kept only directories would see
// nothing.
func TestSymlinkedClass(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, root, "devices/virtual/infiniband/rxe7/ports/1/hw_counters/rdma_sends", "3\n")
	writeFile(t, root, "devices/virtual/infiniband/rxe7/ports/1/state", "1: DOWN\n")
	if err := os.MkdirAll(filepath.Join(root, "class/infiniband"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/virtual/infiniband/rxe7", filepath.Join(root, "class/infiniband/rxe7")); err != nil {
		t.Fatal(err)
	}
	devs, err := NewFS(root).Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].Name != "rxe7" || len(devs[0].Ports) != 1 {
		t.Fatalf("Devices() = %+v, want rxe7 with one port", devs)
	}
	p := devs[0].Ports[0]
	if p.State != "DOWN" || p.StateID != 1 || p.HWCounters["rdma_sends"] != 3 {
		t.Errorf("port = %+v, want DOWN(1) with rdma_sends 3", p)
	}
}

func TestCountersAbsentVersusZero(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	port := "class/infiniband/mlx5_0/ports/1/"
	// What the kernel prints for a counter the PMA lacks.
	writeFile(t, root, port+"counters/port_xmit_wait", "N/A (no PMA)\n")
	if err := os.Remove(filepath.Join(root, port+"counters/symbol_error")); err != nil {
		t.Fatal(err)
	}
	// A driver without hw_counters, and a PMA directory whose every
	// counter is unsupported, on the rxe device.
	if err := os.RemoveAll(filepath.Join(root, "class/infiniband/rxe0/ports/1/hw_counters")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "class/infiniband/rxe0/ports/1/counters/port_xmit_data", "N/A (no PMA)\n")

	devs, err := NewFS(root).Devices()
	if err != nil {
		t.Fatal(err)
	}
	mlx, rxe := devs[0].Ports[0], devs[1].Ports[0]
	for _, name := range []string{"port_xmit_wait", "symbol_error"} {
		if v, ok := mlx.Counters.Get(name); ok {
			t.Errorf("%s = %d, want absent", name, v)
		}
	}
	if v, ok := mlx.Counters.Get("link_downed"); !ok || v != 0 {
		t.Errorf("link_downed = %d, %v; want 0, present", v, ok)
	}
	if rxe.HWCounters != nil || rxe.HWLifespan != 0 {
		t.Errorf("rxe0 without hw_counters: HWCounters = %v, lifespan %v; want nil, 0", rxe.HWCounters, rxe.HWLifespan)
	}
	if rxe.Counters == nil || len(rxe.Counters) != 0 {
		t.Errorf("rxe0 counters/ with only unsupported files = %#v, want empty non-nil", rxe.Counters)
	}
}

func TestDeviceWideHWCounters(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	writeFile(t, root, "class/infiniband/mlx5_0/hw_counters/rx_write_requests", "77\n")
	writeFile(t, root, "class/infiniband/mlx5_0/hw_counters/lifespan", "20\n")
	devs, err := NewFS(root).Devices()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counters{"rx_write_requests": 77}); !cmp.Equal(devs[0].HWCounters, want) {
		t.Errorf("device hw_counters = %v, want %v", devs[0].HWCounters, want)
	}
	if devs[0].HWLifespan != 20*time.Millisecond {
		t.Errorf("device lifespan = %v, want 20ms", devs[0].HWLifespan)
	}
	s, err := NewFS(root).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := s.Values[Key{"mlx5_0", 0, SourceHW, "rx_write_requests"}]; !ok || v != 77 {
		t.Errorf("snapshot device-wide counter = %d, %v; want 77, true", v, ok)
	}
}

// TestBrokenCounters checks that a counter file which exists but cannot
// be read or parsed is left out and reported with its device, port and
// name, while every other counter and device is still read: one driver
// quirk must not hide every RNIC.
func TestBrokenCounters(t *testing.T) {
	t.Parallel()
	const port = "class/infiniband/rxe0/ports/1/"
	loop := func(t *testing.T, root, rel string) {
		// A symlink loop cannot be read even by root, unlike chmod 000.
		p := filepath.Join(root, rel)
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Base(p), p); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, root string)
		key   Key
		want  string // the error's text
	}{
		{"N/A in a PMA counter", func(t *testing.T, root string) {
			writeFile(t, root, "class/infiniband/mlx5_0/ports/1/counters/symbol_error", "N/A\n")
		}, Key{"mlx5_0", 1, SourcePMA, "symbol_error"}, `mlx5_0/1 counters/symbol_error: unparsable "N/A"`},
		{"unreadable counter", func(t *testing.T, root string) {
			loop(t, root, port+"hw_counters/rdma_sends")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, "rxe0/1 hw_counters/rdma_sends: unreadable: too many levels of symbolic links"},
		{"garbage counter", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/rdma_sends", "lots\n")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, `rxe0/1 hw_counters/rdma_sends: unparsable "lots"`},
		{"negative counter", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/rdma_sends", "-1\n")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, `rxe0/1 hw_counters/rdma_sends: unparsable "-1"`},
		{"overflowing counter", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/rdma_sends", "18446744073709551616\n")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, `rxe0/1 hw_counters/rdma_sends: "18446744073709551616" overflows 64 bits`},
		{"oversized counter file", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/rdma_sends", strings.Repeat("1", 100)+"\n")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, "rxe0/1 hw_counters/rdma_sends: longer than 64 bytes"},
		{"empty counter file", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/rdma_sends", "\n")
		}, Key{"rxe0", 1, SourceHW, "rdma_sends"}, "rxe0/1 hw_counters/rdma_sends: empty"},
		{"garbage lifespan", func(t *testing.T, root string) {
			writeFile(t, root, port+"hw_counters/lifespan", "12ms\n")
		}, Key{"rxe0", 1, SourceHW, "lifespan"}, `rxe0/1 hw_counters/lifespan: unparsable "12ms"`},
		{"device-wide counter", func(t *testing.T, root string) {
			writeFile(t, root, "class/infiniband/mlx5_0/hw_counters/rx_write_requests", "N/A\n")
		}, Key{"mlx5_0", 0, SourceHW, "rx_write_requests"}, `mlx5_0 hw_counters/rx_write_requests: unparsable "N/A"`},
		{"unlistable counter directory", func(t *testing.T, root string) {
			loop(t, root, "class/infiniband/mlx5_0/ports/1/counters")
		}, Key{"mlx5_0", 1, SourcePMA, ""}, "mlx5_0/1 counters: unreadable: too many levels of symbolic links"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t)
			tt.setup(t, root)
			f := NewFS(root)
			devs, err := f.Devices()
			if err != nil {
				t.Fatalf("Devices() error = %v, want the broken counter skipped", err)
			}
			if len(devs) != 2 {
				t.Fatalf("Devices() = %d devices, want mlx5_0 and rxe0", len(devs))
			}
			var got []string
			for _, d := range devs {
				for _, e := range d.Errors {
					if e.Device != d.Name {
						t.Errorf("%s carries an error of %s", d.Name, e.Device)
					}
					got = append(got, e.Error())
					if e.Key != tt.key {
						t.Errorf("error key = %+v, want %+v", e.Key, tt.key)
					}
				}
			}
			if want := []string{tt.want}; !cmp.Equal(got, want) {
				t.Errorf("Devices() counter errors = %q, want %q", got, want)
			}
			// The other counters of the same directory and device, and
			// the other device, are still read.
			mlx, rxe := devs[0], devs[1]
			if v, ok := rxe.Ports[0].HWCounters.Get("rdma_recvs"); !ok || v != 515 {
				t.Errorf("rxe0 rdma_recvs = %d, %v; want 515", v, ok)
			}
			if v, ok := mlx.Ports[0].HWCounters.Get("out_of_sequence"); !ok {
				t.Errorf("mlx5_0 out_of_sequence = %d, %v; want present", v, ok)
			}
			if tt.key.Name != "" {
				if v, ok := mlx.Ports[0].Counters.Get("link_downed"); !ok {
					t.Errorf("mlx5_0 link_downed = %d, %v; want present", v, ok)
				}
			}

			s, err := f.Snapshot()
			if err != nil {
				t.Fatalf("Snapshot() error = %v, want the broken counter skipped", err)
			}
			if v, ok := s.Values[tt.key]; ok {
				t.Errorf("Snapshot() has %+v = %d, want it left out", tt.key, v)
			}
			if _, ok := s.Values[Key{"rxe0", 1, SourceHW, "rdma_recvs"}]; !ok {
				t.Error("Snapshot() lost rxe0 rdma_recvs")
			}
			got = got[:0]
			for _, e := range s.Errors {
				got = append(got, e.Error())
			}
			if want := []string{tt.want}; !cmp.Equal(got, want) {
				t.Errorf("Snapshot() counter errors = %q, want %q", got, want)
			}
			if len(s.Errors) > 0 && !errors.Is(s.Errors[0], s.Errors[0].Err) {
				t.Error("CounterError does not unwrap to its cause")
			}
		})
	}
}

// TestUnreadableAttributes replaces attribute files with symlink loops,
// which even root cannot read: Devices must fail naming the file rather
// than report an empty attribute.
func TestUnreadableAttributes(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{
		"class/infiniband/mlx5_0/node_type",
		"class/infiniband/mlx5_0/device/uevent",
		"class/infiniband/mlx5_0/ports/1/state",
		"class/infiniband/mlx5_0/ports/1/rate",
		"class/infiniband/mlx5_0/ports/1/gids/0",
		"class/infiniband/mlx5_0/ports/1/gid_attrs/types/0",
		"class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0",
	} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t)
			p := filepath.Join(root, rel)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Base(p), p); err != nil {
				t.Fatal(err)
			}
			_, err := NewFS(root).Devices()
			if err == nil || !strings.Contains(err.Error(), rel) {
				t.Errorf("Devices() error = %v, want one naming %s", err, rel)
			}
		})
	}
}

func TestBrokenGID(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	writeFile(t, root, "class/infiniband/rxe0/ports/1/gids/1", "0000:0000\n")
	if _, err := NewFS(root).Devices(); err == nil || !strings.Contains(err.Error(), "GID 1") {
		t.Errorf("Devices() error = %v, want one naming GID 1", err)
	}
}

// TestWithoutGIDs: the read without GID tables is the full read with every
// port's GIDs nil, and it opens no GID file (a broken one does not fail it).
func TestWithoutGIDs(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	full, err := NewFS(root).Devices()
	if err != nil {
		t.Fatal(err)
	}
	for i := range full {
		for j := range full[i].Ports {
			full[i].Ports[j].GIDs = nil
		}
	}
	writeFile(t, root, "class/infiniband/rxe0/ports/1/gids/1", "0000:0000\n")
	got, err := NewFS(root).WithoutGIDs().Devices()
	if err != nil {
		t.Fatalf("WithoutGIDs().Devices(): %v", err)
	}
	if diff := cmp.Diff(full, got); diff != "" {
		t.Errorf("WithoutGIDs().Devices() (-want +got):\n%s", diff)
	}
}

// TestGIDOrder checks numeric order: ReadDir sorts "10" before "2".
func TestGIDOrder(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	port := "class/infiniband/rxe0/ports/1/"
	writeFile(t, root, port+"gids/10", "fe80:0000:0000:0000:0000:0000:0000:000a\n")
	writeFile(t, root, port+"gid_attrs/types/10", "RoCE v2\n")
	devs, err := NewFS(root).Devices()
	if err != nil {
		t.Fatal(err)
	}
	var idx []int
	for _, g := range devs[1].Ports[0].GIDs {
		idx = append(idx, g.Index)
	}
	if want := []int{0, 1, 10}; !cmp.Equal(idx, want) {
		t.Errorf("GID indexes = %v, want %v", idx, want)
	}
	if g := devs[1].Ports[0].GIDs[2]; g.Netdev != "" || g.Type != GIDTypeRoCEv2 {
		t.Errorf("GID 10 = %+v, want RoCE v2 without netdev", g)
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want uint64
	}{
		{"2.5 Gb/sec (1X SDR)", 312_500_000},
		{"25 Gb/sec (1X EDR)", 3_125_000_000},
		{"100 Gb/sec (4X EDR)", 12_500_000_000},
		{"400 Gb/sec (4X NDR)", 50_000_000_000},
		{"14 Gb/sec (1X FDR)", 1_750_000_000},
		{"", 0},
		{"fast", 0},
		{"10 Mb/sec (1X)", 0},
		{"2.55 Gb/sec (1X SDR)", 0},
		{"2.x Gb/sec (1X SDR)", 0},
		{"-1 Gb/sec (1X SDR)", 0},
	}
	for _, tt := range tests {
		if got := parseRate(tt.in); got != tt.want {
			t.Errorf("parseRate(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestSplitNumbered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		num  uint8
		name string
	}{
		{"4: ACTIVE", 4, "ACTIVE"},
		{"5: LinkUp", 5, "LinkUp"},
		{"1: CA", 1, "CA"},
		{"3: Disabled", 3, "Disabled"},
		{"ACTIVE", 0, "ACTIVE"},
		{"x: ACTIVE", 0, "x: ACTIVE"},
		{"300: BIG", 0, "300: BIG"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		num, name := splitNumbered(tt.in)
		if num != tt.num || name != tt.name {
			t.Errorf("splitNumbered(%q) = %d, %q; want %d, %q", tt.in, num, name, tt.num, tt.name)
		}
	}
}

func TestParseGID(t *testing.T) {
	t.Parallel()
	good := []struct {
		in   string
		addr string
	}{
		{"fe80:0000:0000:0000:5054:00ff:fe0a:0002", "fe80::5054:ff:fe0a:2"},
		{"0000:0000:0000:0000:0000:ffff:0a0a:0002", "::ffff:10.10.0.2"},
		{"0000:0000:0000:0000:0000:0000:0000:0000", "::"},
	}
	for _, tt := range good {
		g, err := ParseGID(tt.in)
		if err != nil {
			t.Errorf("ParseGID(%q) error: %v", tt.in, err)
			continue
		}
		if got := g.String(); got != tt.in {
			t.Errorf("ParseGID(%q).String() = %q, want the input back", tt.in, got)
		}
		if got := g.Addr().String(); got != tt.addr {
			t.Errorf("ParseGID(%q).Addr() = %s, want %s", tt.in, got, tt.addr)
		}
	}
	for _, in := range []string{"", "fe80::1", "fe80:0000:0000:0000:5054:00ff:fe0a", "fe80:0000:0000:0000:5054:00ff:fe0a:0002:0000", "fe80:0000:0000:0000:5054:00ff:fe0a:00g2", "fe80:0000:0000:0000:5054:00ff:fe0a:002"} {
		if g, err := ParseGID(in); err == nil {
			t.Errorf("ParseGID(%q) = %v, want an error", in, g)
		}
	}
}

func TestGIDType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		ll   LinkLayer
		want GIDType
		str  string
	}{
		{"IB/RoCE v1", LinkLayerEthernet, GIDTypeRoCEv1, "RoCE v1"},
		{"IB/RoCE v1", LinkLayerInfiniBand, GIDTypeIB, "IB"},
		{"RoCE v2", LinkLayerEthernet, GIDTypeRoCEv2, "RoCE v2"},
		{"", LinkLayerEthernet, GIDTypeUnknown, "unknown"},
		{"RoCE v3", LinkLayerEthernet, GIDTypeUnknown, "unknown"},
	}
	for _, tt := range tests {
		got := parseGIDType(tt.text, tt.ll)
		if got != tt.want || got.String() != tt.str {
			t.Errorf("parseGIDType(%q, %s) = %v (%s), want %v (%s)", tt.text, tt.ll, got, got, tt.want, tt.str)
		}
	}
}

func TestUnitOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want Unit
	}{
		{"port_xmit_data", UnitBytes},
		{"port_rcv_data", UnitBytes},
		{"rdma_tx_bytes", UnitBytes},
		{"port_xmit_packets", UnitPackets},
		{"unicast_rcv_packets", UnitPackets},
		{"sent_pkts", UnitPackets},
		{"np_ecn_marked_roce_packets", UnitPackets},
		{"port_xmit_wait", UnitTicks},
		{"rdma_sends", UnitCount},
		{"out_of_sequence", UnitCount},
	}
	for _, tt := range tests {
		if got := UnitOf(tt.name); got != tt.want {
			t.Errorf("UnitOf(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
	for u, want := range map[Unit]string{UnitCount: "", UnitBytes: "bytes", UnitPackets: "packets", UnitTicks: "ticks"} {
		if got := u.String(); got != want {
			t.Errorf("Unit(%d).String() = %q, want %q", u, got, want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	good := map[string]uint64{"0": 0, "516": 516, "18446744073709551615": math.MaxUint64, "007": 7}
	for in, want := range good {
		if got, err := parseDecimal([]byte(in)); err != nil || got != want {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "18446744073709551616", "99999999999999999999", "-1", "+1", "1 2", "0x10", "N/A"} {
		if got, err := parseDecimal([]byte(in)); err == nil {
			t.Errorf("parseDecimal(%q) = %d, want an error", in, got)
		}
	}
}

func TestOversizedAttribute(t *testing.T) {
	t.Parallel()
	root := copyFixture(t)
	writeFile(t, root, "class/infiniband/rxe0/node_desc", strings.Repeat("x", 300)+"\n")
	if _, err := NewFS(root).Devices(); err == nil || !strings.Contains(err.Error(), "node_desc") {
		t.Errorf("Devices() with a 300-byte node_desc: error = %v, want one naming node_desc", err)
	}
	// The kernel's limit, 64 bytes (IB_DEVICE_NODE_DESC_MAX), reads fine.
	desc := strings.Repeat("d", 64)
	writeFile(t, root, "class/infiniband/rxe0/node_desc", desc+"\n")
	d, err := NewFS(root).Device("rxe0")
	if err != nil || d.NodeDesc != desc {
		t.Errorf("Device(rxe0) with a 64-byte node_desc = %q, %v", d.NodeDesc, err)
	}
}
