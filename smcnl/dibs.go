package smcnl

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DIBSDevice is one DIBS device (Linux 6.19+: drivers/dibs, the layer under
// SMC-D): an ISM device on IBM Z, or the loopback device "lo"
// (CONFIG_DIBS_LO) that SMC-D uses between two sockets of one host. SMC
// netlink's GET_DEV_SMCD does not list the loopback (smc_nl_prep_smcd_dev
// skips it, net/smc/smc_ism.c), so sysfs is where it is seen.
type DIBSDevice struct {
	Name string
	// GID as sysfs writes it (dibs_main.c gid_show: %pUb, a UUID): the
	// spelling every SMC-D GID gets in this project (SMCDGID).
	GID string
	// GIDHigh and GIDLow are the halves SMC-D reports: smcd_diag_dmbinfo's
	// my_gid and my_gid_ext, SMC_NLA_LGR_D_GID and _EXT_GID
	// (copy_to_smcdgid, net/smc/smc_ism.h: each 8 bytes big-endian).
	GIDHigh, GIDLow uint64
	FabricID        string // fabric_id, "0xffff" for the loopback
	Driver          string // the bus driver; "" for the loopback, which has none
	// Parent is the bus device's name (an ISM's PCI ID, "0000:00:05.0"),
	// the PCI ID SMC netlink's GET_DEV_SMCD names it by
	// (smc_set_pci_values); "" for the loopback.
	Parent string
}

// DIBSDevices lists /sys/class/dibs under the sysfs root sysfs; none (and
// no error) on a kernel without DIBS.
func DIBSDevices(sysfs string) ([]DIBSDevice, error) {
	dir := filepath.Join(sysfs, "class", "dibs")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []DIBSDevice
	for _, e := range ents {
		d := DIBSDevice{Name: e.Name()}
		p := filepath.Join(dir, e.Name())
		if b, err := os.ReadFile(filepath.Join(p, "gid")); err == nil {
			d.GID = strings.TrimSpace(string(b))
			d.GIDHigh, d.GIDLow, err = ParseSMCDGID(d.GID)
			if err != nil {
				return nil, fmt.Errorf("%s/gid: %w", p, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(p, "fabric_id")); err == nil {
			d.FabricID = strings.TrimSpace(string(b))
		}
		if l, err := os.Readlink(filepath.Join(p, "device", "driver")); err == nil {
			d.Driver = filepath.Base(l)
		}
		if l, err := os.Readlink(filepath.Join(p, "device")); err == nil {
			d.Parent = filepath.Base(l)
		}
		out = append(out, d)
	}
	return out, nil
}

// DIBSByGID returns the device of devs whose GID has the halves gid and
// ext (an SMC-D socket's or link group's), or false.
func DIBSByGID(devs []DIBSDevice, gid, ext uint64) (DIBSDevice, bool) {
	for _, d := range devs {
		if d.GID != "" && d.GIDHigh == gid && d.GIDLow == ext {
			return d, true
		}
	}
	return DIBSDevice{}, false
}

// ParseSMCDGID reads a DIBS GID as sysfs writes it (a UUID: its 16 bytes
// in order) into the two halves SMC-D reports.
func ParseSMCDGID(s string) (gid, ext uint64, err error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		return 0, 0, fmt.Errorf("GID %q: not a UUID", s)
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), nil
}

// SMCDGID writes an SMC-D GID (its two halves) as sysfs writes the DIBS
// device's: one spelling for a socket's, a group's and a device's GID. A
// GID of zeros is "" (none).
func SMCDGID(gid, ext uint64) string {
	if gid == 0 && ext == 0 {
		return ""
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], gid)
	binary.BigEndian.PutUint64(b[8:], ext)
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
