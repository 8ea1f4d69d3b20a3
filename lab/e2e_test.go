package lab

// End-to-end tests: boot the lab (QEMU guests, Soft-RoCE, and SMC-D over the DIBS
// loopback on 7.3) on each kernel of kernels and check the project's binaries inside the
// guests against the kernel and the wire.
//
// They run only when asked, because a run needs root, QEMU (installed with apt when
// missing), network access to the Debian archive the first time, the lab's 7.3 kernel
// (lab/kernel/build.sh, cached outside the clone) and minutes (measured run times in
// lab/README.md; the limits are lab/run's, `lab/run --limits`):
//
//	make e2e    # SMCSCOPE_E2E=1 go test -v -timeout $(lab/run --go-test-timeout) ./lab/
//
// SMCSCOPE_E2E_RUN=DIR reuses earlier runs instead of booting (no root needed then): DIR/K
// is the run directory of `lab/run --kernel K --out DIR/K e2e`, the layout make e2e
// leaves. Anything that keeps a kernel's lab from running is a t.Skip of that kernel's
// subtests naming the reason (lab/run exits 3 and prints "lab: CANNOT RUN: <reason>").
// With SMCSCOPE_E2E_STATUS=FILE, TestMain writes one line into FILE saying per kernel
// whether the lab ran and how it went, or why not; make e2e prints it last.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"golang.org/x/net/bpf"

	"github.com/smcscope/smcscope/capture"
)

// kernels are the guest kernels of make e2e, in run order: Debian's 6.12 (what the
// long-term distributions ship) and the lab's 7.3 (lab/kernel: DIBS, SMC-D loopback, the
// BPF handshake controller). Every e2e test checks each kernel's run as a subtest named
// after it; the scenarios of 7.3 alone (e2e-smcd, e2e-hsctrl) have a 7.3 subtest only.
var kernels = []string{"6.12", "7.3"}

// labResult is one kernel's lab/run e2e, made once per test binary.
type labResult struct {
	once    sync.Once
	dir     string
	skip    string
	err     error
	summary string // lab/run's "summary:" line
	reused  bool
	asked   bool // some test wanted this kernel's run
	failed  bool // some subtest of this kernel failed
}

var (
	runsMu sync.Mutex
	runs   = map[string]*labResult{}
)

func result(kernel string) *labResult {
	runsMu.Lock()
	defer runsMu.Unlock()
	r := runs[kernel]
	if r == nil {
		r = &labResult{}
		runs[kernel] = r
	}
	return r
}

func TestMain(m *testing.M) {
	code := m.Run()
	if f := os.Getenv("SMCSCOPE_E2E_STATUS"); f != "" {
		if err := os.WriteFile(f, []byte(statusLine(code)+"\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "lab e2e: status:", err)
		}
	}
	os.Exit(code)
}

// statusLine is make e2e's last line: per kernel, whether the lab ran and what came of
// it, or why not.
func statusLine(code int) string {
	verdict := "PASS"
	if code != 0 {
		verdict = "FAIL"
	}
	// Kernels with the same status (the same reason to skip) share one part.
	var order []string
	byStatus := map[string][]string{}
	for _, k := range kernels {
		st := result(k).status()
		if byStatus[st] == nil {
			order = append(order, st)
		}
		byStatus[st] = append(byStatus[st], k)
	}
	var parts []string
	for _, st := range order {
		parts = append(parts, strings.Join(byStatus[st], ", ")+": "+st)
	}
	return fmt.Sprintf("lab e2e: %s; %s", verdict, strings.Join(parts, "; "))
}

func (r *labResult) status() string {
	verdict := "PASS"
	if r.failed {
		verdict = "FAIL"
	}
	switch {
	case !r.asked:
		return "no lab test was selected, the lab did not run"
	case r.skip != "":
		return "SKIPPED, " + r.skip
	case r.err != nil:
		return fmt.Sprintf("FAIL, lab/run produced nothing: %v", r.err)
	case r.reused:
		return fmt.Sprintf("%s, checked the earlier run in %s (SMCSCOPE_E2E_RUN)", verdict, r.dir)
	}
	return fmt.Sprintf("%s, the lab ran (%s)", verdict, r.summary)
}

// eachKernel runs f as a subtest per kernel on that kernel's lab run.
func eachKernel(t *testing.T, f func(t *testing.T, dir string)) {
	t.Helper()
	for _, k := range kernels {
		onKernel(t, k, f)
	}
}

// onKernel runs f as the subtest named kernel on that kernel's lab run, and remembers a
// failure for the status line.
func onKernel(t *testing.T, kernel string, f func(t *testing.T, dir string)) {
	t.Helper()
	r := result(kernel)
	if !t.Run(kernel, func(t *testing.T) { f(t, labRun(t, kernel)) }) {
		r.failed = true
	}
}

// labRun boots the e2e scenarios on kernel once per test binary and returns its run
// directory. The 7.3 run may first wait for lab/kernel/build.sh (make test starts it in
// the background); lab/run exits 3 when that kernel cannot be had, which skips.
func labRun(t *testing.T, kernel string) string {
	t.Helper()
	r := result(kernel)
	r.once.Do(func() {
		r.asked = true
		if d := os.Getenv("SMCSCOPE_E2E_RUN"); d != "" {
			r.dir, r.reused = filepath.Join(d, kernel), true
			if _, err := os.Stat(r.dir); err != nil {
				r.skip = fmt.Sprintf("no %s run in SMCSCOPE_E2E_RUN=%s (make e2e writes one directory per kernel)", kernel, d)
			}
			return
		}
		if os.Getenv("SMCSCOPE_E2E") != "1" {
			r.skip = "set SMCSCOPE_E2E=1 to boot the lab (root, QEMU, the Debian archive; minutes), " +
				"or SMCSCOPE_E2E_RUN=DIR to check earlier runs (`lab/run --kernel K --out DIR/K e2e`)"
			return
		}
		if os.Geteuid() != 0 {
			r.skip = "the lab needs root (apt, QEMU networking); running as uid " + strconv.Itoa(os.Geteuid())
			return
		}
		base, err := e2eBase()
		if err != nil {
			r.err = err
			return
		}
		r.dir = filepath.Join(base, kernel)
		var stderr bytes.Buffer
		cmd := exec.Command("./run", "--kernel", kernel, "--out", r.dir, "--no-samples", "e2e")
		cmd.Stdout = os.Stdout
		cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
		err = cmd.Run()
		for _, l := range strings.Split(stderr.String(), "\n") {
			if _, s, ok := strings.Cut(l, "lab: summary: "); ok {
				r.summary = "lab/run: " + s
			}
		}
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee) && ee.ExitCode() == 3:
			r.skip = cannotRun(stderr.String())
		case err != nil:
			// Verification failures are reported by the tests below from the files;
			// only a run that produced nothing is an error here.
			if _, serr := os.Stat(filepath.Join(r.dir, "e2e-smc")); serr != nil {
				r.err = err
			}
		}
	})
	if r.skip != "" {
		t.Skip(r.skip)
	}
	if r.err != nil {
		t.Fatalf("lab/run --kernel %s e2e: %v", kernel, r.err)
	}
	return r.dir
}

// kernelOf names the kernel whose lab run dir is.
func kernelOf(dir string) string {
	runsMu.Lock()
	defer runsMu.Unlock()
	for k, r := range runs {
		if r.dir == dir {
			return k
		}
	}
	return ""
}

// declineReason is why the e2e-decline server (SMC, no RoCE device) declines: the first
// reason it found. On 6.12 that is NOSMCRDEV. On 7.3 every host has the DIBS loopback, so
// the client proposes SMC-Dv2 too, and the server, which looks for an SMC-Dv2 device
// first, keeps NOSMCD2DEV (smc_find_ism_v2_device_serv and smc_init_info_store_rc,
// net/smc/af_smc.c).
func declineReason(dir string) (r struct{ code, name string }) {
	if kernelOf(dir) == "7.3" {
		r.code, r.name = "0x03030007", "NOSMCD2DEV"
	} else {
		r.code, r.name = "0x03030002", "NOSMCRDEV"
	}
	return r
}

var (
	baseOnce sync.Once
	baseDir  string
	baseErr  error
)

// e2eBase is the directory of this test binary's runs, one subdirectory per kernel (the
// layout SMCSCOPE_E2E_RUN reads).
func e2eBase() (string, error) {
	baseOnce.Do(func() { baseDir, baseErr = os.MkdirTemp("", "smcscope-e2e-") })
	return baseDir, baseErr
}

func cannotRun(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if _, r, ok := strings.Cut(l, "CANNOT RUN: "); ok {
			return "lab cannot run here: " + r
		}
	}
	return "lab cannot run here (lab/run exit 3)"
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (the guest did not hand it out)", err)
	}
	return string(b)
}

// steps reads the exit status of every e2e step from the client's e2e.txt.
func steps(t *testing.T, dir, scen string) (rc map[string]int, have map[string]bool) {
	t.Helper()
	rc, have = map[string]int{}, map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(readFile(t, filepath.Join(dir, scen, "client", "e2e.txt"))))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "STEP" && strings.HasPrefix(f[2], "rc="):
			n, err := strconv.Atoi(strings.TrimPrefix(f[2], "rc="))
			if err != nil {
				t.Fatalf("bad step line %q", sc.Text())
			}
			rc[f[1]] = n
		case len(f) == 2 && f[0] == "HAVE":
			have[f[1]] = true
		}
	}
	return rc, have
}

func need(t *testing.T, have map[string]bool, bins ...string) {
	t.Helper()
	for _, b := range bins {
		if !have[b] {
			t.Fatalf("%s was not in the guest (it did not build with CGO_ENABLED=0)", b)
		}
	}
}

// kernelLink is the client's SMC-R link as smclab read it from netlink at the end of the
// run (client.report; its UIDs are checked against the wire by TestSmclabAgreesWithWire).
type kernelLink struct{ dev, gid, peerGID string }

var linkRE = regexp.MustCompile(`^LINK: .* link_id=1 .* ib_dev="([^"]*)" .* gid="([^"]*)" peer_gid="([^"]*)"`)

func clientLink(t *testing.T, dir, scen string) kernelLink {
	t.Helper()
	for _, l := range strings.Split(readFile(t, filepath.Join(dir, scen, "client", "client.report")), "\n") {
		if m := linkRE.FindStringSubmatch(l); m != nil {
			return kernelLink{m[1], m[2], m[3]}
		}
	}
	t.Fatal("no link 1 in the client's netlink report")
	return kernelLink{}
}

func TestSmcpingCheckProvesSMCR(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smcping")
		out := readFile(t, filepath.Join(dir, "e2e-smc", "client", "smcping-check.txt"))
		if rc["smcping-check"] != 0 {
			t.Errorf("smcping --check exit %d, want 0:\n%s", rc["smcping-check"], out)
		}
		l := clientLink(t, dir, "e2e-smc")
		want := "OK SMC-R via " + l.dev + " port 1 link 1 "
		if !strings.HasPrefix(out, want) || !strings.Contains(out, "gid "+l.gid+" peer "+l.peerGID) {
			t.Errorf("smcping --check said\n%s\nthe kernel's link: %s gid %s peer %s", out, l.dev, l.gid, l.peerGID)
		}
	})
}

// TestSmcpingCheckIPPROTO: IPPROTO_SMC sockets (Linux 6.11+) are reported by smc_diag
// with 0.0.0.0 addresses, so the mode proof must not rely on the address match alone.
func TestSmcpingCheckIPPROTO(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smcping")
		v, ran := rc["smcping-ipproto"]
		if !ran {
			t.Fatal("the smcping-ipproto step did not run")
		}
		out := readFile(t, filepath.Join(dir, "e2e-smc", "client", "smcping-ipproto.txt"))
		if v != 0 || !strings.HasPrefix(out, "OK SMC-R via "+clientLink(t, dir, "e2e-smc").dev) {
			t.Errorf("smcping --proto ipproto --check exit %d:\n%s\nwant exit 0 and OK SMC-R", v, out)
		}
	})
}

func TestSmcpingRequireJSON(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smcping")
		if rc["smcping-require"] != 0 {
			t.Errorf("smcping --require smc exit %d against an SMC server, want 0", rc["smcping-require"])
		}
		raw := readFile(t, filepath.Join(dir, "e2e-smc", "client", "smcping-require.txt"))
		var rep struct {
			Conns []struct {
				Proto, Local, Remote, Mode string
				Link                       *struct {
					IBDev string `json:"ibdev"`
					GID   string `json:"gid"`
				} `json:"link"`
			} `json:"connections"`
			Results []struct {
				Mode string
				Size int
				RTT  struct{ N int } `json:"rtt"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(raw), &rep); err != nil {
			t.Fatalf("smcping -o json: %v\n%s", err, raw)
		}
		l := clientLink(t, dir, "e2e-smc")
		if len(rep.Conns) == 0 {
			t.Fatal("no connections in the JSON report")
		}
		for _, c := range rep.Conns {
			if c.Proto != "smc" {
				continue
			}
			if c.Mode != "SMC-R" || c.Link == nil || c.Link.IBDev != l.dev || c.Link.GID != l.gid {
				t.Errorf("connection %s -> %s: mode %q link %+v; kernel: SMC-R via %s gid %s", c.Local, c.Remote, c.Mode, c.Link, l.dev, l.gid)
			}
		}
		sizes := map[int]bool{}
		for _, r := range rep.Results {
			sizes[r.Size] = r.RTT.N > 0
		}
		if !sizes[64] || !sizes[1000] {
			t.Errorf("results for sizes %v, want 64 and 1000 with samples", sizes)
		}
	})
}

func TestSmcpingOtherModesExitZero(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smcping")
		for _, s := range []string{"smcping-plain", "smcping-compare", "smcping-bw"} {
			if v, ok := rc[s]; !ok || v != 0 {
				t.Errorf("%s: exit %d (ran: %v), want 0; output:\n%s", s, v, ok,
					readFile(t, filepath.Join(dir, "e2e-smc", "client", s+".txt")))
			}
		}
	})
}

func TestSmcpingDecline(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		// The server has SMC but no RoCE device: it declines, the client's local reason
		// is PEERDECL (see samples/decline-nordma.log for the kernel's view), the peer's
		// the server's first reason (declineReason).
		d := declineReason(dir)
		checkFallback(t, dir, "e2e-decline", fmt.Sprintf("FAIL fallback 0x05000000 PEERDECL (peer %s %s", d.code, d.name))
	})
}

// TestSmcpingPeerNotSMC: against a plain TCP server (smcping -s --tcp) the SYN-ACK has
// no SMC option, no CLC is sent, and the client's kernel reports PEERNOSMC.
func TestSmcpingPeerNotSMC(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		checkFallback(t, dir, "e2e-nosmc", "FAIL fallback 0x03010000 PEERNOSMC")
	})
}

// checkFallback asserts smcping's report and exit codes in a scenario that falls back:
// --check fails naming the reason, --require smc exits 1, a plain run measures TCP and
// exits 0 (a fallback is a result, not an error).
func checkFallback(t *testing.T, dir, scen, want string) {
	t.Helper()
	rc, have := steps(t, dir, scen)
	need(t, have, "smcping")
	out := readFile(t, filepath.Join(dir, scen, "client", "smcping-check.txt"))
	if rc["smcping-check"] == 0 || !strings.HasPrefix(out, want) {
		t.Errorf("smcping --check exit %d:\n%s\nwant a non-zero exit and %q", rc["smcping-check"], out, want)
	}
	if rc["smcping-require"] != 1 {
		t.Errorf("smcping --require smc exit %d, want 1", rc["smcping-require"])
	}
	if rc["smcping-plain"] != 0 {
		t.Errorf("smcping without --require exit %d, want 0", rc["smcping-plain"])
	}
}

// rawCLCTypes counts TCP segments of the smcping ports (5000; 5002, the observation
// connection of e2e-smc) whose payload starts with the CLC eyecatcher, by type byte: the
// reference for smcdump's CLC decode of the same file.
func rawCLCTypes(t *testing.T, path string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range frames(t, path) {
		p := gopacket.NewPacket(f, layers.LayerTypeEthernet, gopacket.NoCopy)
		tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
		// smcping's ports and the HTTP exchange's (scenarios.sh HTTP_PORT).
		smcPort := func(p layers.TCPPort) bool { return p == 5000 || p == 5002 || p == 5080 }
		if !ok || (!smcPort(tcp.SrcPort) && !smcPort(tcp.DstPort)) {
			continue
		}
		if pl := tcp.Payload; len(pl) >= 8 && bytes.Equal(pl[:4], []byte{0xe2, 0xd4, 0xc3, 0xd9}) {
			out[strconv.Itoa(int(pl[4]))]++
		}
	}
	return out
}

// frames reads every frame of a pcap or pcapng file.
func frames(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var next func() ([]byte, error)
	if strings.HasSuffix(path, ".pcapng") {
		r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		next = func() ([]byte, error) { d, _, err := r.ReadPacketData(); return d, err }
	} else {
		r, err := pcapgo.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		next = func() ([]byte, error) { d, _, err := r.ReadPacketData(); return d, err }
	}
	var out [][]byte
	for {
		d, err := next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: frame %d: %v", path, len(out)+1, err)
		}
		out = append(out, d)
	}
}

// TestSmcdumpLiveCaptureMatchesWire compares what smcdump captured live on the client's
// eth0 with what QEMU recorded on the server's end of the same wire: every live frame must
// be on the wire byte for byte, and the live capture must miss nothing its filter selects
// between its first and last frame. The guest runs smcdump without -f, so the filter is
// the default one (SYNs, CLC segments, RoCE): the wire is passed through the same BPF
// program, run by x/net/bpf's VM, so pure ACKs and the TCP baseline's data do not count.
func TestSmcdumpLiveCaptureMatchesWire(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smcdump")
		if rc["smcdump-live"] != 0 {
			t.Errorf("smcdump -i eth0 exit %d after SIGINT, want 0", rc["smcdump-live"])
		}
		live := frames(t, filepath.Join(dir, "e2e-smc", "client", "live.pcapng"))
		wire := frames(t, filepath.Join(dir, "e2e-smc", "capture.pcap"))
		insns, ok := bpf.Disassemble(capture.DefaultFilter())
		if !ok {
			t.Fatal("the default live filter does not disassemble")
		}
		vm, err := bpf.NewVM(insns)
		if err != nil {
			t.Fatalf("default live filter: %v", err)
		}
		selected := wire[:0:0]
		for _, f := range wire {
			n, err := vm.Run(f)
			if err != nil {
				t.Fatalf("default live filter: %v", err)
			}
			if n > 0 {
				selected = append(selected, f)
			}
		}
		wire = selected
		if len(live) < 100 {
			t.Fatalf("live capture has %d frames; smcping made thousands", len(live))
		}
		pos := map[string][]int{}
		for i, f := range wire {
			pos[string(f)] = append(pos[string(f)], i)
		}
		first, last, missing := len(wire), -1, 0
		for _, f := range live {
			p := pos[string(f)]
			if len(p) == 0 {
				missing++
				continue
			}
			first, last = min(first, p[0]), max(last, p[0])
			pos[string(f)] = p[1:]
		}
		if missing > 0 {
			t.Errorf("%d of %d live frames are not on the wire byte for byte", missing, len(live))
		}
		// The two ends timestamp independently, so frames near the window's edges may be
		// ordered differently; a few of slack, no more.
		if window := last - first + 1; window-len(live) > 4 || window < len(live)-missing {
			t.Errorf("live capture has %d frames, the wire has %d between the first and the last of them", len(live), window)
		}
	})
}

// TestSmcdumpDecodesFreshCapture runs the host's smcdump over the fresh capture and the
// live one and checks the handshake and data path it reports.
func TestSmcdumpDecodesFreshCapture(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		bin := buildSmcdump(t)
		for _, name := range []string{"capture.pcap", "client/live.pcapng"} {
			p := filepath.Join(dir, "e2e-smc", name)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			// Port 5003 is the client's first contact (scenarios.sh first_contact), which
			// may decline on a loaded host; rawCLCTypes leaves it out too.
			out, err := exec.Command(bin, "-r", p, "-a", "-Y", "!(tcp.port == 5003)", "-T", "fields", "-e", "smc.clc.type", "-e", "roce.bth.opcode").Output()
			if err != nil {
				t.Errorf("smcdump -r %s: %v", name, err)
				continue
			}
			clc, writes := map[string]int{}, 0
			for _, l := range strings.Split(string(out), "\n") {
				f := strings.Split(l, "\t")
				if len(f) != 2 {
					continue
				}
				if f[0] != "" {
					clc[f[0]]++
				}
				switch f[1] {
				case "6", "7", "8", "9", "10", "11":
					writes++
				}
			}
			// Every smcping connection is a CLC handshake and nothing declines; TCP may
			// retransmit a CLC segment, so the reference is the raw bytes of the same file.
			raw := rawCLCTypes(t, p)
			if fmt.Sprint(clc) != fmt.Sprint(raw) || raw["1"] == 0 || raw["4"] != 0 {
				t.Errorf("%s: smcdump CLC types %v, raw TCP payloads (eyecatcher E2D4C3D9, type byte) %v", name, clc, raw)
			}
			if writes == 0 {
				t.Errorf("%s: no RDMA WRITE decoded", name)
			}
		}
	})
}

// buildSmcdump builds the host's smcdump into a temporary directory.
func buildSmcdump(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smcdump")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/smcdump").CombinedOutput(); err != nil {
		t.Fatalf("go build smcdump: %v\n%s", err, out)
	}
	return bin
}

// kvLine returns the value of key=value in text (first occurrence), quotes removed.
func kvLine(text, key string) (string, bool) {
	re := regexp.MustCompile(`(?m)(?:^|\s)` + regexp.QuoteMeta(key) + `=("[^"]*"|\S+)`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	return strings.Trim(m[1], `"`), true
}

func hexNum(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return v
}

// TestSmclabAgreesWithWire compares smclab's link group and links (the kernel's view
// through package smcnl) with the wire as the host's smcdump decodes it (package decode),
// two independent code paths over the same facts: every link's UID and peer UID, which
// netlink prints as a native u32 of the 4 wire bytes, is a CONFIRM_LINK link UID on the
// wire, byte-swapped; and the negotiated EID is the lab's UEID.
func TestSmclabAgreesWithWire(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		need(t, have, "smclab")
		c := filepath.Join(dir, "e2e-smc", "client")
		for _, s := range []string{"smclab-stats", "smclab-lgr", "smclab-diag", "smclab-fallback", "smclab-sysinfo"} {
			if rc[s] != 0 || rc[s+"-json"] != 0 {
				t.Errorf("%s exit %d, -json exit %d; want 0", s, rc[s], rc[s+"-json"])
			}
		}
		bin := buildSmcdump(t)
		out, err := exec.Command(bin, "-r", filepath.Join(dir, "e2e-smc", "capture.pcap"), "-T", "fields",
			"-Y", "smc.llc.link_uid", "-e", "smc.llc.link_uid").Output()
		if err != nil {
			t.Fatalf("smcdump: %v", err)
		}
		wire := map[uint64]bool{}
		for _, f := range strings.Fields(string(out)) {
			wire[hexNum(t, f)] = true
		}
		lgr := readFile(t, filepath.Join(c, "smclab-lgr.txt"))
		links := 0
		for _, l := range strings.Split(lgr, "\n") {
			if !strings.HasPrefix(l, "link ") {
				continue
			}
			for _, k := range []string{"uid", "peer_uid"} {
				v, ok := kvLine(l, k)
				if !ok {
					t.Fatalf("smclab lgr link line without %s: %q", k, l)
				}
				if u := hexNum(t, v); u != 0 && !wire[uint64(bits.ReverseBytes32(uint32(u)))] {
					t.Errorf("smclab link %s %s: no CONFIRM_LINK with UID %#08x on the wire (wire UIDs %v)", k, v, bits.ReverseBytes32(uint32(u)), wire)
				}
			}
			links++
		}
		if links == 0 {
			t.Fatalf("smclab lgr shows no link after SMC-R traffic:\n%s", lgr)
		}
		if got, _ := kvLine(lgr, "neg_eid"); got != "SMC-LAB-UEID" {
			t.Errorf("smclab lgr neg_eid = %q, want the lab's UEID SMC-LAB-UEID", got)
		}
		var anyJSON any
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(c, "smclab-stats-json.txt"))), &anyJSON); err != nil {
			t.Errorf("smclab stats -json is not JSON: %v", err)
		}
	})
}

// liveTestNames lists the TestLive* functions of a package's live_linux_test.go: the
// tests the guest must have run, so a new one is required without touching this file.
func liveTestNames(t *testing.T, pkg string) []string {
	t.Helper()
	src := readFile(t, filepath.Join("..", pkg, "live_linux_test.go"))
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^func (TestLive\w*)\(t \*testing\.T\)`).FindAllStringSubmatch(src, -1) {
		names = append(names, m[1])
	}
	if len(names) == 0 {
		t.Fatalf("no TestLive* in %s/live_linux_test.go", pkg)
	}
	return names
}

// TestLiveTestsRanInGuest: the tests of smcnl and rdmastats that need a kernel with SMC
// and an RDMA device skip on this host; e2e-smc runs them in the client guest (go test -c
// binaries, -test.v) while an SMC-R connection carries pings. Every one of them must have
// passed there, none skipped.
func TestLiveTestsRanInGuest(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-smc")
		result := regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): (\S+)`)
		for _, pkg := range []string{"smcnl", "rdmastats"} {
			need(t, have, pkg+".test")
			step := pkg + "-live"
			out := readFile(t, filepath.Join(dir, "e2e-smc", "client", step+".txt"))
			if v, ok := rc[step]; !ok || v != 0 {
				t.Errorf("%s: exit %d (ran: %v), want 0:\n%s", step, v, ok, out)
			}
			got := map[string]string{}
			for _, m := range result.FindAllStringSubmatch(out, -1) {
				got[m[2]] = m[1]
			}
			var ran []string
			for _, name := range liveTestNames(t, pkg) {
				switch got[name] {
				case "PASS":
					ran = append(ran, name)
				case "":
					t.Errorf("%s: %s did not run in the guest", pkg, name)
				default:
					t.Errorf("%s: %s %s in the guest:\n%s", pkg, name, got[name], out)
				}
			}
			t.Logf("%s: passed in the e2e-smc guest against a live SMC-R connection: %s", pkg, strings.Join(ran, " "))
		}
	})
}

// diagSocket is one "socket ..." line of smclab diag (smcnl's key=value format).
type diagSocket map[string]string

func diagSockets(text string) []diagSocket {
	var out []diagSocket
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "socket ") {
			continue
		}
		s := diagSocket{}
		for _, f := range strings.Fields(l)[1:] {
			if k, v, ok := strings.Cut(f, "="); ok {
				s[k] = strings.Trim(v, `"`)
			}
		}
		out = append(out, s)
	}
	return out
}

// TestIPPROTOSMCDiag checks what Linux 6.11+ reports for IPPROTO_SMC sockets
// (socket(AF_INET, SOCK_STREAM, IPPROTO_SMC)) in SMC sock_diag, and that smcping proves
// their mode anyway. smc_diag_msg_common_fill (net/smc/smc_diag.c) sets the family from
// the sock (AF_INET for these, AF_SMC for AF_SMC sockets) and copies the addresses only
// for SMCPROTO_SMC/SMC6, so an IPPROTO_SMC connection shows family 2, its ports and
// 0.0.0.0 on both ends, while an AF_SMC connection next to it shows family 43 and its
// addresses. Only the inode or the cookie identifies it.
func TestIPPROTOSMCDiag(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		rc, have := steps(t, dir, "e2e-ipproto")
		need(t, have, "smcping")
		need(t, have, "smclab")
		c := filepath.Join(dir, "e2e-ipproto", "client")
		check := readFile(t, filepath.Join(c, "ipproto-check.txt"))
		if rc["ipproto-check"] != 0 || !strings.HasPrefix(check, "OK SMC-R via "+clientLink(t, dir, "e2e-ipproto").dev) {
			t.Errorf("smcping --proto ipproto --check exit %d:\n%s\nwant exit 0 and OK SMC-R", rc["ipproto-check"], check)
		}

		// smcping -o json --diag: the proof (found by inode or cookie) and the kernel's line.
		raw := readFile(t, filepath.Join(c, "ipproto-json.txt"))
		var rep struct {
			Conns []struct {
				Proto, Local, Remote, Mode string
				Inode, Cookie              uint64
			} `json:"connections"`
			FinalDiag []string `json:"final_diag"`
		}
		if err := json.Unmarshal([]byte(raw), &rep); err != nil {
			t.Fatalf("smcping --proto ipproto -o json: %v\n%s", err, raw)
		}
		if rc["ipproto-json"] != 0 || len(rep.Conns) != 1 || len(rep.FinalDiag) != 1 {
			t.Fatalf("smcping --proto ipproto --require smc -o json --diag: exit %d, %d connections, %d diag lines:\n%s",
				rc["ipproto-json"], len(rep.Conns), len(rep.FinalDiag), raw)
		}
		conn := rep.Conns[0]
		_, line, _ := strings.Cut(rep.FinalDiag[0], ": ")
		ds := diagSockets(line)
		if conn.Proto != "ipproto" || conn.Mode != "SMC-R" || conn.Inode == 0 || conn.Cookie == 0 || len(ds) != 1 {
			t.Fatalf("connection %+v, diag line %q", conn, rep.FinalDiag[0])
		}
		d := ds[0]
		_, lport, _ := strings.Cut(conn.Local, ":")
		want := diagSocket{"family": "2", "mode": "SMCR", "src": "0.0.0.0:" + lport, "dst": "0.0.0.0:5000",
			"inode": strconv.FormatUint(conn.Inode, 10), "cookie": fmt.Sprintf("%#x", conn.Cookie)}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("IPPROTO_SMC socket %s -> %s: sock_diag %s=%s, want %s (line %q)", conn.Local, conn.Remote, k, d[k], v, line)
			}
		}

		// Both kinds at once, as smclab dumps them.
		var ipp, afsmc int
		for _, s := range diagSockets(readFile(t, filepath.Join(c, "ipproto-diag.txt"))) {
			if s["state"] != "ACTIVE" {
				continue
			}
			switch s["family"] {
			case "2":
				ipp++
				if !strings.HasPrefix(s["src"], "0.0.0.0:") || s["dst"] != "0.0.0.0:5000" || s["mode"] != "SMCR" {
					t.Errorf("active IPPROTO_SMC socket %v", s)
				}
			case "43":
				afsmc++
				if !strings.HasPrefix(s["src"], "10.10.0.2:") || s["dst"] != "10.10.0.1:5000" || s["mode"] != "SMCR" {
					t.Errorf("active AF_SMC socket %v", s)
				}
			default:
				t.Errorf("active SMC socket of family %s: %v", s["family"], s)
			}
		}
		if rc["ipproto-diag"] != 0 || ipp != 1 || afsmc != 1 {
			t.Errorf("smclab diag (exit %d) while one IPPROTO_SMC and one AF_SMC connection ran: %d and %d active", rc["ipproto-diag"], ipp, afsmc)
		}

		// The server's accepted IPPROTO_SMC sockets, proven by inode or cookie as well (the
		// server's throwaway connection to itself falls back, see README), and its listener.
		srv := readFile(t, filepath.Join(dir, "e2e-ipproto", "server", "server.log"))
		smcr := 0
		for _, l := range strings.Split(srv, "\n") {
			if !strings.Contains(l, " -> 10.10.0.2:") {
				continue
			}
			if !strings.Contains(l, " mode=SMCR ") {
				t.Errorf("server: %s", l)
			}
			smcr++
		}
		if smcr < 4 {
			t.Errorf("server accepted %d connections from the client, want the 4 smcping made:\n%s", smcr, srv)
		}
		// The listener on 5000; the server's other one, on 5003, is the AF_SMC server of
		// the client's first contact (scenarios.sh first_contact).
		var lis []diagSocket
		for _, s := range diagSockets(strings.ReplaceAll(readFile(t, filepath.Join(dir, "e2e-ipproto", "server", "server.report")), "SOCK: ", "socket ")) {
			if s["state"] == "LISTEN" && strings.HasSuffix(s["src"], ":5000") {
				lis = append(lis, s)
			}
		}
		if len(lis) != 1 || lis[0]["family"] != "2" || lis[0]["src"] != "0.0.0.0:5000" {
			t.Errorf("server's listeners in sock_diag: %v, want one IPPROTO_SMC listener, family 2, 0.0.0.0:5000", lis)
		}
	})
}

// hwCounters reads the "HWCOUNTERS dev: name=value ..." line of a device.
func hwCounters(t *testing.T, text, dev string) map[string]uint64 {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(l, "HWCOUNTERS "+dev+":")
		if !ok {
			continue
		}
		out := map[string]uint64{}
		for _, f := range strings.Fields(rest) {
			k, v, _ := strings.Cut(f, "=")
			out[k] = hexNum(t, v)
		}
		return out
	}
	t.Fatalf("no HWCOUNTERS line for %s", dev)
	return nil
}

// TestServerObservesPing: in e2e-smc the server takes two snapshots of its kernel view
// while the client's paced connection to port 5002 runs (the observation window,
// lab/guest/scenarios.sh). Both show that connection as active SMC-R on the server's link
// group; the guest takes the second only once the connection's cursor and rxe0's packet
// counters have moved on, so they differ between the two.
func TestServerObservesPing(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		srv := filepath.Join(dir, "e2e-smc", "server")
		snaps := []string{readFile(t, filepath.Join(srv, "observe1.txt")), readFile(t, filepath.Join(srv, "observe2.txt"))}
		var cursors []string
		for i, s := range snaps {
			var conn diagSocket
			for _, d := range diagSockets(s) {
				if d["state"] == "ACTIVE" && d["src"] == "10.10.0.1:5002" && strings.HasPrefix(d["dst"], "10.10.0.2:") {
					conn = d
				}
			}
			if conn == nil || conn["mode"] != "SMCR" || conn["role"] != "server" || conn["ib_dev"] != "rxe0" {
				t.Fatalf("snapshot %d: no active SMC-R connection 10.10.0.1:5002 <- 10.10.0.2 on rxe0:\n%s", i+1, s)
			}
			cursors = append(cursors, conn["rx_prod"])
			found := false
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, "link ") && strings.Contains(l, `ib_dev="rxe0"`) && strings.Contains(l, "peer_gid=\""+conn["peer_gid"]) {
					found = true
				}
			}
			if !found {
				t.Errorf("snapshot %d: no link on rxe0 to peer %s in the link groups:\n%s", i+1, conn["peer_gid"], s)
			}
		}
		if cursors[0] == cursors[1] {
			t.Errorf("the connection's rx_prod did not move between the snapshots (%s)", cursors[0])
		}
		a, b := hwCounters(t, snaps[0], "rxe0"), hwCounters(t, snaps[1], "rxe0")
		for _, k := range []string{"sent_pkts", "rcvd_pkts"} {
			if b[k] <= a[k] {
				t.Errorf("rxe0 %s did not increase between the snapshots: %d -> %d", k, a[k], b[k])
			}
		}
		t.Logf("server: rx_prod %s -> %s, rxe0 sent_pkts %d -> %d", cursors[0], cursors[1], a["sent_pkts"], b["sent_pkts"])
	})
}

// TestFallbackObserved: in e2e-decline and e2e-nosmc the observation window's paced
// connection falls back; both snapshots of the client show it open with the kernel's
// reason, and the declining server's show its side with its own reason (the server of
// e2e-nosmc is plain TCP and has no SMC socket).
func TestFallbackObserved(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		for _, tt := range []struct {
			scen, role, local, reason, peerDiag string
		}{
			{"e2e-decline", "client", "10.10.0.2:", "0x05000000", declineReason(dir).code},
			{"e2e-decline", "server", "10.10.0.1:5002", declineReason(dir).code, "0x00000000"},
			{"e2e-nosmc", "client", "10.10.0.2:", "0x03010000", "0x00000000"},
		} {
			for k := 1; k <= 2; k++ {
				snap := readFile(t, filepath.Join(dir, tt.scen, tt.role, fmt.Sprintf("observe%d.txt", k)))
				var found diagSocket
				for _, d := range diagSockets(snap) {
					if d["state"] == "ACTIVE" && strings.HasPrefix(d["src"], tt.local) && (d["src"] == "10.10.0.1:5002" || d["dst"] == "10.10.0.1:5002") {
						found = d
					}
				}
				if found == nil || found["mode"] != "TCP-FALLBACK" || found["fallback"] != tt.reason || found["peer_diag"] != tt.peerDiag {
					t.Errorf("%s %s snapshot %d: want the paced connection on port 5002 as TCP-FALLBACK %s peer %s, got %v:\n%s",
						tt.scen, tt.role, k, tt.reason, tt.peerDiag, found, snap)
				}
			}
		}
	})
}

// TestLabRunVerified makes lab/run's own verification (verify.sh: kernel, wire, the
// project's tools, each line "check ...: ok|FAILED") part of the Go result, for every
// scenario of the run.
func TestLabRunVerified(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		logs, err := filepath.Glob(filepath.Join(dir, "*", "verify.log"))
		if err != nil || len(logs) == 0 {
			t.Fatalf("no verify.log in %s (%v)", dir, err)
		}
		for _, p := range logs {
			sc := filepath.Base(filepath.Dir(p))
			if strings.HasSuffix(sc, ".timedout") || strings.HasSuffix(sc, ".crashed") {
				continue // a failed run lab/run kept beside the one it made again
			}
			if why := kernelTimedOut(dir, sc); why != "" {
				t.Log(why)
				continue
			}
			text := readFile(t, p)
			ok := strings.Count(text, ": ok\n")
			for _, l := range strings.Split(text, "\n") {
				if strings.HasSuffix(l, ": FAILED") {
					t.Errorf("%s: %s", filepath.Base(filepath.Dir(p)), l)
				}
			}
			if ok == 0 {
				t.Errorf("%s: no check passed:\n%s", p, text)
			}
		}
	})
}

// kernelTimeout is a CLC decline of a kernel's own timeouts, by name or code, as lab/run's
// kernel_timed_out finds it in the guests' logs.
var kernelTimeout = regexp.MustCompile(`TIMEOUT_(CL|AL)|0x0201[0-9a-f]{4}|0x0202[0-9a-f]{4}`)

// kernelTimedOut says why scenario sc of the run in dir cannot be checked ("" when it
// can): lab/run ran it again after a guest's kernel declined with one of its own timeouts
// (it kept the first run as sc.timedout), and the second run failed the same way. That is
// 7.3's first CONFIRM LINK dropped by the client's kernel (lab/README.md), not a finding
// of the project's tools, which the other scenarios still check.
func kernelTimedOut(dir, sc string) string {
	if _, err := os.Stat(filepath.Join(dir, sc+".timedout")); err != nil {
		return ""
	}
	v, err := os.ReadFile(filepath.Join(dir, sc, "verify.log"))
	if err != nil || !strings.Contains(string(v), ": FAILED") {
		return ""
	}
	logs, _ := filepath.Glob(filepath.Join(dir, sc, "*", "*.log"))
	for _, p := range logs {
		if b, err := os.ReadFile(p); err == nil && kernelTimeout.Match(b) {
			return fmt.Sprintf("%s not checked: in both runs lab/run made of it a guest's kernel declined with its own timeout (%s; the first run is in %s.timedout), "+
				"7.3's dropped first CONFIRM LINK that lab/README.md describes", sc, kernelTimeout.Find(b), sc)
		}
	}
	return ""
}

// skipKernelTimedOut skips t when scenario sc of the run in dir cannot be checked
// (kernelTimedOut).
func skipKernelTimedOut(t *testing.T, dir, sc string) {
	t.Helper()
	if why := kernelTimedOut(dir, sc); why != "" {
		t.Skip(why)
	}
}

// TestMultilinkFailover: two links on rxe0/rxe1 in one link group; eth1 goes down under
// idle connections, the group keeps one link, the paced connections finish on it, and a
// new connection uses SMC-R afterwards (as smclab read the kernel at each point).
func TestMultilinkFailover(t *testing.T) {
	eachKernel(t, func(t *testing.T, dir string) {
		skipKernelTimedOut(t, dir, "multilink")
		log := readFile(t, filepath.Join(dir, "multilink", "client", "client.log"))
		count := func(prefix string) (n int) {
			for _, l := range strings.Split(log, "\n") {
				if strings.HasPrefix(l, prefix) && !strings.Contains(l, " state=ACTIVATING ") {
					n++
				}
			}
			return n
		}
		before, after := count("BEFORE-FAILOVER LINK:"), count("AFTER-FAILOVER LINK:")
		if before != 2 || after != 1 {
			t.Errorf("links before eth1 went down %d, after %d; want 2 and 1:\n%s", before, after, log)
		}
		for _, dev := range []string{`"rxe0"`, `"rxe1"`} {
			if !regexp.MustCompile(`(?m)^BEFORE-FAILOVER LINK:.*` + dev).MatchString(log) {
				t.Errorf("no link on %s before the failover", dev)
			}
		}
		if n := strings.Count(log, "CLIENT RESULT conns=1 failed=0 rc=0"); n != 3 {
			t.Errorf("%d of 3 smcping runs (two paced across the failover, one after) finished cleanly:\n%s", n, log)
		}
	})
}
