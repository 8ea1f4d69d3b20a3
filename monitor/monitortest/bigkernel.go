// Package monitortest makes monitors for tests: big hosts for the live
// half's benchmarks (a kernel of many SMC sockets and link groups built
// from the lab's real netlink replies) and captures replayed whole.
package monitortest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/smcnl"
)

// bigKernel serves n sockets and g link groups built from the lab's real
// replies (multilink-client-before, one group of two links with a socket
// on each): every call parses n recorded smc_diag messages with their own
// inodes and ports, newest first, as a dump would.
type bigKernel struct {
	monitor.Kernel
	msgs [][]byte
	lgrs []smcnl.LinkGroupR
	// socks and parser are the last dump's, reused by the next one as
	// the live kernel (monitor.DialKernel) reuses its own.
	socks  []smcnl.Socket
	parser *smcnl.SocketParser
}

// BigKernel returns a kernel of n SMC sockets and g link groups. The
// groups are a host's g peers: each group has its own ID, its links
// their own link user IDs and the peer's own GIDs (the local GIDs are
// the host's two RNICs', as the recording's), and each socket's
// SMC_DIAG_LGRINFO names the link of its group it is on. The sockets are
// spread over the groups in no pattern, as connections to many peers
// come and go, and each group and link counts its own; so the join of
// sockets to groups does the work a real host's does, and every SMC-R
// socket is joined.
func BigKernel(tb testing.TB, n, g int) monitor.Kernel {
	tb.Helper()
	dir := filepath.Join(testutil.Root(tb), "smcnl/testdata/multilink-client-before")
	msgs, err := smcnl.ReadRecording(dir + "/diag.bin")
	if err != nil {
		tb.Fatal(err)
	}
	base, err := monitor.ReplayKernel(dir)
	if err != nil {
		tb.Fatal(err)
	}
	real, err := base.LinkGroupsR()
	if err != nil || len(real) != 1 || len(real[0].Links) != 2 {
		tb.Fatalf("recorded link groups: %v, want one of two links", err)
	}
	if g > 1<<16 {
		tb.Fatalf("%d link groups: the peers' addresses (peerAddr) tell 65,536 apart", g)
	}
	k := &bigKernel{Kernel: base}
	for i := 0; i < g; i++ {
		lg := real[0]
		lg.ID = GroupID(i)
		lg.Conns = 0
		lg.Links = append([]smcnl.Link(nil), lg.Links...)
		for j := range lg.Links {
			l := &lg.Links[j]
			l.PeerGID = peerGID(i, l.ID)
			l.UID, l.PeerUID = linkUID(lg.ID, l.ID), linkUID(lg.ID, l.ID)
			l.ConnCount = 0
		}
		if v := lg.V2Common; v != nil {
			c := *v
			c.PeerHost = fmt.Sprintf("peer%04d", i)
			lg.V2Common = &c
		}
		k.lgrs = append(k.lgrs, lg)
	}
	rnd := rand.New(rand.NewPCG(34, uint64(n)))
	for i := 0; i < n; i++ {
		m := append([]byte(nil), msgs[i%len(msgs)].Data...)
		// A kernel dumps its sockets newest first, not by key: smc_diag
		// walks smc_hash's list, to whose head smc_hash_sk adds each
		// socket, and inodes grow with time.
		binary.NativeEndian.PutUint64(m[56:64], uint64(100000+n-1-i)) // inode
		binary.BigEndian.PutUint16(m[4:6], uint16(20000+i%40000))     // source port
		if g > 0 {
			gi := rnd.IntN(g)
			lgr := &k.lgrs[gi]
			li := lgrInfo(tb, m)
			link := slices.IndexFunc(lgr.Links, func(l smcnl.Link) bool { return l.ID == li[0] })
			if link < 0 {
				tb.Fatalf("recorded socket on link %d, not in the recorded group", li[0])
			}
			// smc_diag_linkinfo.peer_gid[40] at 106, NUL-padded.
			clear(li[106 : 106+40])
			copy(li[106:106+40], peerGID(gi, li[0]))
			// The peer's address, as the group's link GIDs map it.
			copy(m[24:28], peerAddr(gi, li[0]))
			lgr.Conns++
			lgr.Links[link].ConnCount++
		}
		k.msgs = append(k.msgs, m)
	}
	return k
}

// GroupID is the kernel ID of BigKernel's i-th link group.
func GroupID(i int) uint32 { return uint32(0x100 + i) }

// peerAddr is the IPv4 address of the i-th group's peer on link id:
// 10.11.x.y over the first link, 10.12.x.y over the second.
func peerAddr(i int, id uint8) []byte {
	return []byte{10, 10 + id, byte(i >> 8), byte(i)}
}

// peerGID is the GID of peerAddr, IPv4-mapped as RoCE v2 GIDs are.
func peerGID(i int, id uint8) string {
	a := peerAddr(i, id)
	return fmt.Sprintf("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a[0], a[1], a[2], a[3])
}

// linkUID is the link user ID the kernel gives link id of group lgr
// (the group's ID plus the link's, big-endian), as SMC_NLA_LINK_UID
// carries it: the bytes read as a native u32.
func linkUID(lgr uint32, id uint8) uint32 {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], lgr+uint32(id))
	return binary.NativeEndian.Uint32(b[:])
}

// lgrInfo returns the SMC_DIAG_LGRINFO payload of the smc_diag message m
// (smc_diag_msg is 64 bytes, then netlink attributes).
func lgrInfo(tb testing.TB, m []byte) []byte {
	for b := m[64:]; len(b) >= 4; {
		l := int(binary.NativeEndian.Uint16(b[0:2]))
		typ := binary.NativeEndian.Uint16(b[2:4])
		if l < 4 || l > len(b) {
			break
		}
		if typ == 2 && l-4 >= 147 { // SMC_DIAG_LGRINFO, struct smc_diag_lgrinfo
			return b[4:l]
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	tb.Fatal("recorded socket without SMC_DIAG_LGRINFO")
	return nil
}

func (k *bigKernel) Sockets() ([]smcnl.Socket, error) {
	// As smcnl.DiagConn.AppendSockets parses a dump.
	if k.parser == nil {
		k.parser = smcnl.NewSocketParser(len(k.msgs))
	}
	k.parser.Reuse()
	out := slices.Grow(k.socks[:0], len(k.msgs))
	for _, m := range k.msgs {
		s, err := k.parser.Parse(m)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	k.socks = out
	return out, nil
}

func (k *bigKernel) LinkGroupsR() ([]smcnl.LinkGroupR, error) { return k.lgrs, nil }
