package smcnl

import (
	"fmt"
	"os"
	"strings"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// The legacy "SMC_PNETID" family configures the PNET table (net/smc/smc_pnet.c,
// include/uapi/linux/smc.h SMC_PNETID_*): which netdevs and RDMA device ports share a
// physical network, so SMC-R picks an RDMA device for a TCP route. Soft-RoCE
// needs it as soon as a host has two RoCE devices, or to use a device for
// connections routed over another netdev (lo).
const (
	pnetFamilyName    = "SMC_PNETID"
	pnetFamilyVersion = 1

	pnetCmdGet   = 1
	pnetCmdAdd   = 2
	pnetCmdDel   = 3
	pnetCmdFlush = 4

	pnetAttrName    = 1
	pnetAttrEthName = 2
	pnetAttrIBName  = 3
	pnetAttrIBPort  = 4

	maxPNETIDLen = 16 // SMC_MAX_PNETID_LEN
)

// PNETEntry is one PNET table entry as the kernel lists it: a netdev or an
// RDMA device port (or both, when added together) under a PNET ID. The
// kernel lists absent names as "n/a"; they are empty here.
type PNETEntry struct {
	PNETID  string `json:"pnetid"`
	EthName string `json:"eth_name,omitempty"`
	IBName  string `json:"ib_name,omitempty"`
	IBPort  uint8  `json:"ib_port,omitempty"`
}

// PNETConn talks to the SMC_PNETID family. Listing needs no privileges;
// changes need CAP_NET_ADMIN. Like SMC_GEN_NETLINK it is per network
// namespace.
type PNETConn struct {
	c      *genetlink.Conn
	family genetlink.Family
	rec    func(replies []netlink.Message)
}

// SetRecorder hands the raw replies of later commands to fn (nil stops
// it): smclab record writes them to pnet.bin.
func (p *PNETConn) SetRecorder(fn func(replies []netlink.Message)) { p.rec = fn }

// DialPNET opens a generic netlink socket and resolves SMC_PNETID.
func DialPNET() (*PNETConn, error) { return dialGenl(NewPNETConn) }

// NewPNETConn resolves SMC_PNETID on an existing connection (genltest in
// tests). The PNETConn takes ownership of c.
func NewPNETConn(c *genetlink.Conn) (*PNETConn, error) {
	f, err := resolveFamily(c, pnetFamilyName, "4.11")
	if err != nil {
		return nil, err
	}
	return &PNETConn{c: c, family: f}, nil
}

// Close closes the underlying netlink socket.
func (p *PNETConn) Close() error { return p.c.Close() }

// NormalizePNETID returns the form the kernel stores: upper case, 1 to 16
// letters and digits (smc_pnetid_valid).
func NormalizePNETID(name string) (string, error) {
	u := strings.ToUpper(strings.TrimSpace(name))
	if len(u) == 0 || len(u) > maxPNETIDLen {
		return "", fmt.Errorf("smcnl: PNET ID %q: length %d not in 1..%d: %w", name, len(u), maxPNETIDLen, os.ErrInvalid)
	}
	for i := 0; i < len(u); i++ {
		if ch := u[i]; !(ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
			return "", fmt.Errorf("smcnl: PNET ID %q: character %q at %d not allowed: %w", name, ch, i, os.ErrInvalid)
		}
	}
	return u, nil
}

func (p *PNETConn) execute(cmd uint8, dump bool, data []byte) ([]genetlink.Message, error) {
	msgs, err := genlExecute(p.c, p.family, cmd, dump, data)
	if err != nil {
		return nil, mapErrno(pnetCmdNames[cmd], err)
	}
	if p.rec != nil {
		p.rec(rawReplies(p.family.ID, msgs))
	}
	return msgs, nil
}

var pnetCmdNames = map[uint8]string{pnetCmdGet: "SMC_PNETID_GET", pnetCmdAdd: "SMC_PNETID_ADD",
	pnetCmdDel: "SMC_PNETID_DEL", pnetCmdFlush: "SMC_PNETID_FLUSH"}

// AddPNETID puts e.EthName and/or the RDMA port e.IBName:e.IBPort under
// e.PNETID (IBPort 0 means port 1). Devices must exist; a device already
// under another PNET ID gives an error matching os.ErrExist.
func (p *PNETConn) AddPNETID(e PNETEntry) error {
	id, err := NormalizePNETID(e.PNETID)
	if err != nil {
		return err
	}
	if e.EthName == "" && e.IBName == "" {
		return fmt.Errorf("smcnl: PNET ID %s: need a netdev or an RDMA device: %w", id, os.ErrInvalid)
	}
	ae := netlink.NewAttributeEncoder()
	ae.String(pnetAttrName, id)
	if e.EthName != "" {
		ae.String(pnetAttrEthName, e.EthName)
	}
	if e.IBName != "" {
		ae.String(pnetAttrIBName, e.IBName)
		ae.Uint8(pnetAttrIBPort, max(e.IBPort, 1))
	}
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = p.execute(pnetCmdAdd, false, b)
	return err
}

// RemovePNETID removes every device from PNET ID name.
func (p *PNETConn) RemovePNETID(name string) error {
	id, err := NormalizePNETID(name)
	if err != nil {
		return err
	}
	b, err := netlink.MarshalAttributes([]netlink.Attribute{{Type: pnetAttrName, Data: append([]byte(id), 0)}})
	if err != nil {
		return err
	}
	_, err = p.execute(pnetCmdDel, false, b)
	return err
}

// FlushPNETIDs empties the PNET table of the namespace.
func (p *PNETConn) FlushPNETIDs() error {
	_, err := p.execute(pnetCmdFlush, false, nil)
	return err
}

// PNETIDs lists the table, one entry per device (smc_pnet_dumpinfo).
func (p *PNETConn) PNETIDs() ([]PNETEntry, error) {
	msgs, err := p.execute(pnetCmdGet, true, nil)
	if err != nil {
		return nil, err
	}
	var out []PNETEntry
	for i, m := range msgs {
		e, err := ParsePNETEntry(m.Data)
		if err != nil {
			return nil, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// ParsePNETEntry decodes one SMC_PNETID_GET reply message
// (smc_pnet_dumpinfo, net/smc/smc_pnet.c): one table entry, a netdev or an
// RDMA/DIBS device port under a PNET ID. Every entry of the table was set
// by a user (smc_pnet, smcr pnet); a device's hardware PNET ID is not in
// it (SMC_NLA_DEV_PORT_PNET_USR says which a device has).
func ParsePNETEntry(b []byte) (PNETEntry, error) {
	var e PNETEntry
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return PNETEntry{}, fmt.Errorf("PNET entry: %w", err)
	}
	name := func() string {
		s := ad.String()
		if s == "n/a" {
			return ""
		}
		return s
	}
	for ad.Next() {
		switch ad.Type() {
		case pnetAttrName:
			e.PNETID = ad.String()
		case pnetAttrEthName:
			e.EthName = name()
		case pnetAttrIBName:
			e.IBName = name()
		case pnetAttrIBPort:
			// 0xff with an "n/a" device: no port (smc_pnet_dumpinfo).
			if e.IBPort = ad.Uint8(); e.IBPort == 0xff {
				e.IBPort = 0
			}
		}
	}
	if err := ad.Err(); err != nil {
		return PNETEntry{}, fmt.Errorf("PNET entry: %w", err)
	}
	return e, nil
}
