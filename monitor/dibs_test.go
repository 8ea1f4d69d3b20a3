package monitor

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// smcdRecording is the lab's 7.3 guest while a paced smcping connection over 127.0.0.1 ran
// as SMC-D on the DIBS loopback (lab e2e-smcd): its sock_diag and SMC netlink replies and
// its /sys/class/dibs (smcnl/testdata/README.md). Its facts, checked against the guest's
// sysfs and smcping in smcnl's TestGroundTruthSMCDLoopback: the connection's two ends,
// 127.0.0.1:47884 (inode 603) and 127.0.0.1:5002 (inode 607), both in link group 0x100
// (conns 2), a second group 0x200 with none, the loopback lo with GID
// b819dac2-331e-4d96-8ad4-44cd9ce76daf.
const smcdRecording = "../smcnl/testdata/smcd-client-active"

// TestSMCDJoin: SMC-D sockets join their link group by the DMB's link ID
// (smcd_diag_dmbinfo.linkid is the group's ID) and their DIBS device by GID; the
// loopback device, which SMC netlink's GET_DEV_SMCD does not list, comes from
// /sys/class/dibs; an SMC-D group is never counted "without redundancy" and shows no link
// limits. On the loopback both ends of a connection may sit in one group (smcd_lgr_match
// does not compare roles), which the crafted host this test once used did not have.
func TestSMCDJoin(t *testing.T) {
	k, err := ReplayKernel(smcdRecording)
	if err != nil {
		t.Fatal(err)
	}
	s := New(Options{Kernel: k, SysfsRoot: filepath.Join(smcdRecording, "sys"), Now: fixedClock()}).Refresh()
	const gid = "b819dac2-331e-4d96-8ad4-44cd9ce76daf"
	if o := s.Overview; o.SMCD != 2 || o.Listening != 2 || o.DIBSDevices != 1 || o.NoRedundancy != 0 || o.LinkGroups != 2 || o.RNICs != 0 {
		t.Errorf("overview %+v", o)
	}
	ends := 0
	for _, c := range s.Conns {
		if c.Mode != ModeSMCD {
			continue
		}
		ends++
		want := map[string]string{"inode:603": "127.0.0.1:47884", "inode:607": "127.0.0.1:5002"}[c.Key]
		if c.Src.String() != want || c.Link().LGRID != 0x100 || c.Link().LGRKey != "lgrd:00000100" || c.Link().DIBSDev != "lo" ||
			c.Link().GID != gid || c.Link().PeerGID != gid || c.RMBE != 65504 || c.Link().IBDev != "" {
			t.Errorf("%s: %+v", c.Key, c)
		}
	}
	if ends != 2 {
		t.Errorf("%d SMC-D sockets, want the paced connection's two ends", ends)
	}
	conns := map[LGRID]uint32{}
	for _, g := range s.LinkGroups {
		conns[g.ID] = g.Conns
		if g.Kind != ModeSMCD || g.DIBSDev != "lo" || g.GID != gid || g.PeerGID != gid || g.Redundant ||
			g.MaxLinks != 0 || g.MaxConns != 0 || len(g.Links) != 0 || g.EID != "SMC-LAB-UEID" || g.Version != 2 {
			t.Errorf("group %+v", g)
		}
	}
	if conns[0x100] != 2 || conns[0x200] != 0 || len(conns) != 2 {
		t.Errorf("connections per group %v, want 0x100: 2, 0x200: 0", conns)
	}
	var dev *DeviceRow
	for i := range s.Devices {
		if s.Devices[i].Kind == DeviceDIBS {
			dev = &s.Devices[i]
		}
	}
	if dev == nil || dev.Name != "lo" || dev.Conns != 2 || !dev.SMC || dev.GID != gid || dev.FabricID != "0xffff" || dev.Driver != "dibs loopback" {
		t.Errorf("DIBS device %+v", dev)
	}
	if k := s.Kernel; k == nil || k.SMCD.ClientSuccess != 7 || k.SMCD.ServerSuccess != 7 || k.SMCR.ClientSuccess != 0 {
		t.Errorf("kernel statistics %+v", s.Kernel)
	}
}

// TestUsedBySMCUnknown: whether SMC uses a device is a fact only where the
// kernel's device list was read (or a kernel socket shows it): otherwise
// used_by_smc is absent from the JSON, not false, and reads back so.
func TestUsedBySMCUnknown(t *testing.T) {
	for _, tc := range []struct {
		row  DeviceRow
		want string
	}{
		{DeviceRow{Kind: DeviceDIBS, Name: "lo"}, ""},
		{DeviceRow{Kind: DeviceDIBS, Name: "lo", SMCKnown: true}, `"used_by_smc":false`},
		{DeviceRow{Kind: DeviceRDMA, Name: "rxe0", SMC: true, SMCKnown: true}, `"used_by_smc":true`},
	} {
		b, err := json.Marshal(tc.row)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.want == "" && strings.Contains(string(b), "used_by_smc"):
			t.Errorf("%s: %s, want no used_by_smc", tc.row.Name, b)
		case tc.want != "" && !strings.Contains(string(b), tc.want):
			t.Errorf("%s: %s, want %s", tc.row.Name, b, tc.want)
		}
		var back DeviceRow
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.SMC != tc.row.SMC || back.SMCKnown != tc.row.SMCKnown || back.Name != tc.row.Name {
			t.Errorf("%s read back as %+v", tc.row.Name, back)
		}
	}
}
