package monitor

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/smcscope/smcscope/smcnl"
	"github.com/smcscope/smcscope/track"
)

// bigKernel serves n sockets and g link groups built from the lab's real
// replies (multilink-client-before): every call parses n recorded
// smc_diag messages with fresh inodes and ports, as a dump would.
type bigKernel struct {
	Kernel
	msgs [][]byte
	lgrs []smcnl.LinkGroupR
}

func newBigKernel(b *testing.B, n, g int) *bigKernel {
	const dir = "../smcnl/testdata/multilink-client-before"
	msgs, err := smcnl.ReadRecording(dir + "/diag.bin")
	if err != nil {
		b.Fatal(err)
	}
	base, err := ReplayKernel(dir)
	if err != nil {
		b.Fatal(err)
	}
	k := &bigKernel{Kernel: base}
	for i := 0; i < n; i++ {
		m := append([]byte(nil), msgs[i%len(msgs)].Data...)
		binary.NativeEndian.PutUint64(m[56:64], uint64(100000+i)) // inode
		binary.BigEndian.PutUint16(m[4:6], uint16(20000+i%40000)) // source port
		k.msgs = append(k.msgs, m)
	}
	real, err := base.LinkGroupsR()
	if err != nil || len(real) == 0 {
		b.Fatalf("recorded link groups: %v", err)
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
	out := make([]smcnl.Socket, 0, len(k.msgs))
	for _, m := range k.msgs {
		s, err := smcnl.ParseSocket(m)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (k *bigKernel) LinkGroupsR() ([]smcnl.LinkGroupR, error) { return k.lgrs, nil }

// BenchmarkRefresh10kSockets is one smctop refresh of a host with 10 000
// SMC sockets and 100 link groups: parsing the sock_diag replies, the
// join, rates against the previous refresh and the event diff. The issue's
// bound is 20 ms CPU and 50 MiB per refresh.
func BenchmarkRefresh10kSockets(b *testing.B) {
	k := newBigKernel(b, 10000, 100)
	clock := time.Unix(0, 0)
	m := New(Options{Kernel: k, SysfsRoot: "../rdmastats/testdata/sys",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	m.Refresh()
	b.ReportAllocs()
	for b.Loop() {
		s := m.Refresh()
		if len(s.Conns) != 10000 {
			b.Fatalf("%d conns", len(s.Conns))
		}
	}
}

// BenchmarkReplay compares smctop's capture replay (decode, track, rows)
// with the tracker alone over the same capture: the replay should run at
// the tracker's speed.
func BenchmarkReplay(b *testing.B) {
	const file = "../samples/long.pcap"
	b.Run("smctop-r", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w, err := OpenWire(file, "", "", 0)
			if err != nil {
				b.Fatal(err)
			}
			m := New(Options{Wire: w})
			if err := w.Run(context.Background()); err != nil {
				b.Fatal(err)
			}
			m.Refresh()
		}
	})
	b.Run("tracker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w, err := OpenWire(file, "", "", 0)
			if err != nil {
				b.Fatal(err)
			}
			tr := track.New(track.Options{})
			for {
				f, err := w.r.Next()
				if err != nil {
					break
				}
				tr.Feed(f)
			}
			w.Close()
		}
	})
}

// BenchmarkRefreshRxeGIDTable is a refresh of the RDMA devices alone over
// the fixture with rxe0's GID table at its real size (1024 entries, two in
// use, the rest all zeros as the kernel shows them): the tables are kept
// between refreshes (rdmaState.read), the counters are read each time.
func BenchmarkRefreshRxeGIDTable(b *testing.B) {
	root := b.TempDir()
	if err := os.CopyFS(root, os.DirFS("../rdmastats/testdata/sys")); err != nil {
		b.Fatal(err)
	}
	gids := filepath.Join(root, "class/infiniband/rxe0/ports/1/gids")
	for i := 2; i < 1024; i++ {
		if err := os.WriteFile(filepath.Join(gids, strconv.Itoa(i)), []byte("0000:0000:0000:0000:0000:0000:0000:0000\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	clock := time.Unix(0, 0)
	m := New(Options{SysfsRoot: root, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	m.Refresh()
	b.ReportAllocs()
	for b.Loop() {
		if s := m.Refresh(); len(s.Devices) != 2 {
			b.Fatalf("%d devices", len(s.Devices))
		}
	}
}
