package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// SMC generic netlink commands (include/uapi/linux/smc.h).
const (
	cmdSysInfo   = 1
	cmdLgrSMCR   = 2
	cmdLinkSMCR  = 3
	cmdStats     = 7
	cmdFbStats   = 8
	cmdDumpUEID  = 9
	cmdAddUEID   = 10
	sockDiagByFm = 20
)

type diagSock struct {
	state, mode      uint8
	src, dst         netip.AddrPort
	reason, peerDiag uint32
	token            uint32
	hasToken         bool
	linkID           uint8
	ibDev, gid, peer string
	role             uint8
}

var smcStates = map[uint8]string{1: "ACTIVE", 2: "INIT", 7: "CLOSED", 10: "LISTEN",
	20: "PEERCLOSEWAIT1", 21: "PEERCLOSEWAIT2", 22: "APPCLOSEWAIT1", 23: "APPCLOSEWAIT2",
	24: "APPFINCLOSEWAIT", 25: "PEERFINCLOSEWAIT", 26: "PEERABORTWAIT", 27: "PROCESSABORT"}

func (s diagSock) String() string {
	mode := map[uint8]string{0: "SMCR", 1: "TCP-FALLBACK", 2: "SMCD"}[s.mode]
	b := fmt.Sprintf("%s -> %s state=%s mode=%s reason=0x%08x peer_diag=0x%08x",
		s.src, s.dst, smcStates[s.state], mode, s.reason, s.peerDiag)
	if s.hasToken {
		b += fmt.Sprintf(" token=0x%x", s.token)
	}
	if s.ibDev != "" {
		b += fmt.Sprintf(" link=%d dev=%s role=%d gid=%s peer_gid=%s", s.linkID, s.ibDev, s.role, s.gid, s.peer)
	}
	return b
}

func cstr(b []byte) string {
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

func diagAddr(b []byte, port uint16) netip.AddrPort {
	var a16 [16]byte
	copy(a16[:], b)
	if uint64(binary.BigEndian.Uint32(b[4:]))|binary.BigEndian.Uint64(b[8:]) == 0 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[:4])), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(a16).Unmap(), port)
}

// sockDiag dumps every AF_SMC socket with connection and link-group info.
func sockDiag() ([]diagSock, error) {
	c, err := netlink.Dial(unix.NETLINK_SOCK_DIAG, nil)
	if err != nil {
		return nil, fmt.Errorf("sock_diag dial: %w", err)
	}
	defer c.Close()
	req := make([]byte, 52)
	req[0] = afSMC
	req[3] = 0x01 | 0x02 // CONNINFO | LGRINFO
	msgs, err := c.Execute(netlink.Message{
		Header: netlink.Header{Type: sockDiagByFm, Flags: netlink.Request | netlink.Dump},
		Data:   req,
	})
	if err != nil {
		return nil, fmt.Errorf("smc_diag dump: %w", err)
	}
	var out []diagSock
	for _, m := range msgs {
		d := m.Data
		if len(d) < 64 {
			continue
		}
		s := diagSock{state: d[1], mode: d[2]}
		s.src = diagAddr(d[8:24], binary.BigEndian.Uint16(d[4:]))
		s.dst = diagAddr(d[24:40], binary.BigEndian.Uint16(d[6:]))
		ad, err := netlink.NewAttributeDecoder(d[64:])
		if err != nil {
			return nil, err
		}
		for ad.Next() {
			b := ad.Bytes()
			switch ad.Type() {
			case 5:
				if len(b) >= 8 {
					s.reason = binary.NativeEndian.Uint32(b)
					s.peerDiag = binary.NativeEndian.Uint32(b[4:])
				}
			case 1:
				if len(b) >= 4 {
					s.token, s.hasToken = binary.NativeEndian.Uint32(b), true
				}
			case 2:
				if len(b) >= 147 {
					s.linkID, s.ibDev = b[0], cstr(b[1:65])
					s.gid, s.peer, s.role = cstr(b[66:106]), cstr(b[106:146]), b[146]
				}
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func smcDump(cmd uint8) ([]genetlink.Message, error) {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("genetlink dial: %w", err)
	}
	defer c.Close()
	f, err := c.GetFamily("SMC_GEN_NETLINK")
	if err != nil {
		return nil, fmt.Errorf("family SMC_GEN_NETLINK: %w", err)
	}
	msgs, err := c.Execute(genetlink.Message{Header: genetlink.Header{Command: cmd, Version: 1}},
		f.ID, netlink.Request|netlink.Dump)
	if err != nil {
		return nil, fmt.Errorf("SMC netlink cmd %d: %w", cmd, err)
	}
	return msgs, nil
}

func ueidAdd(name string) error {
	if len(name) == 0 || len(name) > 32 {
		return fmt.Errorf("UEID %q: 1..32 characters", name)
	}
	// The kernel wants exactly 32 blank-padded upper-case characters plus NUL.
	val := []byte(fmt.Sprintf("%-32s\x00", strings.ToUpper(name)))
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(1, val)
	data, err := ae.Encode()
	if err != nil {
		return err
	}
	c, err := genetlink.Dial(nil)
	if err != nil {
		return fmt.Errorf("genetlink dial: %w", err)
	}
	defer c.Close()
	f, err := c.GetFamily("SMC_GEN_NETLINK")
	if err != nil {
		return fmt.Errorf("family SMC_GEN_NETLINK: %w", err)
	}
	_, err = c.Execute(genetlink.Message{Header: genetlink.Header{Command: cmdAddUEID, Version: 1}, Data: data},
		f.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("add UEID: %w", err)
	}
	return nil
}

// walk calls fn for each attribute of b and recurses into those for which fn returns true.
func walk(b []byte, fn func(typ uint16, v []byte) bool) error {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return err
	}
	for ad.Next() {
		if fn(ad.Type(), ad.Bytes()) {
			if err := walk(ad.Bytes(), fn); err != nil {
				return err
			}
		}
	}
	return ad.Err()
}

func num(v []byte) uint64 {
	switch len(v) {
	case 1:
		return uint64(v[0])
	case 2:
		return uint64(binary.NativeEndian.Uint16(v))
	case 4:
		return uint64(binary.NativeEndian.Uint32(v))
	case 8:
		return binary.NativeEndian.Uint64(v)
	}
	return 0
}

var techNames = map[uint16]string{7: "clnt_v1_succ", 8: "clnt_v2_succ", 9: "srv_v1_succ", 10: "srv_v2_succ",
	12: "splice", 13: "cork", 14: "nodelay", 15: "urg", 16: "rx_bytes", 17: "tx_bytes", 18: "rx_cnt", 19: "tx_cnt"}

func stats(w io.Writer) error {
	msgs, err := smcDump(cmdStats)
	if err != nil {
		return err
	}
	var parts []string
	for _, m := range msgs {
		_ = walk(m.Data, func(t uint16, v []byte) bool {
			if t != 7 {
				return false
			}
			_ = walk(v, func(t uint16, v []byte) bool {
				switch t {
				case 2: // SMCR_TECH
					_ = walk(v, func(t uint16, v []byte) bool {
						if n, ok := techNames[t]; ok && num(v) != 0 {
							parts = append(parts, fmt.Sprintf("smcr.%s=%d", n, num(v)))
						}
						return false
					})
				case 3, 4:
					if num(v) != 0 {
						parts = append(parts, fmt.Sprintf("%s_hs_err=%d", map[uint16]string{3: "clnt", 4: "srv"}[t], num(v)))
					}
				}
				return false
			})
			return false
		})
	}
	fmt.Fprintf(w, "STATS: %s\n", strings.Join(parts, " "))
	return nil
}

func fbStats(w io.Writer) error {
	msgs, err := smcDump(cmdFbStats)
	if err != nil {
		return err
	}
	n := 0
	for _, m := range msgs {
		var side, code, cnt uint64
		_ = walk(m.Data, func(t uint16, v []byte) bool {
			if t == 8 {
				_ = walk(v, func(t uint16, v []byte) bool {
					switch t {
					case 1:
						side = num(v)
					case 4:
						code = num(v)
					case 5:
						cnt = num(v)
					}
					return false
				})
			}
			return false
		})
		if code != 0 || cnt != 0 {
			n++
			fmt.Fprintf(w, "FBSTATS: side=%s reason=0x%08x count=%d\n", map[uint64]string{0: "client", 1: "server"}[side], code, cnt)
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "FBSTATS: (none)")
	}
	return nil
}

type lgr struct {
	id, conns        uint64
	role, typ        uint64
	negEID, peerHost string
	ver, rel         uint64
}

var lgrTypes = map[uint64]string{0: "NONE", 1: "SINGLE", 2: "SYMMETRIC", 3: "ASYMMETRIC_PEER", 4: "ASYMMETRIC_LOCAL"}

func parseLgr(v []byte) lgr {
	var l lgr
	_ = walk(v, func(t uint16, v []byte) bool {
		switch t {
		case 1:
			l.id = num(v)
		case 2:
			l.role = num(v)
		case 3:
			l.typ = num(v)
		case 6:
			l.conns = num(v)
		case 7: // V2_COMMON, numbered from 0
			_ = walk(v, func(t uint16, v []byte) bool {
				switch t {
				case 0:
					l.ver = num(v)
				case 1:
					l.rel = num(v)
				case 3:
					l.negEID = strings.TrimRight(cstr(v), " ")
				case 4:
					l.peerHost = cstr(v)
				}
				return false
			})
		}
		return false
	})
	return l
}

func links(w io.Writer) (int, error) {
	msgs, err := smcDump(cmdLinkSMCR)
	if err != nil {
		return 0, err
	}
	nLgr := 0
	var cur uint64
	for _, m := range msgs {
		_ = walk(m.Data, func(t uint16, v []byte) bool {
			switch t {
			case 2:
				l := parseLgr(v)
				cur = l.id
				nLgr++
				if w != nil {
					fmt.Fprintf(w, "LGR: id=0x%x role=%s type=%s conns=%d v2_ver=%d v2_rel=%d neg_eid=%q\n", l.id,
						map[uint64]string{0: "client", 1: "server"}[l.role], lgrTypes[l.typ], l.conns, l.ver, l.rel, l.negEID)
				}
			case 3:
				var id, state, conns, uid, puid, ndev uint64
				var dev, gid, pgid string
				_ = walk(v, func(t uint16, v []byte) bool {
					switch t {
					case 1:
						id = num(v)
					case 2:
						dev = cstr(v)
					case 4:
						gid = cstr(v)
					case 5:
						pgid = cstr(v)
					case 6:
						conns = num(v)
					case 7:
						ndev = num(v)
					case 8:
						uid = num(v)
					case 9:
						puid = num(v)
					case 10:
						state = num(v)
					}
					return false
				})
				if w != nil {
					fmt.Fprintf(w, "LINK: lgr=0x%x link_id=%d state=%d conns=%d dev=%s netdev=%d uid=0x%x peer_uid=0x%x gid=%s peer_gid=%s\n",
						cur, id, state, conns, dev, ndev, uid, puid, gid, pgid)
				}
			}
			return false
		})
	}
	return nLgr, nil
}

func report(w io.Writer) error {
	var errs []error
	if msgs, err := smcDump(cmdSysInfo); err == nil {
		var parts []string
		for _, m := range msgs {
			_ = walk(m.Data, func(t uint16, v []byte) bool {
				if t == 1 {
					_ = walk(v, func(t uint16, v []byte) bool {
						if name, ok := map[uint16]string{1: "ver", 2: "rel", 6: "is_smcr_v2"}[t]; ok {
							parts = append(parts, fmt.Sprintf("%s=%d", name, num(v)))
						}
						return false
					})
				}
				return false
			})
		}
		fmt.Fprintf(w, "SYSINFO: %s\n", strings.Join(parts, " "))
	} else {
		errs = append(errs, err)
	}
	if msgs, err := smcDump(cmdDumpUEID); err == nil {
		for _, m := range msgs {
			_ = walk(m.Data, func(t uint16, v []byte) bool {
				if t == 1 {
					fmt.Fprintf(w, "UEID: %q\n", strings.TrimRight(cstr(v), " "))
				}
				return false
			})
		}
	} else {
		errs = append(errs, err)
	}
	errs = append(errs, stats(w), fbStats(w))
	if _, err := links(w); err != nil {
		errs = append(errs, err)
	}
	socks, err := sockDiag()
	errs = append(errs, err)
	for _, s := range socks {
		fmt.Fprintf(w, "SOCK: %s\n", s)
	}
	return errors.Join(errs...)
}

func waitLgrGone(args []string) error {
	fs := flag.NewFlagSet("wait-lgr-gone", flag.ContinueOnError)
	secs := fs.Int("t", 20, "seconds")
	keep := fs.Int("keep", 0, "wait until at most this many link groups remain")
	if err := fs.Parse(args); err != nil {
		return err
	}
	deadline := time.Now().Add(time.Duration(*secs) * time.Second)
	for {
		n, err := links(nil)
		if err != nil {
			return err
		}
		if n <= *keep {
			fmt.Printf("LGR-GONE remaining=%d\n", n)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d link group(s) still present after %ds", n, *secs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// pnetAdd puts a netdev and/or an RDMA device port into PNET table entry name
// (legacy generic netlink family SMC_PNETID, command ADD).
func pnetAdd(name, eth, ib string) error {
	ae := netlink.NewAttributeEncoder()
	ae.String(1, strings.ToUpper(name))
	if eth != "" {
		ae.String(2, eth)
	}
	if ib != "" {
		ae.String(3, ib)
		ae.Uint8(4, 1)
	}
	data, err := ae.Encode()
	if err != nil {
		return err
	}
	c, err := genetlink.Dial(nil)
	if err != nil {
		return fmt.Errorf("genetlink dial: %w", err)
	}
	defer c.Close()
	f, err := c.GetFamily("SMC_PNETID")
	if err != nil {
		return fmt.Errorf("family SMC_PNETID: %w", err)
	}
	_, err = c.Execute(genetlink.Message{Header: genetlink.Header{Command: 2, Version: 1}, Data: data},
		f.ID, netlink.Request|netlink.Acknowledge)
	if err != nil {
		return fmt.Errorf("pnet add %s %s %s: %w", name, eth, ib, err)
	}
	return nil
}
