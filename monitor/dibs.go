package monitor

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

// dibsDevice is one DIBS device (Linux 6.19+: drivers/dibs, the layer
// under SMC-D): an ISM device on IBM Z, or the loopback device "lo"
// (CONFIG_DIBS_LO) that SMC-D uses between two sockets of one host. SMC
// netlink's GET_DEV_SMCD does not list the loopback (smc_nl_prep_smcd_dev
// skips it), so sysfs is where it is seen.
type dibsDevice struct {
	name     string
	gid      uint64 // the GID's first 8 bytes, as smcd_diag_dmbinfo's my_gid
	gidExt   uint64 // its last 8, my_gid_ext
	gidText  string
	fabricID string
	driver   string
}

// readDIBS lists /sys/class/dibs under root; none (and no error) on a
// kernel without DIBS.
func readDIBS(root string) ([]dibsDevice, error) {
	dir := filepath.Join(root, "class", "dibs")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []dibsDevice
	for _, e := range ents {
		d := dibsDevice{name: e.Name()}
		p := filepath.Join(dir, e.Name())
		if b, err := os.ReadFile(filepath.Join(p, "gid")); err == nil {
			d.gidText = strings.TrimSpace(string(b))
			d.gid, d.gidExt, err = parseDIBSGID(d.gidText)
			if err != nil {
				return nil, fmt.Errorf("%s/gid: %w", p, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(p, "fabric_id")); err == nil {
			d.fabricID = strings.TrimSpace(string(b))
		}
		if l, err := os.Readlink(filepath.Join(p, "device", "driver")); err == nil {
			d.driver = filepath.Base(l)
		} else if d.name == "lo" {
			d.driver = "dibs loopback"
		}
		out = append(out, d)
	}
	return out, nil
}

// parseDIBSGID reads a DIBS GID as sysfs writes it (a UUID, %pUb: its 16
// bytes in order) into the two halves SMC-D reports (copy_to_smcdgid:
// each 8 bytes big-endian).
func parseDIBSGID(s string) (gid, ext uint64, err error) {
	b, err := hex.DecodeString(strings.ReplaceAll(s, "-", ""))
	if err != nil || len(b) != 16 {
		return 0, 0, fmt.Errorf("GID %q: not a UUID", s)
	}
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:]), nil
}

// smcdGID writes an SMC-D GID (its two halves) as sysfs writes the DIBS
// device's: one spelling for a socket's, a group's and a device's GID.
func smcdGID(gid, ext uint64) string {
	if gid == 0 && ext == 0 {
		return ""
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], gid)
	binary.BigEndian.PutUint64(b[8:], ext)
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
