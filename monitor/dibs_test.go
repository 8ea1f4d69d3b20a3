package monitor

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/smcnl"
)

// smcdKernel is a host whose two SMC-D sockets talk to each other over the
// DIBS loopback (smcping 127.0.0.1 on a 7.x kernel): a client and a server
// socket, each in its own link group.
type smcdKernel struct{}

const loGID, loGIDExt = 0x0123456789abcdef, 0xfedcba9876543210

func (smcdKernel) Sockets() ([]smcnl.Socket, error) {
	sock := func(inode uint64, src, dst string, lgr uint32) smcnl.Socket {
		return smcnl.Socket{Family: 43, State: smcnl.StateActive, Mode: smcnl.ModeSMCD, Inode: inode,
			Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst),
			Conn: &smcnl.ConnInfo{Token: uint32(inode), RMBESize: 65536, PeerRMBESize: 65536},
			DMB:  &smcnl.DMBInfo{LinkID: lgr, MyGID: loGID, MyGIDExt: loGIDExt, PeerGID: loGID, PeerGIDExt: loGIDExt}}
	}
	return []smcnl.Socket{sock(10, "127.0.0.1:40000", "127.0.0.1:5000", 0x100), sock(11, "127.0.0.1:5000", "127.0.0.1:40000", 0x200)}, nil
}
func (smcdKernel) LinkGroupsR() ([]smcnl.LinkGroupR, error) { return nil, nil }
func (smcdKernel) LinkGroupsD() ([]smcnl.LinkGroupD, error) {
	g := func(id uint32) smcnl.LinkGroupD {
		return smcnl.LinkGroupD{ID: id, GID: loGID, ExtGID: loGIDExt, PeerGID: loGID, PeerExtGID: loGIDExt, Conns: 1, DMBAlloc: 65536}
	}
	return []smcnl.LinkGroupD{g(0x100), g(0x200)}, nil
}
func (smcdKernel) DevicesR() ([]smcnl.Device, error)           { return nil, nil }
func (smcdKernel) Stats() (smcnl.Stats, error)                 { return smcnl.Stats{}, nil }
func (smcdKernel) FallbackStats() (smcnl.FallbackStats, error) { return smcnl.FallbackStats{}, nil }
func (smcdKernel) HSLimitation() (bool, error)                 { return false, nil }
func (smcdKernel) SysInfo() (smcnl.SysInfo, error)             { return smcnl.SysInfo{LocalHost: "smcd"}, nil }
func (smcdKernel) Close() error                                { return nil }

// TestSMCDJoin: SMC-D sockets join their link group by the DMB's link ID
// (smcd_diag_dmbinfo.linkid is the group's ID) and their DIBS device by
// GID; the loopback device, which SMC netlink does not list, comes from
// /sys/class/dibs; an SMC-D group is never counted "without redundancy".
func TestSMCDJoin(t *testing.T) {
	root := t.TempDir()
	lo := filepath.Join(root, "class/dibs/lo")
	if err := os.MkdirAll(lo, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{"gid": "01234567-89ab-cdef-fedc-ba9876543210\n", "fabric_id": "0xffff\n"} {
		if err := os.WriteFile(filepath.Join(lo, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := New(Options{Kernel: smcdKernel{}, SysfsRoot: root, Now: fixedClock()}).Refresh()
	if s.Overview.SMCD != 2 || s.Overview.DIBSDevices != 1 || s.Overview.NoRedundancy != 0 || s.Overview.LinkGroups != 2 {
		t.Errorf("overview %+v", s.Overview)
	}
	for _, c := range s.Conns {
		want := map[string]LGRID{"inode:10": 0x100, "inode:11": 0x200}[c.Key]
		if c.LGRID != want || c.LGRKey == "" || c.DIBSDev != "lo" || c.GID != "01234567-89ab-cdef-fedc-ba9876543210" {
			t.Errorf("%s: %+v", c.Key, c)
		}
	}
	for _, g := range s.LinkGroups {
		if g.Kind != ModeSMCD || g.DIBSDev != "lo" || g.Redundant {
			t.Errorf("group %+v", g)
		}
	}
	var dev *DeviceRow
	for i := range s.Devices {
		if s.Devices[i].Kind == DeviceDIBS {
			dev = &s.Devices[i]
		}
	}
	if dev == nil || dev.Name != "lo" || dev.Conns != 2 || !dev.SMC || dev.FabricID != "0xffff" {
		t.Errorf("DIBS device %+v", dev)
	}
}
