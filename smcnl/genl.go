package smcnl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// Conn talks to the kernel's SMC_GEN_NETLINK family. Every dump is readable
// without privileges; UEID changes need CAP_NET_ADMIN. The family is
// per network namespace, so a Conn sees the namespace it was dialled in.
type Conn struct {
	c      *genetlink.Conn
	family genetlink.Family

	mu  sync.Mutex // guards rec
	rec Recorder
}

// Recorder receives the reply messages of each command as netlink messages,
// in the order the kernel sent them (smclab record turns them into
// testdata). The netlink header is rebuilt (type = family ID, flag Multi);
// the generic netlink header and attributes are the kernel's bytes.
type Recorder func(cmd uint8, replies []netlink.Message)

// Dial opens a generic netlink socket and resolves SMC_GEN_NETLINK. A kernel
// without the family gives an *UnsupportedError.
func Dial() (*Conn, error) { return dialGenl(NewConn) }

// dialGenl opens a generic netlink socket and hands it to newConn, closing
// it again when newConn fails.
func dialGenl[T any](newConn func(*genetlink.Conn) (T, error)) (T, error) {
	var zero T
	if err := checkOS(); err != nil {
		return zero, err
	}
	c, err := genetlink.Dial(nil)
	if err != nil {
		return zero, fmt.Errorf("smcnl: dial generic netlink: %w", err)
	}
	conn, err := newConn(c)
	if err != nil {
		_ = c.Close()
		return zero, err
	}
	return conn, nil
}

// checkOS turns "netlink is not implemented on this OS" into the package's
// ErrNotSupported, so callers (smctop, smcping) need one check everywhere.
func checkOS() error {
	if runtime.GOOS != "linux" {
		return &UnsupportedError{Feature: "SMC netlink on " + runtime.GOOS, MinKernel: "Linux 5.11"}
	}
	return nil
}

// NewConn resolves SMC_GEN_NETLINK on an existing connection (a genltest
// connection in tests). The Conn takes ownership of c.
func NewConn(c *genetlink.Conn) (*Conn, error) {
	f, err := resolveFamily(c, familyName, "5.11")
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, family: f}, nil
}

// resolveFamily looks up a generic netlink family; a kernel without it
// gives an *UnsupportedError naming minKernel.
func resolveFamily(c *genetlink.Conn, name, minKernel string) (genetlink.Family, error) {
	f, err := c.GetFamily(name)
	if errors.Is(err, os.ErrNotExist) {
		return f, &UnsupportedError{Feature: name, MinKernel: minKernel, Err: err}
	}
	if err != nil {
		return f, fmt.Errorf("smcnl: resolve %s: %w", name, err)
	}
	return f, nil
}

// Close closes the underlying netlink socket.
func (c *Conn) Close() error { return c.c.Close() }

// SetRecorder makes every later command hand its raw replies to fn (nil
// stops recording).
func (c *Conn) SetRecorder(fn Recorder) {
	c.mu.Lock()
	c.rec = fn
	c.mu.Unlock()
}

// execute sends one command and returns the replies. Dumps (dump=true) are
// how the kernel serves every GET; the rest are acknowledged requests.
func (c *Conn) execute(cmd uint8, dump bool, data []byte) ([]genetlink.Message, error) {
	msgs, err := genlExecute(c.c, c.family, cmd, dump, data)
	if err != nil {
		return nil, mapCmdError(cmd, err)
	}
	c.mu.Lock()
	rec := c.rec
	c.mu.Unlock()
	if rec != nil {
		rec(cmd, rawReplies(c.family.ID, msgs))
	}
	return msgs, nil
}

// genlExecute sends one command of family f (SMC_GEN_NETLINK or
// SMC_PNETID) and returns the replies.
func genlExecute(c *genetlink.Conn, f genetlink.Family, cmd uint8, dump bool, data []byte) ([]genetlink.Message, error) {
	flags := netlink.Request
	if dump {
		flags |= netlink.Dump
	} else {
		flags |= netlink.Acknowledge
	}
	req := genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: f.Version},
		Data:   data,
	}
	return c.Execute(req, f.ID, flags)
}

// rawReplies rebuilds the netlink messages of a generic netlink family's
// replies for a Recorder.
func rawReplies(family uint16, msgs []genetlink.Message) []netlink.Message {
	out := make([]netlink.Message, 0, len(msgs))
	for _, m := range msgs {
		b, err := m.MarshalBinary()
		if err != nil {
			continue
		}
		out = append(out, netlink.Message{
			Header: netlink.Header{
				Length: uint32(nlmsgHeaderLen + len(b)),
				Type:   netlink.HeaderType(family),
				Flags:  netlink.Multi,
			},
			Data: b,
		})
	}
	return out
}

// NormalizeUEID returns the form the kernel stores: upper case, 1 to 32
// characters of A-Z, 0-9, '-' and '.' (smc_clc_ueid_valid).
func NormalizeUEID(name string) (string, error) {
	u := strings.ToUpper(strings.TrimRight(name, " "))
	if len(u) == 0 || len(u) > maxEIDLen {
		return "", fmt.Errorf("smcnl: UEID %q: length %d not in 1..%d: %w", name, len(u), maxEIDLen, os.ErrInvalid)
	}
	for i := 0; i < len(u); i++ {
		ch := u[i]
		if !(ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '.') {
			return "", fmt.Errorf("smcnl: UEID %q: character %q at %d not allowed: %w", name, ch, i, os.ErrInvalid)
		}
	}
	return u, nil
}

// ueidAttr builds the request attribute: the kernel rejects with EINVAL any
// length but exactly 33 bytes, 32 blank-padded characters plus NUL
// (smc_nl_add_ueid in net/smc/smc_clc.c).
func ueidAttr(name string) ([]byte, error) {
	u, err := NormalizeUEID(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, ueidAttrLen)
	copy(b, u)
	for i := len(u); i < maxEIDLen; i++ {
		b[i] = ' '
	}
	return netlink.MarshalAttributes([]netlink.Attribute{{Type: eidTableEntry, Data: b}})
}

// AddUEID adds a user EID. SMC-Rv2 needs the same UEID on both peers.
// An already present UEID gives an error matching os.ErrExist.
func (c *Conn) AddUEID(name string) error {
	b, err := ueidAttr(name)
	if err != nil {
		return err
	}
	_, err = c.execute(cmdAddUEID, false, b)
	return err
}

// RemoveUEID removes a user EID; an absent one matches os.ErrNotExist.
func (c *Conn) RemoveUEID(name string) error {
	b, err := ueidAttr(name)
	if err != nil {
		return err
	}
	_, err = c.execute(cmdRemoveUEID, false, b)
	return err
}

// FlushUEIDs removes every user EID.
func (c *Conn) FlushUEIDs() error {
	_, err := c.execute(cmdFlushUEID, false, nil)
	return err
}

// UEIDs lists the user EIDs, without the kernel's blank padding.
func (c *Conn) UEIDs() ([]string, error) {
	msgs, err := c.execute(cmdDumpUEID, true, nil)
	if err != nil {
		return nil, err
	}
	var out []string
	for i, m := range msgs {
		u, err := ParseUEIDs(m.Data)
		if err != nil {
			return nil, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		out = append(out, u...)
	}
	return out, nil
}

// ParseUEIDs decodes one DUMP_UEID reply message: the kernel sends one
// SMC_NLA_EID_TABLE_ENTRY per message (smc_nl_ueid_dumpinfo,
// net/smc/smc_clc.c), but nothing forbids more.
func ParseUEIDs(b []byte) ([]string, error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return nil, fmt.Errorf("UEID entry: %w", err)
	}
	var out []string
	for ad.Next() {
		if ad.Type() == eidTableEntry {
			out = append(out, eidString(ad.Bytes()))
		}
	}
	if err := ad.Err(); err != nil {
		return nil, fmt.Errorf("UEID entry: %w", err)
	}
	return out, nil
}

// eidString trims the NUL and the blank padding the kernel keeps in stored
// EIDs (they are 32 blank-padded bytes on the wire and in the CLC).
func eidString(b []byte) string { return strings.TrimRight(cString(b), " ") }

// SEID is the system EID and whether it is in use; only s390 has one.
type SEID struct {
	EID     string
	Enabled bool
	// Reported: the kernel sent the SEID attributes, which it does only
	// when SMC-D v2 capable (smc_nl_dump_seid); else EID and Enabled are
	// unknown, not empty and off.
	Reported bool
}

// SEID reports the system EID (SMC_NETLINK_DUMP_SEID).
func (c *Conn) SEID() (SEID, error) {
	msgs, err := c.execute(cmdDumpSEID, true, nil)
	if err != nil {
		return SEID{}, err
	}
	var s SEID
	for i, m := range msgs {
		v, ok, err := ParseSEID(m.Data)
		if err != nil {
			return SEID{}, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		if ok {
			s = v
		}
	}
	return s, nil
}

// ParseSEID decodes one DUMP_SEID reply message (smc_nl_dump_seid,
// net/smc/smc_clc.c); ok is false when it holds neither attribute: the
// kernel sends an empty message when it is not SMC-D v2 capable
// (smc_ism_is_v2_capable), so "no SEID" differs from a SEID not in use.
func ParseSEID(b []byte) (s SEID, ok bool, err error) {
	ad, err := netlink.NewAttributeDecoder(b)
	if err != nil {
		return SEID{}, false, fmt.Errorf("SEID: %w", err)
	}
	for ad.Next() {
		switch ad.Type() {
		case seidEntry:
			s.EID, ok = eidString(ad.Bytes()), true
		case seidEnabled:
			s.Enabled, ok = ad.Uint8() != 0, true
		}
	}
	if err := ad.Err(); err != nil {
		return SEID{}, false, fmt.Errorf("SEID: %w", err)
	}
	s.Reported = ok
	return s, ok, nil
}

// HSLimitation reports whether the kernel limits concurrent SMC handshakes
// (SMC_NETLINK_DUMP_HS_LIMITATION).
func (c *Conn) HSLimitation() (bool, error) {
	msgs, err := c.execute(cmdDumpHSLimitation, true, nil)
	if err != nil {
		return false, err
	}
	var on bool
	for _, m := range msgs {
		ad, err := netlink.NewAttributeDecoder(m.Data)
		if err != nil {
			return false, fmt.Errorf("smcnl: handshake limitation: %w", err)
		}
		for ad.Next() {
			if ad.Type() == hsLimitEnabled {
				on = ad.Uint8() != 0
			}
		}
		if err := ad.Err(); err != nil {
			return false, fmt.Errorf("smcnl: handshake limitation: %w", err)
		}
	}
	return on, nil
}

// SetHSLimitation turns the handshake limitation on or off (CAP_NET_ADMIN).
func (c *Conn) SetHSLimitation(on bool) error {
	cmd := uint8(cmdDisableHSLimit)
	if on {
		cmd = cmdEnableHSLimit
	}
	_, err := c.execute(cmd, false, nil)
	return err
}

// parseAll decodes every reply with parse and keeps the ones that hold
// its nest.
func parseAll[T any](msgs []genetlink.Message, parse func([]byte) (T, bool, error)) ([]T, error) {
	var out []T
	for i, m := range msgs {
		v, ok, err := parse(m.Data)
		if err != nil {
			return nil, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		if ok {
			out = append(out, v)
		}
	}
	return out, nil
}

// parseFirst decodes the replies of cmd until one holds the nest parse
// looks for (named what in the error when none does).
func parseFirst[T any](cmd uint8, what string, msgs []genetlink.Message, parse func([]byte) (T, bool, error)) (T, error) {
	var zero T
	for i, m := range msgs {
		v, ok, err := parse(m.Data)
		if err != nil {
			return zero, fmt.Errorf("smcnl: reply %d: %w", i, err)
		}
		if ok {
			return v, nil
		}
	}
	return zero, fmt.Errorf("smcnl: %s: no %s in reply", cmdName(cmd), what)
}

// nested finds the top-level attribute typ of one reply message and hands
// its payload to fn. Replies without it are skipped (ok=false).
func nested(data []byte, typ uint16, fn func(*netlink.AttributeDecoder) error) (ok bool, err error) {
	ad, err := netlink.NewAttributeDecoder(data)
	if err != nil {
		return false, err
	}
	for ad.Next() {
		if ad.Type() == typ {
			ok = true
			ad.Nested(fn)
		}
	}
	return ok, ad.Err()
}

// uintAttr reads an integer attribute of any width the kernel may choose:
// NLA_UINT is 4 or 8 bytes, and CHID is documented u16 but sent as u32.
func uintAttr(ad *netlink.AttributeDecoder) uint64 {
	var v uint64
	ad.Do(func(b []byte) error {
		switch len(b) {
		case 1:
			v = uint64(b[0])
		case 2:
			v = uint64(binary.NativeEndian.Uint16(b))
		case 4:
			v = uint64(binary.NativeEndian.Uint32(b))
		case 8:
			v = binary.NativeEndian.Uint64(b)
		default:
			return fmt.Errorf("attribute %d is not an integer; length: %d", ad.Type(), len(b))
		}
		return nil
	})
	return v
}
