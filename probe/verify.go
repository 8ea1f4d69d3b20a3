package probe

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// Mode is what the kernel made of a connection.
type Mode uint8

const (
	ModeUnknown  Mode = iota // not proven (no smc_diag, socket not found)
	ModeSMCR                 // SMC-R: data over RDMA
	ModeSMCD                 // SMC-D: data over ISM / loopback-ism
	ModeFallback             // an SMC socket that fell back to TCP
	ModeTCP                  // a plain TCP socket (the baseline)
)

var modeNames = [...]string{ModeUnknown: "unknown", ModeSMCR: "SMC-R", ModeSMCD: "SMC-D", ModeFallback: "TCP-FALLBACK", ModeTCP: "TCP"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", uint8(m))
}

// IsSMC reports whether data really goes over SMC.
func (m Mode) IsSMC() bool { return m == ModeSMCR || m == ModeSMCD }

// Link is the SMC-R link a connection uses (smc_diag LGRINFO, plus the
// link group ID from SMC_GEN_NETLINK when it could be matched).
type Link struct {
	LinkID   uint8  `json:"link_id"`
	IBDev    string `json:"ibdev"`
	IBPort   uint8  `json:"ibport"`
	GID      string `json:"gid"`
	PeerGID  string `json:"peer_gid"`
	Role     string `json:"role,omitempty"`
	LGRID    uint32 `json:"lgr_id,omitempty"`
	HasLGRID bool   `json:"-"`
}

// DMB is the SMC-D buffer a connection uses (smc_diag DMBINFO): the DIBS
// device it lives on, its link group, its token and the peer's.
type DMB struct {
	// Dev is the DIBS device whose GID the socket carries ("lo" for the
	// loopback of Linux 6.19+; "" when /sys/class/dibs does not list it).
	Dev string `json:"dev,omitempty"`
	// LGRID is smcd_diag_dmbinfo.linkid: the link group's ID
	// (smc_diag_handle_dmbinfo copies lgr->id into it, net/smc/smc_diag.c).
	LGRID     uint32 `json:"lgr_id"`
	Token     uint64 `json:"token"`
	PeerToken uint64 `json:"peer_token"`
	// Size is the DMB's length (smc_diag CONNINFO rmbe_size).
	Size uint32 `json:"size,omitempty"`
	// GID and PeerGID are spelled as sysfs spells a DIBS device's
	// (smcnl.SMCDGID), the extension halves included.
	GID     string `json:"gid"`
	PeerGID string `json:"peer_gid"`
}

// DiagSocket is what SMC sock_diag reports about one socket, reduced to
// what proves a mode. Inspector implementations convert to it.
type DiagSocket struct {
	Inode  uint64
	Cookie uint64
	// Src and Dst are for people: IPPROTO_SMC sockets report all-zero
	// addresses, so they never identify a socket (see SocketID).
	Src, Dst      netip.AddrPort
	Mode          Mode
	Reason        DeclineCode
	PeerDiagnosis DeclineCode
	Link          *Link
	DMB           *DMB
	// Token is the connection's alert token (SMC-R; 0 before the CLC
	// handshake gave one): the key CDC messages carry, so a capture can be
	// matched with the kernel's view.
	Token uint32
}

// Inspector lists the kernel's SMC sockets; the kernel one is smcnl-based,
// tests pass fixed lists.
type Inspector interface {
	Sockets() ([]DiagSocket, error)
}

// Proof is the kernel's word on one connection, or why there is none.
type Proof struct {
	Mode          Mode
	Reason        DeclineCode
	PeerDiagnosis DeclineCode
	Link          *Link
	DMB           *DMB
	Token         uint32 // alert token, see DiagSocket.Token
	// Err says why Mode is ModeUnknown.
	Err error
}

// SocketID names one socket to SMC sock_diag: the inode of its file
// (smc_diag_msg.diag_inode) and its cookie (SO_COOKIE, which is what
// smc_diag_msg.id.idiag_cookie carries; both come from the SMC sock, not
// the internal TCP one). Either one finds the socket. The 4-tuple does not:
// smc_diag_msg_common_fill (net/smc/smc_diag.c) fills the addresses only
// for AF_SMC sockets, so an IPPROTO_SMC socket (Linux 6.11+, family 2 or
// 10) reports ports but all-zero addresses, and an address match could pick
// another connection.
type SocketID struct {
	Inode  uint64
	Cookie uint64
}

func (id SocketID) String() string {
	return fmt.Sprintf("inode %d, cookie %#x", id.Inode, id.Cookie)
}

// Prove finds the socket by inode or cookie in the kernel's SMC sock_diag
// dump and returns its mode.
func Prove(in Inspector, id SocketID) Proof {
	if in == nil {
		return Proof{Err: errors.New("no SMC socket inspector")}
	}
	socks, err := in.Sockets()
	if err != nil {
		return Proof{Err: err}
	}
	i := matchSocket(socks, id)
	if i < 0 {
		return Proof{Err: notInDump(id, len(socks))}
	}
	s := socks[i]
	return Proof{Mode: s.Mode, Reason: s.Reason, PeerDiagnosis: s.PeerDiagnosis, Link: s.Link, DMB: s.DMB, Token: s.Token}
}

// SocketLiner is an Inspector that can also print the kernel's whole
// sock_diag record of one socket as one key=value line (smcnl's format,
// cursors and token included); smcping --diag prints it at the end of a
// run, before the connections close and sock_diag forgets them.
type SocketLiner interface {
	SocketLine(id SocketID) (string, error)
}

// matchSocket returns the index of the socket with id's inode or cookie
// (a zero one is unknown and matches nothing); -1 when there is none.
func matchSocket(socks []DiagSocket, id SocketID) int {
	for i, s := range socks {
		if (id.Inode != 0 && s.Inode == id.Inode) || (id.Cookie != 0 && s.Cookie == id.Cookie) {
			return i
		}
	}
	return -1
}

func notInDump(id SocketID, n int) error {
	if id.Inode == 0 && id.Cookie == 0 {
		return errors.New("socket has neither inode nor cookie to find it in SMC sock_diag")
	}
	return fmt.Errorf("socket (%v) not in SMC sock_diag dump of %d sockets", id, n)
}

func (p Proof) String() string {
	var b strings.Builder
	switch p.Mode {
	case ModeUnknown:
		b.WriteString("mode unknown")
		if p.Err != nil {
			b.WriteString(" (")
			b.WriteString(p.Err.Error())
			b.WriteString(")")
		}
	case ModeSMCR:
		b.WriteString("SMC-R")
		if l := p.Link; l != nil {
			fmt.Fprintf(&b, " via %s port %d link %d", l.IBDev, l.IBPort, l.LinkID)
			if l.HasLGRID {
				fmt.Fprintf(&b, " lgr 0x%x", l.LGRID)
			}
			fmt.Fprintf(&b, " gid %s peer %s", l.GID, l.PeerGID)
		}
	case ModeSMCD:
		b.WriteString("SMC-D")
		if d := p.DMB; d != nil {
			if d.Dev != "" {
				fmt.Fprintf(&b, " via %s", d.Dev)
			}
			fmt.Fprintf(&b, " lgr 0x%x dmb %#x", d.LGRID, d.Token)
			if d.Size != 0 {
				fmt.Fprintf(&b, " size %d", d.Size)
			}
			fmt.Fprintf(&b, " peer dmb %#x gid %s peer %s", d.PeerToken, d.GID, d.PeerGID)
		}
	case ModeFallback:
		b.WriteString("fallback ")
		fmt.Fprintf(&b, "0x%08x %s", uint32(p.Reason), p.Reason)
		if p.PeerDiagnosis != 0 {
			fmt.Fprintf(&b, " (peer 0x%08x %s: %s)", uint32(p.PeerDiagnosis), p.PeerDiagnosis, p.PeerDiagnosis.Meaning())
		} else {
			fmt.Fprintf(&b, ": %s", p.Reason.Meaning())
		}
	default:
		b.WriteString(p.Mode.String())
	}
	return b.String()
}

// FallbackError reports a connection that did not use SMC although it was
// required. Reason is the local fallback reason, PeerDiagnosis the code
// from the peer's CLC Decline (0 when the peer sent none).
type FallbackError struct {
	Reason        DeclineCode
	PeerDiagnosis DeclineCode
}

func (e *FallbackError) Error() string {
	return "connection fell back to TCP: " + Proof{Mode: ModeFallback, Reason: e.Reason, PeerDiagnosis: e.PeerDiagnosis}.String()
}

// ErrNotProven is returned (wrapped) when SMC is required but the kernel
// could not be asked which mode a connection uses.
var ErrNotProven = errors.New("SMC mode not proven")

// Require turns a proof into an error when the connection is not SMC.
func (p Proof) Require() error {
	switch {
	case p.Mode.IsSMC():
		return nil
	case p.Mode == ModeFallback:
		return &FallbackError{Reason: p.Reason, PeerDiagnosis: p.PeerDiagnosis}
	case p.Mode == ModeUnknown && p.Err != nil:
		return fmt.Errorf("%w: %w", ErrNotProven, p.Err)
	default:
		return fmt.Errorf("%w: connection mode %s", ErrNotProven, p.Mode)
	}
}
