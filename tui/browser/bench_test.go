package browser

import (
	"bufio"
	"compress/gzip"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"

	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/testutil"
)

// bigCapture writes a capture of about SMCSCOPE_BROWSER_MB MiB (default
// 100) from the lab's samples with bench/mkbig: the kernel's own traffic,
// repeated with moved timestamps.
func bigCapture(b *testing.B) string {
	b.Helper()
	mb := 100
	if s := os.Getenv("SMCSCOPE_BROWSER_MB"); s != "" {
		mb, _ = strconv.Atoi(s)
	}
	p := filepath.Join(b.TempDir(), "big.pcap")
	dir := testutil.SamplesDir(b)
	cmd := exec.Command("go", "run", "../../bench/mkbig", "-o", p, "-size", strconv.Itoa(mb),
		filepath.Join(dir, "multiconn.pcap"), filepath.Join(dir, "multilink.pcap"), filepath.Join(dir, "decline-nordma.pcap"))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("mkbig: %v\n%s", err, out)
	}
	return p
}

func build(b *testing.B, path string) *Index {
	b.Helper()
	idx, err := Open(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	for {
		ch := idx.Changed()
		if _, done, err := idx.Progress(); done {
			if err != nil {
				b.Fatal(err)
			}
			return idx
		}
		<-ch
	}
}

// BenchmarkBrowser measures what the issue bounds, on one big capture as
// classic pcap, pcapng and pcap.gz (SMCSCOPE_BROWSER_FORMATS, default all
// three): the first screen (the first rows decoded while the index is
// still being built), the whole index pass (frames/s, bytes of index per
// frame, heap), a display filter over the whole file (frames/s) and a
// jump to a random frame (decoding its screen of 50 rows).
func BenchmarkBrowser(b *testing.B) {
	pcap := bigCapture(b)
	formats := []string{"pcap", "pcapng", "pcap.gz"}
	if s := os.Getenv("SMCSCOPE_BROWSER_FORMATS"); s != "" {
		formats = strings.Split(s, ",")
	}
	for _, format := range formats {
		path := pcap
		switch format {
		case "pcap":
		case "pcapng":
			path = toPcapng(b, pcap)
		case "pcap.gz":
			path = toGzip(b, pcap)
		default:
			b.Fatalf("SMCSCOPE_BROWSER_FORMATS: %q: want pcap, pcapng or pcap.gz", format)
		}
		b.Run(format, func(b *testing.B) { benchBrowser(b, path) })
	}
}

// toPcapng rewrites a classic pcap as pcapng (nanosecond times, as
// smcdump -w writes it).
func toPcapng(b *testing.B, pcap string) string {
	b.Helper()
	out := strings.TrimSuffix(pcap, ".pcap") + ".pcapng"
	in, err := os.Open(pcap)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	r, err := pcapgo.NewReader(bufio.NewReaderSize(in, 1<<20))
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := pcapgo.NewNgWriter(bw, r.LinkType())
	if err != nil {
		b.Fatal(err)
	}
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if err != nil {
			break
		}
		if err := w.WritePacket(ci, data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return out
}

// toGzip compresses a capture as gzip -1 would.
func toGzip(b *testing.B, path string) string {
	b.Helper()
	out := path + ".gz"
	in, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if _, err := io.Copy(zw, in); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return out
}

func benchBrowser(b *testing.B, path string) {
	st, _ := os.Stat(path)
	b.Run("first-screen", func(b *testing.B) {
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			idx, err := Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			for {
				if n, _, _ := idx.Progress(); n >= 50 {
					break
				}
				<-idx.Changed()
			}
			br := New(ctx, idx, Options{})
			if got := br.lines(idx.All()[:50]); len(got) != 50 {
				b.Fatalf("%d lines", len(got))
			}
			cancel()
		}
	})
	var idx *Index
	b.Run("index", func(b *testing.B) {
		var before, after runtime.MemStats
		var peak int64
		for b.Loop() {
			idx = nil
			runtime.GC()
			runtime.ReadMemStats(&before)
			resetPeakRSS()
			idx = build(b, path)
			peak = max(peak, peakRSS())
			runtime.GC()
			runtime.ReadMemStats(&after)
		}
		n, _, _ := idx.Progress()
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(n), "heapB/frame")
		b.ReportMetric(float64(after.HeapAlloc)/(1<<20), "heapMiB")
		if peak > 0 {
			b.ReportMetric(float64(peak)/(1<<20), "peakRSSMiB")
		}
		b.ReportMetric(float64(st.Size())/(1<<20), "fileMiB")
		b.ReportMetric(float64(n), "frames")
	})
	if idx == nil {
		idx = build(b, path)
	}
	n, _, _ := idx.Progress()
	b.Run("filter", func(b *testing.B) { benchFilter(b, idx, n, "smc.llc.type == 0x24 or smc.clc.type == 4") })
	// One connection's frames: a filter on a tracker field, the tracker
	// following the pass.
	b.Run("filter-conn", func(b *testing.B) { benchFilter(b, idx, n, "smc.conn.id == 3") })
	b.Run("jump", func(b *testing.B) {
		br := New(context.Background(), idx, Options{})
		all := idx.All()
		rng := rand.New(rand.NewPCG(1, 2))
		var worst time.Duration
		for b.Loop() {
			i := rng.IntN(len(all) - 50)
			start := time.Now()
			if got := br.lines(all[i : i+50]); len(got) == 0 {
				b.Fatal("no lines")
			}
			worst = max(worst, time.Since(start))
		}
		b.ReportMetric(float64(worst.Microseconds())/1000, "worst-ms")
	})
}

// benchFilter times the whole-file filter expr over idx's n frames.
func benchFilter(b *testing.B, idx *Index, n int, expr string) {
	flt, err := filter.Compile(expr)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := idx.Filter(context.Background(), flt); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// resetPeakRSS starts the process's peak resident size (VmHWM) over from
// its current one, where Linux allows it, so that peakRSS is the index
// pass's.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the process's peak resident size in bytes since
// resetPeakRSS, 0 where /proc does not tell it.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
