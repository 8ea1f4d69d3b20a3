package monitor

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/smcscope/smcscope/track"
)

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
