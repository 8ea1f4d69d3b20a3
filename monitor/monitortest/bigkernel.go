// Package monitortest makes big hosts for the live half's benchmarks: a
// kernel of many SMC sockets and link groups built from the lab's real
// netlink replies.
package monitortest

import (
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/monitor"
	"github.com/smcscope/smcscope/smcnl"
)

// bigKernel serves n sockets and g link groups built from the lab's real
// replies (multilink-client-before): every call parses n recorded
// smc_diag messages with their own inodes and ports, newest first, as a
// dump would.
type bigKernel struct {
	monitor.Kernel
	msgs [][]byte
	lgrs []smcnl.LinkGroupR
	// socks and parser are the last dump's, reused by the next one as
	// the live kernel (monitor.DialKernel) reuses its own.
	socks  []smcnl.Socket
	parser *smcnl.SocketParser
}

// BigKernel returns a kernel of n SMC sockets and g link groups.
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
	k := &bigKernel{Kernel: base}
	for i := 0; i < n; i++ {
		m := append([]byte(nil), msgs[i%len(msgs)].Data...)
		// A kernel dumps its sockets newest first, not by key: smc_diag
		// walks smc_hash's list, to whose head smc_hash_sk adds each
		// socket, and inodes grow with time.
		binary.NativeEndian.PutUint64(m[56:64], uint64(100000+n-1-i)) // inode
		binary.BigEndian.PutUint16(m[4:6], uint16(20000+i%40000))     // source port
		k.msgs = append(k.msgs, m)
	}
	real, err := base.LinkGroupsR()
	if err != nil || len(real) == 0 {
		tb.Fatalf("recorded link groups: %v", err)
	}
	for i := 0; i < g; i++ {
		lg := real[0]
		lg.ID = uint32(0x100 + i)
		lg.Links = append([]smcnl.Link(nil), lg.Links...)
		k.lgrs = append(k.lgrs, lg)
	}
	return k
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
