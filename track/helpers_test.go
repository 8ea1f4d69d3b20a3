package track

import (
	"bufio"
	"errors"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/internal/mutate"
)

const refDir = "../testdata/reference/"

// feedFile runs a capture through a tracker, skipping the first skip
// frames (to imitate a capture that starts mid-connection).
func feedFile(t testing.TB, name string, opts Options, skip int) *Tracker {
	t.Helper()
	tr := New(opts)
	eachFrame(t, name, func(f *capture.Frame) {
		if f.Number > skip {
			tr.Feed(f)
		}
	})
	return tr
}

// eachFrame calls fn with every frame of the capture file name.
func eachFrame(t testing.TB, name string, fn func(*capture.Frame)) {
	t.Helper()
	r, err := capture.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	eachRead(t, r, fn)
}

// eachRaw calls fn with every frame of frames (read or built in memory,
// of link type lt) as the frame reader decodes them.
func eachRaw(t testing.TB, name string, lt layers.LinkType, frames []rawFrame, fn func(*capture.Frame)) {
	t.Helper()
	r, err := capture.NewReader(name, mutate.NewSource(frames), lt)
	if err != nil {
		t.Fatal(err)
	}
	eachRead(t, r, fn)
}

// eachRead calls fn with every frame r reads; a read error fails t.
func eachRead(t testing.TB, r *capture.Reader, fn func(*capture.Frame)) {
	t.Helper()
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(f)
	}
}

// wireCount is what the decoders alone see in a capture, counted without
// the tracker, to check the tracker's sums against.
type wireCount struct {
	cdcs      map[string]int    // by IP source
	lastSeq   map[string]uint16 // by IP source
	dmaBytes  map[string]uint64 // RETH DMA length by IP source
	writes    map[string]int
	roce      int
	retransOf map[string]int // request PSN repeated, by IP source
}

func countWire(t testing.TB, name string, skip int) wireCount {
	w := wireCount{cdcs: map[string]int{}, lastSeq: map[string]uint16{}, dmaBytes: map[string]uint64{},
		writes: map[string]int{}, retransOf: map[string]int{}}
	seen := map[string]map[uint32]bool{}
	eachFrame(t, name, func(f *capture.Frame) {
		if f.Number <= skip || f.BTH == nil || f.IPv4 == nil {
			return
		}
		w.roce++
		src := f.IPv4.SrcIP.String()
		if op := f.BTH.Opcode; op != decode.OpAcknowledge {
			if seen[src] == nil {
				seen[src] = map[uint32]bool{}
			}
			if seen[src][f.BTH.PSN] {
				w.retransOf[src]++
				return
			}
			seen[src][f.BTH.PSN] = true
		}
		if f.CDC != nil {
			w.cdcs[src]++
			w.lastSeq[src] = f.CDC.Seq
		}
		if f.RETH != nil {
			w.dmaBytes[src] += uint64(f.RETH.DMALen)
			w.writes[src]++
		}
	})
	return w
}

// guestLog is the kernel's own view of the scenario from a guest console
// log: the smc_diag line of connection 0 and the SMC netlink statistics.
type guestLog struct {
	diag        map[string]string // key=value of the "conn0 DIAG " line
	local, peer string            // the DIAG line's "LOCAL -> PEER"
	end         map[string]string // key=value of the "conn0 DIAG-END " line (client only)
	stats       map[string]string // key=value of the STATS: line
	lgr         map[string]string // first LINK: lgr_smcr line
	link        map[string]string // first LINK: link_smcr line
}

var kvRE = regexp.MustCompile(`([a-z_.0-9]+)=("[^"]*"|\S+)`)

func readLog(t testing.TB, name string) guestLog {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g := guestLog{}
	kv := func(line string) map[string]string {
		m := map[string]string{}
		for _, x := range kvRE.FindAllStringSubmatch(line, -1) {
			m[x[1]] = strings.Trim(x[2], `"`)
		}
		return m
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case g.diag == nil && strings.Contains(line, "conn0") && strings.Contains(line, " DIAG "):
			g.diag = kv(line)
			if f := strings.Fields(line[strings.Index(line, " DIAG ")+6:]); len(f) >= 3 && f[1] == "->" {
				g.local, g.peer = f[0], f[2]
			}
		case g.end == nil && strings.Contains(line, "conn0 DIAG-END "):
			g.end = kv(line)
		case strings.HasPrefix(line, "STATS: "):
			g.stats = kv(line)
		case g.lgr == nil && strings.HasPrefix(line, "LINK: lgr_smcr"):
			g.lgr = kv(line)
		case g.link == nil && strings.HasPrefix(line, "LINK: link_smcr"):
			g.link = kv(line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// num parses a decimal or 0x number from a log value such as
// "0x03030002(NOSMCRDEV)".
func num(t testing.TB, s string) uint64 {
	t.Helper()
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("log value %q: %v", s, err)
	}
	return n
}

// compileFilters compiles every expression of exprs; one that does not
// compile fails t.
func compileFilters(t testing.TB, exprs []string) []*filter.Filter {
	t.Helper()
	fs := make([]*filter.Filter, len(exprs))
	for i, e := range exprs {
		f, err := filter.Compile(e)
		if err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		fs[i] = f
	}
	return fs
}

// withSnapLen returns frames as a capture with snap length snap holds
// them (tcpdump -s, editcap -s): each cut to snap bytes, its wire length
// kept.
func withSnapLen(frames []rawFrame, snap int) []rawFrame {
	out := slices.Clone(frames)
	for i := range out {
		if len(out[i].Data) > snap {
			out[i].Data = out[i].Data[:snap:snap]
			out[i].CI.CaptureLength = snap
		}
	}
	return out
}
