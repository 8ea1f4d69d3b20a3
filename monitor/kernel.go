package monitor

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/smcnl"
	"github.com/smcscope/smcscope/track"
)

// Kernel is the kernel's SMC state: sock_diag and SMC_GEN_NETLINK. The
// live implementation is DialKernel; tests and replays use ReplayKernel
// over recordings made in the lab.
type Kernel interface {
	// Sockets dumps the SMC sockets. The slice and what its sockets
	// point to may be reused by the next call: a refresh is done with
	// them once it has made its rows.
	Sockets() ([]smcnl.Socket, error)
	LinkGroupsR() ([]smcnl.LinkGroupR, error)
	LinkGroupsD() ([]smcnl.LinkGroupD, error)
	DevicesR() ([]smcnl.Device, error)
	Stats() (smcnl.Stats, error)
	FallbackStats() (smcnl.FallbackStats, error)
	HSLimitation() (bool, error)
	SysInfo() (smcnl.SysInfo, error)
	// DevicesD lists the SMC-D devices SMC netlink knows
	// (SMC_NETLINK_GET_DEV_SMCD; never the DIBS loopback).
	DevicesD() ([]smcnl.Device, error)
	UEIDs() ([]string, error)
	SEID() (smcnl.SEID, error)
	// PNETIDs is the PNET table (the SMC_PNETID family).
	PNETIDs() ([]smcnl.PNETEntry, error)
	Close() error
}

// netlinkKernel is the live kernel. Either half may be missing (no
// smc_diag module, or no SMC_GEN_NETLINK family); the missing half's
// methods return genlErr or diagErr instead of touching a nil connection.
type netlinkKernel struct {
	genl    *smcnl.Conn
	diag    *smcnl.DiagConn
	pnet    *smcnl.PNETConn
	genlErr error
	diagErr error
	pnetErr error
	// socks and parser are the last dump's, reused by the next one.
	socks  []smcnl.Socket
	parser *smcnl.SocketParser
}

func (k *netlinkKernel) DevicesD() ([]smcnl.Device, error) {
	if k.genl == nil {
		return nil, k.genlErr
	}
	return k.genl.DevicesD()
}

func (k *netlinkKernel) UEIDs() ([]string, error) {
	if k.genl == nil {
		return nil, k.genlErr
	}
	return k.genl.UEIDs()
}

func (k *netlinkKernel) SEID() (smcnl.SEID, error) {
	if k.genl == nil {
		return smcnl.SEID{}, k.genlErr
	}
	return k.genl.SEID()
}

func (k *netlinkKernel) PNETIDs() ([]smcnl.PNETEntry, error) {
	if k.pnet == nil {
		return nil, k.pnetErr
	}
	return k.pnet.PNETIDs()
}

func (k *netlinkKernel) LinkGroupsR() ([]smcnl.LinkGroupR, error) {
	if k.genl == nil {
		return nil, k.genlErr
	}
	return k.genl.LinkGroupsR()
}

func (k *netlinkKernel) LinkGroupsD() ([]smcnl.LinkGroupD, error) {
	if k.genl == nil {
		return nil, k.genlErr
	}
	return k.genl.LinkGroupsD()
}

func (k *netlinkKernel) DevicesR() ([]smcnl.Device, error) {
	if k.genl == nil {
		return nil, k.genlErr
	}
	return k.genl.DevicesR()
}

func (k *netlinkKernel) Stats() (smcnl.Stats, error) {
	if k.genl == nil {
		return smcnl.Stats{}, k.genlErr
	}
	return k.genl.Stats()
}

func (k *netlinkKernel) FallbackStats() (smcnl.FallbackStats, error) {
	if k.genl == nil {
		return smcnl.FallbackStats{}, k.genlErr
	}
	return k.genl.FallbackStats()
}

func (k *netlinkKernel) HSLimitation() (bool, error) {
	if k.genl == nil {
		return false, k.genlErr
	}
	return k.genl.HSLimitation()
}

func (k *netlinkKernel) SysInfo() (smcnl.SysInfo, error) {
	if k.genl == nil {
		return smcnl.SysInfo{}, k.genlErr
	}
	return k.genl.SysInfo()
}

func (k *netlinkKernel) Sockets() ([]smcnl.Socket, error) {
	if k.diag == nil {
		return nil, k.diagErr
	}
	if k.parser == nil {
		k.parser = smcnl.NewSocketParser(math.MaxInt)
	}
	k.parser.Reuse()
	socks, err := k.diag.AppendSockets(k.socks[:0], k.parser)
	if err == nil {
		k.socks = socks
	}
	return socks, err
}

func (k *netlinkKernel) Close() error {
	var err error
	if k.genl != nil {
		err = k.genl.Close()
	}
	if k.diag != nil {
		err = errors.Join(err, k.diag.Close())
	}
	if k.pnet != nil {
		err = errors.Join(err, k.pnet.Close())
	}
	return err
}

// DialKernel opens sock_diag and SMC_GEN_NETLINK in the current network
// namespace. Either may be missing (no smc_diag module, a kernel without
// SMC); the error says which, and the other half still works.
func DialKernel() (Kernel, error) {
	k := &netlinkKernel{}
	d, err := smcnl.DialDiag()
	if err != nil {
		k.diagErr = fmt.Errorf("sock_diag: %w", err)
	} else {
		k.diag = d
	}
	c, err := smcnl.Dial()
	if err != nil {
		k.genlErr = fmt.Errorf("SMC netlink: %w", err)
	} else {
		k.genl = c
	}
	if k.genl == nil && k.diag == nil {
		return nil, errors.Join(k.diagErr, k.genlErr)
	}
	// The PNET table is a table only: without it the rest stands, and
	// the system view says why it is missing.
	if p, err := smcnl.DialPNET(); err != nil {
		k.pnetErr = fmt.Errorf("SMC PNET table: %w", err)
	} else {
		k.pnet = p
	}
	return k, errors.Join(k.diagErr, k.genlErr)
}

type replayKernel struct {
	*smcnl.Conn
	dir string
	// host is the recording's HostFile, when it has one.
	host *HostInfo
}

// ReplayKernel serves a recording directory (smcnl/testdata layout: one
// .bin of raw replies per command) as if it were the kernel.
func ReplayKernel(dir string) (Kernel, error) {
	c, err := smcnl.Replay(dir)
	if err != nil {
		return nil, err
	}
	r := replayKernel{Conn: c, dir: dir}
	h, ok, err := readHostFile(dir)
	if err != nil {
		c.Close()
		return nil, err
	}
	if ok {
		r.host = &h
	}
	return r, nil
}

func (r replayKernel) Sockets() ([]smcnl.Socket, error) { return smcnl.ReplaySockets(r.dir) }

// HostFile is the file of a recording directory that names the recorded
// host: its name and interface addresses (HostInfo as JSON), written by
// the lab's recorder beside the netlink replies. Without it a replay
// knows only the addresses its sockets and links show.
const HostFile = "host.json"

// readHostFile reads a recording's HostFile; ok is false when the
// recording has none.
func readHostFile(dir string) (h HostInfo, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, HostFile))
	if errors.Is(err, os.ErrNotExist) {
		return h, false, nil
	}
	if err != nil {
		return h, false, err
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, false, fmt.Errorf("%s: %w", filepath.Join(dir, HostFile), err)
	}
	for _, a := range h.Addresses {
		if _, err := netip.ParseAddr(a); err != nil {
			return h, false, fmt.Errorf("%s: addresses: %w", filepath.Join(dir, HostFile), err)
		}
	}
	return h, true, nil
}

// PNETIDs replays the recording's pnet.bin; recordings made before the
// PNET table was recorded have none (ErrNotSupported).
func (r replayKernel) PNETIDs() ([]smcnl.PNETEntry, error) {
	p, err := smcnl.ReplayPNET(r.dir)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return p.PNETIDs()
}

// reason names a decline/fallback code by its kernel name and meaning.
func reason(code uint32) Reason {
	if code == 0 {
		return Reason{}
	}
	return reasonIn(code, false)
}

// reasonIn is reason for a code of a handshake that was ANCK's (anck)
// or not: a wire fact, the kernel's own reasons are upstream's.
func reasonIn(code uint32, anck bool) Reason {
	if code == 0 {
		return Reason{}
	}
	c := decode.DeclineCode(code)
	return Reason{Code: code, Name: c.StringIn(anck), Meaning: c.MeaningIn(anck)}
}

// afSMC is the family sock_diag reports for AF_SMC sockets (IPPROTO_SMC
// ones report AF_INET or AF_INET6).
const afSMC = 43

// kernelConns builds the rows of a dump's sockets, joined to their link
// groups by links (joinConns). What rows point to
// (cursors, UIDs, DMB tokens) comes from one block each, and their keys
// are cut from one string: at 100,000 sockets a few small allocations a
// socket were a tenth of the refresh, and as much again in the garbage
// collector's work.
//
// listen indexes the rows that listen (ModeListen), for listenerFamilies;
// listed counts the rows on each link group, for the overview
// (rowTally.listed). sc is the previous refresh's scratch, reused (nil:
// none).
func kernelConns(socks []smcnl.Socket, links *linkIndex, sc *rowScratch) (rows []ConnRow, listen []int32, listed map[lgrAt]int) {
	if sc == nil {
		sc = &rowScratch{}
	}
	rows = make([]ConnRow, len(socks))
	// The keys are written into one builder, whose String does not copy,
	// in the pass that counts what the blocks need: a pass of its own
	// over the sockets cost as much as making the keys.
	var keys strings.Builder
	keys.Grow(len(socks) * len("inode:1000000000"))
	var num [20]byte
	sc.ends = reuse(sc.ends, len(socks)+1)
	ends := sc.ends
	ends[0] = 0
	var nConn, nDMB, nDetail int
	for i := range socks {
		s := &socks[i]
		if s.Inode != 0 {
			keys.WriteString("inode:")
			keys.Write(strconv.AppendUint(num[:0], s.Inode, 10))
		} else {
			keys.WriteString("cookie:")
			keys.Write(strconv.AppendUint(num[:0], s.Cookie, 10))
		}
		ends[i+1] = int32(keys.Len())
		if s.Conn != nil {
			nConn++
		}
		if s.DMB != nil {
			nDMB++
		}
		if s.FallbackReason != 0 || s.PeerDiagnosis != 0 {
			nDetail++
		}
	}
	a := rowBlocks{
		cursors: make([]Cursors, 0, nConn),
		dmbs:    make([]DMBTokens, 0, nDMB),
		details: make([]ConnDetail, 0, nDetail),
		uids:    make([]uint32, len(socks)),
		reasons: map[uint32]Reason{},
		lgrd:    map[uint32]string{},
		gids:    map[[2]uint64]string{},
		links:   [2]map[*smcnl.LGRInfo]int32{{}, {}},
		dibs:    map[dibsLink]int32{},
		index:   links,
	}
	all := keys.String()
	key := func(i int32) string { return all[ends[i]:ends[i+1]] }
	order := keyOrder(len(socks), key, sc)
	for i, j := range order {
		rows[i].Key = key(j)
		a.fill(&rows[i], &socks[j], i)
		if rows[i].Mode == ModeListen {
			listen = append(listen, int32(i))
		}
	}
	return rows, listen, a.listed()
}

// keyOrder returns the indexes of n keys in key order, keys of one value
// in index order: the rows are made in the order Refresh keeps them in,
// since sorting the rows themselves would move 352 bytes a swap. A kernel
// dumps its sockets newest first (smc_diag walks a list that grows at its
// head), and in an order of no pattern a stable sort comparing the key
// strings took 40 ms at 100,000 sockets: the keys' first 16 bytes,
// packed into two integers, decide nearly every comparison.
func keyOrder(n int, key func(int32) string, sc *rowScratch) []int32 {
	pack := func(s string) (hi, lo uint64) {
		var b [16]byte
		copy(b[:], s) // bytes past the end are 0: a shorter key sorts first
		return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	}
	sc.ks = reuse(sc.ks, n)
	ks := sc.ks
	sorted := true
	for i := range ks {
		hi, lo := pack(key(int32(i)))
		ks[i] = sortKey{hi, lo, int32(i)}
		sorted = sorted && (i == 0 || key(int32(i-1)) <= key(int32(i)))
	}
	sc.order = reuse(sc.order, n)
	order := sc.order
	if !sorted {
		slices.SortFunc(ks, func(a, b sortKey) int {
			if c := cmp.Compare(a.hi, b.hi); c != 0 {
				return c
			}
			if c := cmp.Compare(a.lo, b.lo); c != 0 {
				return c
			}
			if c := strings.Compare(key(a.i), key(b.i)); c != 0 {
				return c
			}
			return cmp.Compare(a.i, b.i)
		})
	}
	for i := range ks {
		order[i] = ks[i].i
	}
	return order
}

// rowScratch is what kernelConns needs only while it runs, kept for the
// next refresh: at 100,000 sockets, 3 MB a refresh that the runtime
// would zero and the collector be paced by.
type rowScratch struct {
	ends  []int32 // the keys' ends in the string they are cut from
	ks    []sortKey
	order []int32
}

// sortKey is a key packed for keyOrder's sort, and its index.
type sortKey struct {
	hi, lo uint64
	i      int32
}

// reuse returns b with length n, its storage reused when it holds n;
// what it holds is not cleared.
func reuse[T any](b []T, n int) []T {
	if cap(b) < n {
		return make([]T, n)
	}
	return b[:n]
}

// rowBlocks is what kernelConns shares among a dump's rows: the blocks
// they point into, the strings many rows repeat, and the ConnLink of
// each link.
type rowBlocks struct {
	cursors []Cursors
	dmbs    []DMBTokens
	details []ConnDetail
	uids    []uint32
	reasons map[uint32]Reason
	lgrd    map[uint32]string    // SMC-D link groups' keys by ID
	gids    map[[2]uint64]string // SMC-D GIDs by GID and extension
	// links holds the ConnLink of the SMC-R sockets on each link (the
	// parser gives them one LGRInfo): links[1] of those in mode SMC-R,
	// joined to the link's group, links[0] of the others (a pending
	// socket's link), which are not. Maps keyed by a pointer alone take
	// the runtime's fast path. They and dibs index shared.
	links [2]map[*smcnl.LGRInfo]int32
	dibs  map[dibsLink]int32
	// shared are the ConnLinks the rows have, with the rows on each.
	shared []sharedLink
	// linkBlock is where the ConnLinks are made, a block at a time: a
	// host of many peers has thousands of links.
	linkBlock []ConnLink
	index     *linkIndex // the link groups SMC-R rows are joined to
}

// sharedLink is a ConnLink of the dump's rows, and the rows that have
// it: counting them by link, which a row names by an index into a few
// thousand, is cheaper than by group in a map (rowTally.listed).
type sharedLink struct {
	l    *ConnLink
	rows int
	// on is the group the rows are on, when the link is joined to one:
	// an SMC-R link in mode SMC-R, an SMC-D socket's group.
	on     lgrAt
	joined bool
}

// on counts a row on the i-th shared link and returns the link.
func (a *rowBlocks) on(i int32) *ConnLink {
	s := &a.shared[i]
	s.rows++
	return s.l
}

// listed counts the rows on each link group, as rowTally.listed.
func (a *rowBlocks) listed() map[lgrAt]int {
	n := map[lgrAt]int{}
	for _, s := range a.shared {
		if s.joined && s.rows > 0 {
			n[s.on] += s.rows
		}
	}
	return n
}

// dibsLink names the ConnLink of the SMC-D sockets of one link group
// between one pair of GIDs.
type dibsLink struct {
	id        uint32
	gid, peer [2]uint64
}

// link returns the index in shared of the ConnLink of an SMC-R socket
// on the link l, in mode SMC-R (smcr) or not.
func (a *rowBlocks) link(l *smcnl.LGRInfo, smcr bool) int32 {
	links := a.links[0]
	if smcr {
		links = a.links[1]
	}
	i, ok := links[l]
	if !ok {
		c := a.newLink()
		c.LinkID, c.IBDev, c.IBPort, c.GID, c.PeerGID, c.Role = l.LinkID, l.IBDev, l.IBPort, l.GID, l.PeerGID, role(l.Role)
		if smcr {
			a.index.join(c)
		}
		i = a.share(c, ModeSMCR)
		links[l] = i
	}
	return i
}

// share adds c, the link of rows in mode m, to shared and returns its
// index.
func (a *rowBlocks) share(c *ConnLink, m Mode) int32 {
	a.shared = append(a.shared, sharedLink{l: c, on: groupAt(m, c.LGRID), joined: c.LGRKey != ""})
	return int32(len(a.shared) - 1)
}

// dibsLink returns the index in shared of the ConnLink of an SMC-D
// socket's DMB d.
func (a *rowBlocks) dibsLink(d *smcnl.DMBInfo) int32 {
	k := dibsLink{d.LinkID, [2]uint64{d.MyGID, d.MyGIDExt}, [2]uint64{d.PeerGID, d.PeerGIDExt}}
	i, ok := a.dibs[k]
	if !ok {
		key, ok := a.lgrd[d.LinkID]
		if !ok {
			key = fmt.Sprintf("lgrd:%08x", d.LinkID)
			a.lgrd[d.LinkID] = key
		}
		// smc_diag: dmbinfo.linkid is the link group's ID.
		c := a.newLink()
		c.LGRID, c.LGRKey = LGRID(d.LinkID), key
		c.GID, c.PeerGID = a.smcdGID(d.MyGID, d.MyGIDExt), a.smcdGID(d.PeerGID, d.PeerGIDExt)
		i = a.share(c, ModeSMCD)
		a.dibs[k] = i
	}
	return i
}

// newLink returns a zero ConnLink from the block.
func (a *rowBlocks) newLink() *ConnLink {
	if len(a.linkBlock) == cap(a.linkBlock) {
		a.linkBlock = make([]ConnLink, 0, min(max(2*cap(a.linkBlock), 16), 1024))
	}
	a.linkBlock = a.linkBlock[:len(a.linkBlock)+1]
	return &a.linkBlock[len(a.linkBlock)-1]
}

func (a *rowBlocks) reason(code uint32) Reason {
	r, ok := a.reasons[code]
	if !ok {
		r = reason(code)
		a.reasons[code] = r
	}
	return r
}

func (a *rowBlocks) smcdGID(gid, ext uint64) string {
	g, ok := a.gids[[2]uint64{gid, ext}]
	if !ok {
		g = smcnl.SMCDGID(gid, ext)
		a.gids[[2]uint64{gid, ext}] = g
	}
	return g
}

// fill builds the row r, whose Key is set, of the i-th socket s.
func (a *rowBlocks) fill(r *ConnRow, s *smcnl.Socket, i int) {
	r.Source = SourceKernel
	r.Inode = s.Inode
	r.Cookie = s.Cookie
	r.Family = s.Family
	r.State = ConnState(s.State.String())
	r.Src = s.Src
	r.Dst = s.Dst
	if s.Family == afSMC {
		r.Proto = "AF_SMC"
	} else {
		r.Proto = "IPPROTO_SMC"
		r.AddrHidden = !s.Src.Addr().IsValid() || s.Src.Addr().IsUnspecified()
	}
	switch s.Mode {
	case smcnl.ModeSMCR:
		r.Mode = ModeSMCR
	case smcnl.ModeSMCD:
		r.Mode = ModeSMCD
	case smcnl.ModeFallback:
		r.Mode = ModeFallback
	default:
		r.Mode = ModePending
	}
	if s.State == smcnl.StateListen {
		r.Mode = ModeListen
	} else if s.State == smcnl.StateInit && s.Mode != smcnl.ModeFallback {
		r.Mode = ModePending
	}
	if s.FallbackReason != 0 || s.PeerDiagnosis != 0 {
		a.details = a.details[:len(a.details)+1]
		d := &a.details[len(a.details)-1]
		d.Fallback, d.PeerDiagnosis = a.reason(s.FallbackReason), a.reason(s.PeerDiagnosis)
		r.ConnDetail = d
	}
	r.Shutdown = s.Shutdown.String()
	a.uids[i] = s.UID
	r.UID, r.IfIndex = &a.uids[i], s.IfIndex
	if c := s.Conn; c != nil {
		a.cursors = a.cursors[:len(a.cursors)+1]
		r.Cursors = &a.cursors[len(a.cursors)-1]
		kernelCursors(r.Cursors, c)
		r.Token = c.Token
		r.SndBuf = c.SndBufSize
		r.RMBE = c.RMBESize
		r.PeerRMBE = c.PeerRMBESize
		r.RxBytes = cursorBytes(c.RxProd, c.RMBESize)
		r.TxBytes = cursorBytes(c.TxProd, c.PeerRMBESize)
	}
	link := int32(-1)
	if d := s.DMB; d != nil && r.Mode == ModeSMCD {
		link = a.dibsLink(d)
		a.dmbs = append(a.dmbs, DMBTokens{Token: DMBToken(d.Token), PeerToken: DMBToken(d.PeerToken)})
		r.DMB = &a.dmbs[len(a.dmbs)-1]
	}
	if l := s.LGR; l != nil {
		if link >= 0 {
			// Both an SMC-D buffer and an SMC-R link, which the kernel
			// never reports together: the DMB names the group, the link
			// the rest.
			d := a.shared[link].l
			link = a.share(&ConnLink{LGRID: d.LGRID, LGRKey: d.LGRKey, LinkID: l.LinkID, IBDev: l.IBDev, IBPort: l.IBPort,
				GID: l.GID, PeerGID: l.PeerGID, Role: role(l.Role)}, ModeSMCD)
		} else {
			link = a.link(l, r.Mode == ModeSMCR)
		}
	}
	if link >= 0 {
		r.ConnLink = a.on(link)
	}
}

// kernelCursors writes into cs, which is zero, struct smc_diag_conninfo
// as the row's cursors and the lags between them. A lag the cursors
// cannot give (a cursor behind the one it is measured from, which the
// kernel never reports for a live connection) is 0.
func kernelCursors(cs *Cursors, c *smcnl.ConnInfo) {
	cur := func(x smcnl.Cursor) Cursor { return Cursor{Wrap: x.Wrap, Count: x.Count} }
	lag := func(to, from smcnl.Cursor, size uint32) uint64 {
		n, _ := track.Cursor{Wrap: to.Wrap, Count: to.Count}.Sub(track.Cursor{Wrap: from.Wrap, Count: from.Count}, size)
		return n
	}
	// Field by field into the zeroed cs: assigning a whole Cursors (it
	// holds a time) is a copy under the collector's write barrier.
	cs.RxProd, cs.RxCons, cs.TxProd, cs.TxCons = cur(c.RxProd), cur(c.RxCons), cur(c.TxProd), cur(c.TxCons)
	cs.TxPrep, cs.TxSent, cs.TxFin = cur(c.TxPrep), cur(c.TxSent), cur(c.TxFin)
	cs.RxFlags = CDCFlags{Prod: decode.CDCProdFlags(c.RxProdFlags), Conn: decode.CDCConnFlags(c.RxConnStateFlags)}
	cs.TxFlags = CDCFlags{Prod: decode.CDCProdFlags(c.TxProdFlags), Conn: decode.CDCConnFlags(c.TxConnStateFlags)}
	cs.RxUnread = lag(c.RxProd, c.TxCons, c.RMBESize)
	cs.TxUnconfirmed = lag(c.TxProd, c.RxCons, c.PeerRMBESize)
	cs.TxUnsent = lag(c.TxPrep, c.TxSent, c.SndBufSize)
}

func role(r smcnl.Role) Role {
	if r == smcnl.RoleServer {
		return RoleServer
	}
	return RoleClient
}

// cursorBytes is the bytes a producer cursor has moved since the
// connection began: wraps times the ring size plus the offset (struct
// smc_diag_cursor; the kernel's smc_curs_diff over the whole life).
func cursorBytes(c smcnl.Cursor, size uint32) uint64 {
	return uint64(c.Wrap)*uint64(size) + uint64(c.Count)
}

var peerOS = map[uint8]string{1: "z/OS", 2: "Linux", 3: "AIX"}

// linkUID turns SMC_NLA_LINK_UID into the link user ID the wire carries
// (CONFIRM_LINK, struct smc_llc_msg_confirm_link link_uid): the kernel
// puts the 4-byte big-endian array into the attribute as a native u32
// (smc_nl_fill_lgr_link), so on little-endian hosts the value is
// byte-swapped.
func linkUID(v uint32) uint32 {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], v)
	return binary.BigEndian.Uint32(b[:])
}

// kernelLGR builds the row of one SMC-R link group with all its links.
func kernelLGR(g smcnl.LinkGroupR, netdev func(uint32) string) LinkGroupRow {
	r := LinkGroupRow{
		Key:         fmt.Sprintf("lgr:%08x", g.ID),
		Source:      SourceKernel,
		ID:          LGRID(g.ID),
		Kind:        ModeSMCR,
		Role:        role(g.Role),
		Type:        g.Type.String(),
		PNETID:      g.PNETID,
		VLANID:      g.VLANID,
		Conns:       g.Conns,
		SndBufAlloc: g.SndBufAlloc,
		RMBAlloc:    g.RMBAlloc,
	}
	if v := g.V2Common; v != nil {
		r.Version, r.Release = v.Version, v.Release
		r.PeerOS = peerOS[v.PeerOS]
		r.PeerHost, r.EID = v.PeerHost, v.NegotiatedEID
	}
	if v := g.V2; v != nil {
		r.MaxConns, r.MaxLinks, r.Direct = v.MaxConns, v.MaxLinks, v.Direct
	}
	active := 0
	for _, l := range g.Links {
		lr := LinkRow{
			ID: l.ID, State: LinkState(l.State.String()), UID: LinkUID(linkUID(l.UID)), PeerUID: LinkUID(linkUID(l.PeerUID)),
			IBDev: l.IBDev, IBPort: l.IBPort, GID: l.GID, PeerGID: l.PeerGID, Conns: l.ConnCount,
			Active: l.State == smcnl.LinkActive,
		}
		if netdev != nil {
			lr.NetDev = netdev(l.NetDev)
		}
		if lr.Active {
			active++
		}
		r.Links = append(r.Links, lr)
	}
	r.Redundant = active >= 2
	return r
}

// kernelLGRD builds the row of one SMC-D link group.
func kernelLGRD(g smcnl.LinkGroupD) LinkGroupRow {
	r := LinkGroupRow{
		Key: fmt.Sprintf("lgrd:%08x", g.ID), Source: SourceKernel, ID: LGRID(g.ID), Kind: ModeSMCD,
		PNETID: g.PNETID, VLANID: g.VLANID, Conns: g.Conns, SndBufAlloc: g.SndBufAlloc,
		RMBAlloc: g.DMBAlloc, GID: smcnl.SMCDGID(g.GID, g.ExtGID), PeerGID: smcnl.SMCDGID(g.PeerGID, g.PeerExtGID),
	}
	if v := g.V2Common; v != nil {
		r.Version, r.Release = v.Version, v.Release
		r.PeerOS = peerOS[v.PeerOS]
		r.PeerHost, r.EID = v.PeerHost, v.NegotiatedEID
	}
	return r
}

// joinConns fills each SMC-R socket's link group from the link groups:
// sock_diag names only the socket's first link (ibdev, port, GIDs, link
// ID) and role, not its group, so the group is the one with that link.
// An ambiguous match (two groups over the same GID pair, e.g. different
// VLANs) stays unjoined rather than guessed. The rows' ConnLinks must
// be their own (the wire's), not shared as the kernel's are.
func joinConns(conns []ConnRow, lgrs []LinkGroupRow) {
	if len(conns) == 0 {
		return // the index of a host's thousands of links would go unused
	}
	x := newLinkIndex(lgrs)
	for i := range conns {
		if c := &conns[i]; c.Mode == ModeSMCR && c.ConnLink != nil {
			x.join(c.ConnLink)
		}
	}
}

// linkIndex finds the kernel's SMC-R link groups by their links, for
// joinConns and kernelConns.
type linkIndex struct {
	groups map[linkKey][]linkGroup
	// Links of one key come in runs (the wire's connections over one
	// link): a run looks its key up once.
	last   linkKey
	found  []linkGroup
	looked bool
}

type linkKey struct {
	role             Role
	ibdev, gid, peer string
	id, port         uint8
}

type linkGroup struct {
	id  LGRID
	key string
}

// newLinkIndex indexes the links of lgrs: one pass over the links, one
// map look-up per link.
func newLinkIndex(lgrs []LinkGroupRow) *linkIndex {
	n := 0
	for i := range lgrs {
		n += len(lgrs[i].Links)
	}
	groups := make(map[linkKey][]linkGroup, n) // grown from nothing, it is made several times over
	for _, g := range lgrs {
		if g.Kind != ModeSMCR || g.Source != SourceKernel {
			continue
		}
		for _, l := range g.Links {
			if l.State == LinkDeleted {
				continue
			}
			k := linkKey{g.Role, l.IBDev, l.GID, l.PeerGID, l.ID, l.IBPort}
			groups[k] = append(groups[k], linkGroup{g.ID, g.Key})
		}
	}
	return &linkIndex{groups: groups}
}

// join fills the link group of l, the link of an SMC-R connection, when
// l is not joined yet and one group alone has the link.
func (x *linkIndex) join(l *ConnLink) {
	if l.IBDev == "" || l.LGRKey != "" {
		return
	}
	if k := (linkKey{l.Role, l.IBDev, l.GID, l.PeerGID, l.LinkID, l.IBPort}); !x.looked || k != x.last {
		x.last, x.found, x.looked = k, x.groups[k], true
	}
	if len(x.found) == 1 {
		l.LGRID, l.LGRKey = x.found[0].id, x.found[0].key
	}
}
