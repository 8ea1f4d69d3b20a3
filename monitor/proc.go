package monitor

import (
	"net/netip"
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

// tcpListeners reads the listening TCP sockets' ports from
// procfs/net/tcp and net/tcp6 (the tables of the reader's network
// namespace, as ss and netstat read them): for each port, whether an
// IPv4 and whether an IPv6 socket listens on it. An AF_SMC listener's TCP
// socket (its clcsock) is one of them, so its family can be told where
// sock_diag's all-zero address cannot (smc_diag_msg_common_fill).
// Unreadable tables give none.
func tcpListeners(procfs string) map[uint16][2]bool {
	out := map[uint16][2]bool{}
	for i, name := range []string{"tcp", "tcp6"} {
		b, err := os.ReadFile(filepath.Join(procfs, "net", name))
		if err != nil {
			continue
		}
		lines := strings.Split(string(b), "\n")
		for _, l := range lines[min(1, len(lines)):] {
			// "  0: 00000000:1388 00000000:0000 0A ...": local address:port
			// in hex, remote, state (0A is TCP_LISTEN).
			f := strings.Fields(l)
			if len(f) < 4 || f[3] != "0A" {
				continue
			}
			_, port, ok := strings.Cut(f[1], ":")
			if !ok {
				continue
			}
			p, err := strconv.ParseUint(port, 16, 16)
			if err != nil {
				continue
			}
			v := out[uint16(p)]
			v[i] = true
			out[uint16(p)] = v
		}
	}
	return out
}

// listenerFamilies gives each AF_SMC listener on the all-zero address its
// family from the TCP listeners (tcpListeners; nil when procfs is not
// read): [::]:PORT when only an IPv6 socket listens on the port, and
// FamilyUnknown when that cannot be told. Only the kernel's rows listen
// indexes (kernelConns) can be such listeners.
func listenerFamilies(conns []ConnRow, listen []int32, listeners map[uint16][2]bool) {
	for _, i := range listen {
		c := &conns[i]
		if c.Source != SourceKernel || c.Family != afSMC || c.Mode != ModeListen || !c.Src.Addr().IsUnspecified() || !c.Src.Addr().Is4() {
			continue
		}
		switch l := listeners[c.Src.Port()]; {
		case l[1] && !l[0]:
			c.Src = netip.AddrPortFrom(netip.IPv6Unspecified(), c.Src.Port())
		case l[0] && !l[1]:
		default:
			c.FamilyUnknown = true
		}
	}
}
