package probe

import (
	"bytes"
	"errors"
	"strings"

	"github.com/smcscope/smcscope/smcnl"
)

// KernelInspector asks the running kernel through smcnl: SMC sock_diag for
// the sockets, and SMC_GEN_NETLINK for the link-group ID that sock_diag
// does not report.
type KernelInspector struct{}

// Sockets implements Inspector.
func (KernelInspector) Sockets() ([]DiagSocket, error) {
	socks, err := smcnl.Sockets()
	if err != nil {
		if errors.Is(err, smcnl.ErrNotSupported) {
			return nil, &UnsupportedError{Feature: "SMC sock_diag", Needs: "the smc_diag kernel module (modprobe smc_diag; CONFIG_SMC_DIAG)", Err: err}
		}
		return nil, err
	}
	var groups []smcnl.LinkGroupR
	var dibs []smcnl.DIBSDevice
	for _, s := range socks {
		if s.LGR != nil && groups == nil {
			groups = linkGroups()
		}
		if s.DMB != nil && dibs == nil {
			// Best effort as well: without the device the proof still
			// has the DMB, its group and the GIDs.
			dibs, _ = smcnl.DIBSDevices("/sys")
		}
	}
	out := make([]DiagSocket, 0, len(socks))
	for _, s := range socks {
		out = append(out, fromSMCNL(s, groups, dibs))
	}
	return out, nil
}

// linkGroups is best effort: without SMC_GEN_NETLINK (before 5.11) the
// proof simply carries no link-group ID.
func linkGroups() []smcnl.LinkGroupR {
	c, err := smcnl.Dial()
	if err != nil {
		return nil
	}
	defer c.Close()
	g, err := c.LinkGroupsR()
	if err != nil {
		return nil
	}
	return g
}

// fromSMCNL reduces an smcnl socket to what proves its mode: an SMC-R
// socket's link (and link group, matched in groups), an SMC-D socket's DMB
// (and DIBS device, matched by GID in dibs).
func fromSMCNL(s smcnl.Socket, groups []smcnl.LinkGroupR, dibs []smcnl.DIBSDevice) DiagSocket {
	d := DiagSocket{
		Inode:         s.Inode,
		Cookie:        s.Cookie,
		Src:           s.Src,
		Dst:           s.Dst,
		Reason:        DeclineCode(s.FallbackReason),
		PeerDiagnosis: DeclineCode(s.PeerDiagnosis),
	}
	switch s.Mode {
	case smcnl.ModeSMCR:
		d.Mode = ModeSMCR
	case smcnl.ModeSMCD:
		d.Mode = ModeSMCD
	case smcnl.ModeFallback:
		d.Mode = ModeFallback
	}
	if l := s.LGR; l != nil && d.Mode == ModeSMCR {
		d.Link = &Link{LinkID: l.LinkID, IBDev: l.IBDev, IBPort: l.IBPort, GID: l.GID, PeerGID: l.PeerGID, Role: l.Role.String()}
		d.Link.LGRID, d.Link.HasLGRID = findLGR(groups, l)
	}
	if s.Conn != nil {
		d.Token = s.Conn.Token
	}
	if m := s.DMB; m != nil && d.Mode == ModeSMCD {
		d.DMB = &DMB{LGRID: m.LinkID, Token: m.Token, PeerToken: m.PeerToken,
			GID: smcnl.SMCDGID(m.MyGID, m.MyGIDExt), PeerGID: smcnl.SMCDGID(m.PeerGID, m.PeerGIDExt)}
		if dev, ok := smcnl.DIBSByGID(dibs, m.MyGID, m.MyGIDExt); ok {
			d.DMB.Dev = dev.Name
		}
		if s.Conn != nil {
			d.DMB.Size = s.Conn.RMBESize
		}
	}
	return d
}

// findLGR matches the socket's link to a link group by device, port, link
// ID and both GIDs: sock_diag has no link-group ID of its own.
func findLGR(groups []smcnl.LinkGroupR, l *smcnl.LGRInfo) (uint32, bool) {
	for _, g := range groups {
		if g.Role != l.Role {
			continue
		}
		for _, k := range g.Links {
			if k.ID == l.LinkID && k.IBDev == l.IBDev && k.IBPort == l.IBPort && k.GID == l.GID && k.PeerGID == l.PeerGID {
				return g.ID, true
			}
		}
	}
	return 0, false
}

// SocketLine implements SocketLiner with smcnl.WriteSockets, finding the
// socket as Prove does.
func (KernelInspector) SocketLine(id SocketID) (string, error) {
	socks, err := smcnl.Sockets()
	if err != nil {
		return "", err
	}
	keys := make([]DiagSocket, len(socks))
	for i, s := range socks {
		keys[i] = DiagSocket{Inode: s.Inode, Cookie: s.Cookie}
	}
	i := matchSocket(keys, id)
	if i < 0 {
		return "", notInDump(id, len(socks))
	}
	var b bytes.Buffer
	if err := smcnl.WriteSockets(&b, socks[i:i+1]); err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(b.String(), "\n")
	return line, nil
}
