package smcnl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"syscall"

	"github.com/mdlayher/netlink"
)

// Mode is how an SMC socket carries its data (smc_diag_msg.diag_mode).
type Mode uint8

// Modes, from linux/smc_diag.h.
const (
	ModeSMCR     Mode = 0 // SMC_DIAG_MODE_SMCR
	ModeFallback Mode = 1 // SMC_DIAG_MODE_FALLBACK_TCP
	ModeSMCD     Mode = 2 // SMC_DIAG_MODE_SMCD
)

func (m Mode) String() string {
	switch m {
	case ModeSMCR:
		return "SMCR"
	case ModeFallback:
		return "TCP-FALLBACK"
	case ModeSMCD:
		return "SMCD"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// State is the SMC socket state (enum smc_state in net/smc/smc.h; smcss
// prints the same names).
type State uint8

// SMC socket states.
const (
	StateActive           State = 1  // SMC_ACTIVE
	StateInit             State = 2  // SMC_INIT
	StateClosed           State = 7  // SMC_CLOSED
	StateListen           State = 10 // SMC_LISTEN
	StatePeerCloseWait1   State = 20 // SMC_PEERCLOSEWAIT1
	StatePeerCloseWait2   State = 21 // SMC_PEERCLOSEWAIT2
	StateAppCloseWait1    State = 22 // SMC_APPCLOSEWAIT1
	StateAppCloseWait2    State = 23 // SMC_APPCLOSEWAIT2
	StateAppFinCloseWait  State = 24 // SMC_APPFINCLOSEWAIT
	StatePeerFinCloseWait State = 25 // SMC_PEERFINCLOSEWAIT
	StatePeerAbortWait    State = 26 // SMC_PEERABORTWAIT
	StateProcessAbort     State = 27 // SMC_PROCESSABORT
)

// stateNames is indexed by State: every socket of a refresh is named,
// and an index is cheaper than a map look-up.
var stateNames = [...]string{
	StateActive:           "ACTIVE",
	StateInit:             "INIT",
	StateClosed:           "CLOSED",
	StateListen:           "LISTEN",
	StatePeerCloseWait1:   "PEERCLOSEWAIT1",
	StatePeerCloseWait2:   "PEERCLOSEWAIT2",
	StateAppCloseWait1:    "APPCLOSEWAIT1",
	StateAppCloseWait2:    "APPCLOSEWAIT2",
	StateAppFinCloseWait:  "APPFINCLOSEWAIT",
	StatePeerFinCloseWait: "PEERFINCLOSEWAIT",
	StatePeerAbortWait:    "PEERABORTWAIT",
	StateProcessAbort:     "PROCESSABORT",
}

func (s State) String() string {
	if int(s) < len(stateNames) && stateNames[s] != "" {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Role is the side of a link group: the client made the first contact.
type Role uint8

// Roles (enum smc_lgr_role).
const (
	RoleClient Role = 0 // SMC_CLNT
	RoleServer Role = 1 // SMC_SERV
)

func (r Role) String() string {
	switch r {
	case RoleClient:
		return "client"
	case RoleServer:
		return "server"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// Shutdown holds the socket's shutdown bits (RCV_SHUTDOWN 1, SEND_SHUTDOWN 2).
type Shutdown uint8

// String uses smcss's notation: "<->" open, "R->" receive side shut, "<-W"
// send side shut, "R-W" both.
func (s Shutdown) String() string {
	// Constants, not a concatenation: every socket of a refresh asks.
	return [4]string{"<->", "R->", "<-W", "R-W"}[s&3]
}

// Cursor is a position in a ring buffer (struct smc_diag_cursor): the
// number of wrap-arounds and the byte offset.
type Cursor struct {
	Wrap  uint16
	Count uint32
}

func (c Cursor) String() string { return fmt.Sprintf("%d/%d", c.Wrap, c.Count) }

// ConnInfo is the SMC connection's buffer state (struct smc_diag_conninfo,
// include/uapi/linux/smc_diag.h), present once the connection has an alert token.
type ConnInfo struct {
	Token        uint32 // local alert token: the value the peer puts in CDCs to us
	SndBufSize   uint32
	RMBESize     uint32 // local RMBE size
	PeerRMBESize uint32
	RxProd       Cursor // last producer cursor received from the peer
	RxCons       Cursor // last consumer cursor received from the peer
	TxProd       Cursor // our producer cursor, into the peer's RMBE
	TxCons       Cursor // our consumer cursor
	// The flags of the last CDC received from the peer (Rx) and of the
	// last one sent (Tx).
	// (CDC wire bit layout: struct smc_cdc_producer_flags and
	// smc_cdc_conn_state_flags, net/smc/smc_cdc.h, top bit first on
	// either endianness.)
	RxProdFlags      uint8
	RxConnStateFlags uint8
	TxProdFlags      uint8
	TxConnStateFlags uint8
	TxPrep           Cursor // send buffer: prepared
	TxSent           Cursor // send buffer: written to the peer
	TxFin            Cursor // send buffer: confirmed complete
}

// LGRInfo is the SMC-R link of a socket (struct smc_diag_lgrinfo). The
// kernel reports only the link group's first link and no link-group ID.
type LGRInfo struct {
	LinkID  uint8
	IBDev   string
	IBPort  uint8
	GID     string // "0000:0000:0000:0000:0000:ffff:0a0a:0001"
	PeerGID string
	Role    Role
}

// DMBInfo is the SMC-D buffer of a socket (struct smcd_diag_dmbinfo).
type DMBInfo struct {
	LinkID     uint32
	PeerGID    uint64
	MyGID      uint64
	Token      uint64
	PeerToken  uint64
	PeerGIDExt uint64 // 0 on kernels before the GID extension
	MyGIDExt   uint64
}

// Socket is one SMC socket as sock_diag reports it (struct smc_diag_msg and
// its attributes).
type Socket struct {
	Family   uint8 // 43 for AF_SMC sockets, 2 or 10 for IPPROTO_SMC ones
	State    State
	Mode     Mode
	Shutdown Shutdown
	// Src and Dst are the internal TCP socket's endpoints.
	// smc_diag_msg_common_fill (net/smc/smc_diag.c) copies the addresses
	// only for AF_SMC sockets: an IPPROTO_SMC socket reports its ports and
	// all-zero addresses (family 2, 0.0.0.0 in the lab on 6.12), so only
	// Inode or Cookie identify a socket.
	Src, Dst netip.AddrPort
	IfIndex  uint32
	Cookie   uint64
	UID      uint32
	Inode    uint64
	// FallbackReason is the local SMC_CLC_DECL_* reason (0 when SMC was
	// used); PeerDiagnosis is the code of the Decline the peer sent.
	FallbackReason uint32
	PeerDiagnosis  uint32
	Conn           *ConnInfo // nil without a connection token
	LGR            *LGRInfo  // SMC-R only
	DMB            *DMBInfo  // SMC-D only
}

// ParseSocket decodes one SOCK_DIAG_BY_FAMILY reply payload: smc_diag_msg
// (64 bytes) and its attributes. Unknown attributes are ignored. A dump's
// many replies are cheaper through one SocketParser.
func ParseSocket(b []byte) (Socket, error) {
	var p SocketParser
	return p.Parse(b)
}

// SocketParser decodes the replies of sock_diag dumps. The ConnInfo,
// LGRInfo and DMBInfo of its sockets come from blocks it allocates for
// many sockets at once, the sockets of one link share their LGRInfo
// (read it, do not change it), and the strings sockets repeat (device
// names, GIDs) are shared: a refresh of 100,000 sockets spent half its
// time in allocations of a few bytes each. A socket's details keep their block
// alive; Reuse hands the blocks out again. The zero value parses without
// sharing strings; a SocketParser is not safe for concurrent use.
type SocketParser struct {
	block int // sockets a block holds
	conns slab[ConnInfo]
	lgrs  slab[LGRInfo]
	dmbs  slab[DMBInfo]
	strs  map[string]string // nil: strings are not shared
	// last holds the strings of the last LGRInfo: the sockets of a host
	// are mostly on one link, and comparing is cheaper than hashing.
	last [3]string
	// links holds the LGRInfo of each link seen in the dump, by its
	// bytes: the sockets of one link share it.
	links *linkTable
}

// linkTable finds a dump's LGRInfo by its SMC_DIAG_LGRINFO bytes. A host
// with many link groups has as many links, its sockets on them in no
// order, and a map keyed by the 147 bytes hashed all of them for every
// socket: the table hashes the few bytes that tell links apart (the
// link ID, the device name's start, the GIDs' last groups, port, role)
// and compares the whole payload only with the link it finds.
type linkTable struct {
	slots []int32 // index+1 into links, 0 for none; a power of two long
	links []linkEntry
}

type linkEntry struct {
	key [smcDiagLGRInfoLen]byte
	l   *LGRInfo
}

// linkHash hashes the bytes of a SMC_DIAG_LGRINFO payload (at least
// smcDiagLGRInfoLen) in which links differ: smc_diag_linkinfo's
// link_id @0 and ibname @1, ibport @65, the last 16 characters of a
// GID's 39 in gid @66 and peer_gid @106, and role @146. Links that share those bytes
// only share a hash.
func linkHash(v []byte) uint64 {
	le := binary.LittleEndian
	h := le.Uint64(v[0:8])
	for _, w := range [...]uint64{le.Uint64(v[89:97]), le.Uint64(v[97:105]), le.Uint64(v[129:137]), le.Uint64(v[137:145]),
		uint64(v[65]) | uint64(v[146])<<8} {
		h = (h ^ w) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	return h
}

// find returns the LGRInfo stored for v, or nil.
func (t *linkTable) find(v []byte, h uint64) *LGRInfo {
	if len(t.slots) == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		e := t.slots[i]
		if e == 0 {
			return nil
		}
		if l := &t.links[e-1]; l.key == [smcDiagLGRInfoLen]byte(v) {
			return l.l
		}
	}
}

// add stores l for v, which find does not have.
func (t *linkTable) add(v []byte, h uint64, l *LGRInfo) {
	if 2*(len(t.links)+1) > len(t.slots) {
		t.grow()
	}
	t.links = append(t.links, linkEntry{key: [smcDiagLGRInfoLen]byte(v), l: l})
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = int32(len(t.links))
}

// grow doubles the slots and places every link again.
func (t *linkTable) grow() {
	t.slots = make([]int32, max(2*len(t.slots), 64))
	mask := uint64(len(t.slots) - 1)
	for j := range t.links {
		i := linkHash(t.links[j].key[:]) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = int32(j + 1)
	}
}

// reset empties the table, keeping its storage.
func (t *linkTable) reset() {
	clear(t.slots)
	clear(t.links) // the LGRInfo pointers, for the collector
	t.links = t.links[:0]
}

// maxBlock bounds a block: a dump of listeners needs no ConnInfo at all.
const maxBlock = 1024

// maxShared bounds the strings a parser keeps across dumps: a host's
// devices and GIDs are few, but over weeks of dumps they change.
const maxShared = 4 * maxBlock

// NewSocketParser returns a parser for dumps of about n sockets.
func NewSocketParser(n int) *SocketParser {
	return &SocketParser{block: min(max(n, 1), maxBlock), strs: map[string]string{},
		links: &linkTable{}}
}

// Reuse lets p hand out the storage of the sockets it parsed before
// again: their ConnInfo, LGRInfo and DMBInfo change under them. A caller
// done with a dump's sockets (a refresh that has made its rows from
// them) parses the next dump without allocating or zeroing new blocks.
func (p *SocketParser) Reuse() {
	p.conns.reuse()
	p.lgrs.reuse()
	p.dmbs.reuse()
	if p.links != nil {
		p.links.reset()
	}
	if len(p.strs) > maxShared {
		clear(p.strs)
		p.last = [3]string{}
	}
}

// slab hands out elements of blocks it allocates for many at once.
type slab[T any] struct {
	blocks [][]T // filled, the one being filled (cur), then empty ones
	cur    int
}

// take returns a zeroed element, starting a block of n when all are full.
func (s *slab[T]) take(n int) *T {
	for s.cur < len(s.blocks) && len(s.blocks[s.cur]) == cap(s.blocks[s.cur]) {
		s.cur++
	}
	if s.cur == len(s.blocks) {
		s.blocks = append(s.blocks, make([]T, 0, max(n, 1)))
	}
	b := &s.blocks[s.cur]
	var zero T
	*b = append(*b, zero)
	return &(*b)[len(*b)-1]
}

// reuse empties the blocks, to be handed out again.
func (s *slab[T]) reuse() {
	for i := range s.blocks {
		s.blocks[i] = s.blocks[i][:0]
	}
	s.cur = 0
}

// errInvalidAttribute is package netlink's error for an attribute whose
// length does not fit, with its text: the walk below replaces
// netlink.AttributeDecoder, which copied every attribute's payload.
var errInvalidAttribute = errors.New("invalid attribute; length too short or too large")

// Parse decodes one SOCK_DIAG_BY_FAMILY reply payload as ParseSocket does.
func (p *SocketParser) Parse(b []byte) (Socket, error) {
	if len(b) < smcDiagMsgLen {
		return Socket{}, fmt.Errorf("smcnl: smc_diag_msg: need %d bytes, have %d", smcDiagMsgLen, len(b))
	}
	ne := binary.NativeEndian
	s := Socket{
		Family:   b[0],
		State:    State(b[1]),
		Mode:     Mode(b[2]),
		Shutdown: Shutdown(b[3]),
		IfIndex:  ne.Uint32(b[40:44]),
		// sock_diag_save_cookie stores the low word first.
		Cookie: uint64(ne.Uint32(b[44:48])) | uint64(ne.Uint32(b[48:52]))<<32,
		UID:    ne.Uint32(b[52:56]),
		Inode:  ne.Uint64(b[56:64]),
	}
	src, dst := diagAddrs(s.Family, b[8:24], b[24:40])
	s.Src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(b[4:6]))
	s.Dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(b[6:8]))

	if err := p.attrs(&s, b[smcDiagMsgLen:]); err != nil {
		return Socket{}, fmt.Errorf("smcnl: smc_diag_msg attributes: %w", err)
	}
	return s, nil
}

// nlaHeaderLen is the size of struct nlattr: u16 length, u16 type; the
// payload follows, padded to 4 bytes.
const nlaHeaderLen = 4

// nlaNext is the offset of the attribute after the one of length l at i;
// a length below a header's advances by a header, as netlink's decoder does.
func nlaNext(i, l int) int { return i + (max(l, nlaHeaderLen)+nlaHeaderLen-1)&^(nlaHeaderLen-1) }

// attrs walks the attributes as netlink.AttributeDecoder does, so the same
// inputs fail with the same errors: first a pass that only checks each
// attribute has its header, then one that decodes them in order.
func (p *SocketParser) attrs(s *Socket, b []byte) error {
	const hdr = nlaHeaderLen
	for i := 0; i < len(b); i = nlaNext(i, int(binary.NativeEndian.Uint16(b[i:]))) {
		if len(b)-i < hdr {
			return errInvalidAttribute
		}
	}
	for i := 0; i < len(b); {
		if len(b)-i < hdr {
			return errInvalidAttribute
		}
		l := int(binary.NativeEndian.Uint16(b[i:]))
		typ := binary.NativeEndian.Uint16(b[i+2:]) &^ (netlink.Nested | netlink.NetByteOrder)
		if l > len(b)-i || l != 0 && l < hdr {
			return errInvalidAttribute
		}
		var v []byte
		if l != 0 {
			v = b[i+hdr : i+l]
		}
		if err := p.attr(s, typ, v); err != nil {
			return err
		}
		i = nlaNext(i, l)
	}
	return nil
}

// attr decodes one attribute of type typ with payload v into s.
func (p *SocketParser) attr(s *Socket, typ uint16, v []byte) error {
	ne := binary.NativeEndian
	switch typ {
	case diagShutdown:
		if len(v) != 1 {
			return fmt.Errorf("netlink: attribute %d is not a uint8; length: %d", typ, len(v))
		}
		s.Shutdown = Shutdown(v[0])
	case diagFallback:
		if len(v) < smcDiagFallbackLen {
			return fmt.Errorf("SMC_DIAG_FALLBACK: need %d bytes, have %d", smcDiagFallbackLen, len(v))
		}
		s.FallbackReason = ne.Uint32(v[0:4])
		s.PeerDiagnosis = ne.Uint32(v[4:8])
	case diagConnInfo:
		if len(v) < smcDiagConnInfoLen {
			return fmt.Errorf("SMC_DIAG_CONNINFO: need %d bytes, have %d", smcDiagConnInfoLen, len(v))
		}
		s.Conn = p.conns.take(p.block)
		parseConnInfo(s.Conn, v)
	case diagLGRInfo:
		if len(v) < smcDiagLGRInfoLen {
			return fmt.Errorf("SMC_DIAG_LGRINFO: need %d bytes, have %d", smcDiagLGRInfoLen, len(v))
		}
		s.LGR = p.lgrInfo(v)
	case diagDMBInfo:
		if len(v) < smcDiagDMBInfoOldLen {
			return fmt.Errorf("SMC_DIAG_DMBINFO: need %d bytes, have %d", smcDiagDMBInfoOldLen, len(v))
		}
		s.DMB = p.dmbs.take(p.block)
		parseDMBInfo(s.DMB, v)
	}
	return nil
}

// diagAddrs picks IPv4 or IPv6. AF_SMC sockets report family 43 for both,
// so the address words decide (net/smc/smc_diag.c fills only
// the first word for SMCPROTO_SMC, all four for SMCPROTO_SMC6). All-zero
// words (an SMC6 listener on ::) are ambiguous and come out as 0.0.0.0.
func diagAddrs(family uint8, src, dst []byte) (netip.Addr, netip.Addr) {
	v4 := family == afINET
	if family != afINET && family != afINET6 {
		v4 = allZero(src[4:]) && allZero(dst[4:])
	}
	if v4 {
		return netip.AddrFrom4([4]byte(src[:4])), netip.AddrFrom4([4]byte(dst[:4]))
	}
	// A v6 socket connected to an IPv4 peer carries ::ffff:a.b.c.d; report
	// the IPv4 address so it matches what the application dialled.
	return netip.AddrFrom16([16]byte(src)).Unmap(), netip.AddrFrom16([16]byte(dst)).Unmap()
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func cursorAt(b []byte) Cursor {
	// struct smc_diag_cursor: reserved u16, wrap u16, count u32.
	return Cursor{Wrap: binary.NativeEndian.Uint16(b[2:4]), Count: binary.NativeEndian.Uint32(b[4:8])}
}

// parseConnInfo fills c from a SMC_DIAG_CONNINFO payload of at least
// smcDiagConnInfoLen bytes.
func parseConnInfo(c *ConnInfo, p []byte) {
	ne := binary.NativeEndian
	*c = ConnInfo{
		Token:            ne.Uint32(p[0:4]),
		SndBufSize:       ne.Uint32(p[4:8]),
		RMBESize:         ne.Uint32(p[8:12]),
		PeerRMBESize:     ne.Uint32(p[12:16]),
		RxProd:           cursorAt(p[16:24]),
		RxCons:           cursorAt(p[24:32]),
		TxProd:           cursorAt(p[32:40]),
		TxCons:           cursorAt(p[40:48]),
		RxProdFlags:      p[48],
		RxConnStateFlags: p[49],
		TxProdFlags:      p[50],
		TxConnStateFlags: p[51],
		TxPrep:           cursorAt(p[52:60]),
		TxSent:           cursorAt(p[60:68]),
		TxFin:            cursorAt(p[68:76]),
	}
}

// lgrInfo returns the LGRInfo of a SMC_DIAG_LGRINFO payload of at least
// smcDiagLGRInfoLen bytes: the one of the dump's earlier socket on the
// link, when there was one.
func (p *SocketParser) lgrInfo(v []byte) *LGRInfo {
	if p.links == nil {
		l := p.lgrs.take(p.block)
		p.parseLGRInfo(l, v)
		return l
	}
	h := linkHash(v)
	l := p.links.find(v, h)
	if l == nil {
		l = p.lgrs.take(p.block)
		p.parseLGRInfo(l, v)
		p.links.add(v, h, l)
	}
	return l
}

// parseLGRInfo fills l from a SMC_DIAG_LGRINFO payload of at least
// smcDiagLGRInfoLen bytes.
func (sp *SocketParser) parseLGRInfo(l *LGRInfo, p []byte) {
	// smc_diag_linkinfo: link_id @0, ibname[64] @1, ibport @65,
	// gid[40] @66, peer_gid[40] @106; then role @146.
	*l = LGRInfo{
		LinkID:  p[0],
		IBDev:   sp.cString(0, p[1:1+ibDeviceNameMax]),
		IBPort:  p[65],
		GID:     sp.cString(1, p[66:66+diagGIDLen]),
		PeerGID: sp.cString(2, p[106:106+diagGIDLen]),
		Role:    Role(p[146]),
	}
}

// parseDMBInfo fills d from a SMC_DIAG_DMBINFO payload of at least
// smcDiagDMBInfoOldLen bytes.
func parseDMBInfo(d *DMBInfo, p []byte) {
	ne := binary.NativeEndian
	*d = DMBInfo{
		LinkID:    ne.Uint32(p[0:4]),
		PeerGID:   ne.Uint64(p[8:16]),
		MyGID:     ne.Uint64(p[16:24]),
		Token:     ne.Uint64(p[24:32]),
		PeerToken: ne.Uint64(p[32:40]),
	}
	if len(p) >= smcDiagDMBInfoLen {
		d.PeerGIDExt = ne.Uint64(p[40:48])
		d.MyGIDExt = ne.Uint64(p[48:56])
	}
}

// cString returns the bytes before the first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// cString is cString returning the string an earlier socket of the dump
// had, when one had it; field is the string's place in sp.last.
func (sp *SocketParser) cString(field int, b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if sp.strs == nil {
		return string(b)
	}
	if string(b) == sp.last[field] {
		return sp.last[field]
	}
	s, ok := sp.strs[string(b)]
	if !ok {
		s = string(b)
		sp.strs[s] = s
	}
	sp.last[field] = s
	return s
}

// DiagConn is a NETLINK_SOCK_DIAG socket for dumping SMC sockets.
type DiagConn struct {
	c   *netlink.Conn
	rec func(replies []netlink.Message)
}

// DialDiag opens a NETLINK_SOCK_DIAG socket.
func DialDiag() (*DiagConn, error) {
	if err := checkOS(); err != nil {
		return nil, err
	}
	c, err := netlink.Dial(netlinkSockDiag, nil)
	if err != nil {
		return nil, fmt.Errorf("smcnl: dial sock_diag: %w", err)
	}
	return &DiagConn{c: c}, nil
}

// NewDiagConn wraps an existing connection (an nltest one in tests); the
// DiagConn takes ownership of c.
func NewDiagConn(c *netlink.Conn) *DiagConn { return &DiagConn{c: c} }

// Close closes the socket.
func (d *DiagConn) Close() error { return d.c.Close() }

// SetRecorder hands the raw replies of later dumps to fn (nil stops it).
func (d *DiagConn) SetRecorder(fn func(replies []netlink.Message)) { d.rec = fn }

// diagRequest builds struct smc_diag_req: family, pad[2], diag_ext, and a
// zero inet_diag_sockid (smc_diag only dumps, it cannot filter).
func diagRequest() []byte {
	b := make([]byte, smcDiagReqLen)
	b[0] = afSMC
	b[3] = diagExtAll
	return b
}

// Sockets dumps every SMC socket of the network namespace, with connection,
// SMC-R link and SMC-D buffer details. Without the smc_diag module the
// error matches ErrNotSupported.
func (d *DiagConn) Sockets() ([]Socket, error) { return d.AppendSockets(nil, nil) }

// AppendSockets is Sockets appending the sockets to dst and parsing them
// with p (nil: a parser of its own). A poller passes the slice and the
// parser of its last dump, done with (dst[:0], after p.Reuse): a dump of
// many sockets then allocates little beyond what netlink receives.
func (d *DiagConn) AppendSockets(dst []Socket, p *SocketParser) ([]Socket, error) {
	req := netlink.Message{
		Header: netlink.Header{Type: sockDiagByFamily, Flags: netlink.Request | netlink.Dump},
		Data:   diagRequest(),
	}
	msgs, err := d.c.Execute(req)
	if err != nil {
		return nil, mapDiagError(err)
	}
	if d.rec != nil {
		d.rec(msgs)
	}
	out := slices.Grow(dst, len(msgs))
	if out == nil {
		out = []Socket{} // an empty dump is an empty list, as it always was
	}
	if p == nil {
		p = NewSocketParser(len(msgs))
	}
	for i, m := range msgs {
		if m.Header.Type != sockDiagByFamily {
			continue
		}
		s, err := p.Parse(m.Data)
		if err != nil {
			return nil, fmt.Errorf("reply %d: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Sockets dials sock_diag, dumps the SMC sockets and closes.
func Sockets() ([]Socket, error) {
	d, err := DialDiag()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Sockets()
}

// mapDiagError: sock_diag answers ENOENT when no handler is registered for
// AF_SMC (smc_diag not built or not loadable).
func mapDiagError(err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return &UnsupportedError{Feature: "SMC sock_diag (smc_diag)", MinKernel: "4.11", Err: err}
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return fmt.Errorf("smcnl: sock_diag: %w (%w)", os.ErrPermission, err)
	}
	return fmt.Errorf("smcnl: sock_diag: %w", err)
}
