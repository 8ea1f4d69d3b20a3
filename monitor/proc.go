package monitor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Owner is the process holding a socket.
type Owner struct {
	PID  int
	Comm string
}

// socketOwners maps socket inodes to their owning process, the way ss -p
// does: every /proc/PID/fd/* link that reads "socket:[INODE]". Processes
// that vanish or cannot be read (another user's, without root) are
// skipped: their sockets show no owner.
func socketOwners(procfs string, want map[uint64]bool) map[uint64]Owner {
	out := map[uint64]Owner{}
	if len(want) == 0 {
		return out
	}
	ents, err := os.ReadDir(procfs)
	if err != nil {
		return out
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		fdDir := filepath.Join(procfs, e.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		var comm string
		for _, fd := range fds {
			l, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(l, "socket:[") {
				continue
			}
			ino, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]"), 10, 64)
			if err != nil || !want[ino] {
				continue
			}
			if _, seen := out[ino]; seen {
				continue
			}
			if comm == "" {
				b, _ := os.ReadFile(filepath.Join(procfs, e.Name(), "comm"))
				comm = trimNL(b)
			}
			out[ino] = Owner{PID: pid, Comm: comm}
		}
	}
	return out
}

// smcSysctls reads net.smc.* (Documentation/networking/smc-sysctl.rst):
// buffer sizes, link-group limits, autocorking, handshake limitation,
// WR budgets, hs_ctrl. Missing files are absent settings on this kernel.
func smcSysctls(procfs string) []Setting {
	dir := filepath.Join(procfs, "sys", "net", "smc")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Setting
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, Setting{Name: "net.smc." + e.Name(), Value: trimNL(b)})
	}
	return out
}

// readIfIndexes maps ifindex → name from sysfs class/net/*/ifindex.
func readIfIndexes(sysfs string) map[uint32]string {
	out := map[uint32]string{}
	dir := filepath.Join(sysfs, "class", "net")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "ifindex"))
		if err != nil {
			continue
		}
		if n, err := strconv.ParseUint(trimNL(b), 10, 32); err == nil {
			out[uint32(n)] = e.Name()
		}
	}
	return out
}
