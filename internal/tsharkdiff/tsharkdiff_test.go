package tsharkdiff

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// fieldRow holds one frame's values per field name, occurrences in order.
type fieldRow map[string][]string

type valKind uint8

const (
	vUint      valKind = iota // both sides numbers (decimal or 0x)
	vBool                     // 0/1, tshark may print True/False
	vAddr                     // IPv4/IPv6/GID; IPv4-mapped GIDs compare as IPv4
	vMAC                      // 52:54:00:0a:00:01
	vText                     // tshark keeps the blank padding of EIDs and host names
	vUintBytes                // ours a number, tshark raw bytes (ImmDt, IETH)
	vU64Bytes                 // ours raw bytes, tshark a 64-bit number (peer ID)
)

// exception is a known tshark mistake or silence. It excuses a difference
// only when applies says the frame is that case; every use is counted and
// checked against wantQuirks.
type exception struct {
	name    string
	applies func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool
}

var exceptions = []exception{
	// tshark 4.0 has no dissector for the SMC-Rv2 LLC messages (types
	// 0x21-0x29, net/smc/smc_llc.c): with rpcordma disabled they are plain
	// RC SEND frames, and with it enabled they are "malformed RPC-over-RDMA"
	// (testdata/reference/README.md).
	{"llc-v2-undecoded", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		if m.layer != "LLC" || len(tv) != 0 || len(ov) != 1 {
			return false
		}
		u, err := parseUint(ov[0])
		return err == nil && u >= 0x21 && u <= 0x29
	}},
	// tshark dissects no CLC message in a TCP segment whose bytes it saw
	// before (tcp.analysis.retransmission); smcdump decodes the message in
	// every frame that carries it. In erspan.pcap these are the frames
	// after their ERSPAN copies: the same segment twice on the capture
	// point's wire, no retransmission of the sender's.
	{"clc-in-seen-bytes", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		return m.layer == "CLC" && len(tv) == 0 && len(ov) > 0 && len(theirs["tcp.analysis.retransmission"]) > 0
	}},
	// tshark files the CDC message type byte (0xFE) under smc.llc_msg;
	// smcdump has no type field for CDC, whose identity is its own layer.
	{"cdc-type-as-llc-msg", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		return m.layer == "LLC" && len(ov) == 0 && slices.Equal(tv, []string{"254"}) &&
			len(ours["smc.cdc.seq"]) > 0
	}},
	// tshark puts the virtual address and rkey of an AtomicETH (RC
	// CmpSwap 0x13, FetchAdd 0x14) under the RETH names; smcdump does not
	// decode AtomicETH, so it has no RETH in those frames.
	{"atomiceth-as-reth", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		op := ours["roce.bth.opcode"]
		return m.layer == "RETH" && len(ov) == 0 && len(op) == 1 && (op[0] == "19" || op[0] == "20")
	}},
	// A Proposal whose SMC v1 type is NONE (v2 only) still has the v1
	// GID/MAC area, zero-filled by the kernel (smc_clc_send_proposal);
	// tshark calls it Reserved, smcdump prints the zeros.
	{"proposal-v1-area-zero", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		if len(tv) != 0 || len(ov) != 1 || !slices.Equal(ours["smc.clc.type"], []string{"1"}) {
			return false
		}
		return (m.ours[0] == "smc.clc.gid" && ov[0] == "::") ||
			(m.ours[0] == "smc.clc.mac" && ov[0] == "00:00:00:00:00:00")
	}},
	// A Proposal that offers no SMC-D still carries the SMC-D area (struct
	// smc_clc_msg_smcd: native ISM GID and CHID), zero-filled
	// (smc_clc_send_proposal); tshark leaves it out, smcdump prints the zeros.
	{"proposal-smcd-area-zero", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		if len(tv) != 0 || !slices.Equal(ov, []string{"0"}) || !slices.Equal(ours["smc.clc.type"], []string{"1"}) {
			return false
		}
		d := func(f string) bool { v := ours[f]; return len(v) == 1 && (v[0] == "1" || v[0] == "3") }
		return !d("smc.clc.path") && !d("smc.clc.proposal.path_v2") &&
			(m.ours[0] == "smc.clc.proposal.ism_gid" || m.ours[0] == "smc.clc.proposal.ism_chid")
	}},
	// tshark 4.0 dissects less of an SMC-Dv2 CLC message than of an SMC-Rv2 one
	// (struct layouts in net/smc/smc_clc.h; bytes checked in
	// samples/smcd-loopback.pcapng): a Proposal offering SMC-D alone leaves its peer
	// ID and its SMC-Rv2 RoCE GID unnamed (both zero: smc_clc_send_proposal fills
	// them for SMC-R only); an Accept's or Confirm's first-contact extension has no
	// direct bit (SMC-Rv2's, zero here); and a Confirm's extension ends after the host
	// name, without the v2.1 max_conns, max_links and feature_mask that its Accept
	// shows (tshark calls them Reserved there).
	{"smcd-v2-undissected", func(m *mapping, ours, theirs fieldRow, ov, tv []string) bool {
		if m.layer != "CLC" || len(tv) != 0 || len(ov) != 1 {
			return false
		}
		typ := ours["smc.clc.type"]
		proposal := slices.Equal(typ, []string{"1"}) && slices.Equal(ours["smc.clc.proposal.path_v2"], []string{"1"})
		chosen := slices.Equal(ours["smc.clc.path"], []string{"1"})
		switch m.ours[0] {
		case "smc.clc.peer_id":
			return proposal && ov[0] == "0"
		case "smc.clc.proposal.rocev2_gid":
			return proposal && ov[0] == "::"
		case "smc.clc.fce.direct":
			return chosen && ov[0] == "0"
		case "smc.clc.proposal.max_conns", "smc.clc.proposal.max_links", "smc.clc.proposal.feature_mask":
			return chosen && slices.Equal(typ, []string{"3"})
		}
		return false
	}},
}

// wantQuirks is how many frames each exception or derivation must cover in
// each committed capture; an unlisted quirk must cover none. A change in
// either tool that moves these numbers fails the test instead of hiding.
//
// Not listed because no capture has the message: tshark's offsets for SMC
// v1 ADD LINK CONTINUATION and DELETE RKEY (net/smc/smc_llc.h), and
// "llc-v1" below, which counts SMC v1 LLC frames so that a sample with them
// is noticed and the LLC mapping extended.
var wantQuirks = map[string]map[string]int{
	"testdata/reference/pingpong.pcap": {
		"tcp-exid-16bit":          2,    // SYN and SYN-ACK
		"fce-v2.1-reserved":       3,    // Proposal, Accept, Confirm (v2.1)
		"proposal-v1-area-zero":   1,    // the v2-only Proposal
		"proposal-smcd-area-zero": 1,    // the SMC-R-only Proposal
		"llc-v2-undecoded":        25,   // every RC SEND that is not a CDC
		"cdc-type-as-llc-msg":     1023, // every CDC
	},
	"testdata/reference/decline-nordma.pcap": {
		"tcp-exid-16bit":          2, // SYN and SYN-ACK: the server has SMC, only no RoCE device
		"fce-v2.1-reserved":       1, // the Proposal
		"proposal-v1-area-zero":   1,
		"proposal-smcd-area-zero": 1,
	},
	"testdata/reference/fallback-nosmc.pcap": {
		"tcp-exid-16bit": 1, // the SYN; the plain TCP server's SYN-ACK has none
	},
	"testdata/reference/erspan.pcap": { // each frame of the connection and its ERSPAN copy
		"tcp-exid-16bit":          4, // the SYN and SYN-ACK, twice
		"fce-v2.1-reserved":       3, // measured
		"clc-in-seen-bytes":       1, // measured (tshark decodes the Proposal and the Accept in both copies)
		"proposal-v1-area-zero":   1,
		"proposal-smcd-area-zero": 1,
		"llc-v2-undecoded":        33, // the RC SENDs that are not CDCs: 8 LLC messages twice, and the teardown after the mirror stopped
		"cdc-type-as-llc-msg":     84, // every CDC, twice
	},
	"testdata/reference/no-ueid.pcap": {
		"tcp-exid-16bit": 2,
	},
	"testdata/public/linlinw5_rdma_ib_tutorial/rdma_atomic_bw.pcap":    {"atomiceth-as-reth": 5},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__nccl_node0.pcap":  {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__nccl_node1.pcap":  {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__nccl_node2.pcap":  {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__ring2_node0.pcap": {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__ring2_node1.pcap": {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__ring2_node2.pcap": {"immdt-named-twice": 32},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__tree2_node0.pcap": {"immdt-named-twice": 4},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__tree2_node1.pcap": {"immdt-named-twice": 4},
	"testdata/public/linlinw5_rdma_ib_tutorial/nccl__tree2_node2.pcap": {"immdt-named-twice": 8},
}

// wantLayers are the groups that must agree on at least one non-empty
// value in a committed capture, so that the test cannot pass by both tools
// printing nothing. Every RoCE capture of testdata/public needs BTH too.
var wantLayers = map[string][]string{
	"testdata/reference/pingpong.pcap":       {"BTH", "RETH", "AETH", "CLC", "CDC", "TCP"},
	"testdata/reference/decline-nordma.pcap": {"CLC", "TCP"},
	"testdata/reference/fallback-nosmc.pcap": {"TCP"},
	"testdata/reference/no-ueid.pcap":        {"CLC", "TCP"},
	"testdata/reference/erspan.pcap":         {"BTH", "RETH", "AETH", "CLC", "CDC", "TCP"},
}

// setup skips under -short (what says why) or without tshark, and
// otherwise returns tshark's path, the module root and a fresh smcdump.
func setup(t *testing.T, what string) (tshark, root, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip(what + ": skipped with -short")
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: run make test-deps")
	}
	root, err = filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return tshark, root, buildSmcdump(t, root)
}

func TestAgainstTshark(t *testing.T) {
	tshark, root, bin := setup(t, "runs tshark and smcdump on every capture")
	files := captures(t, root)
	checkCatalogue(t, bin)

	ours, theirs := fieldLists()
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			// ICMP off: tshark decodes the packet an ICMP error quotes
			// (erspan.pcap's server answers mirrored frames so), which
			// is no message anybody sent; smcdump leaves it undecoded.
			th := runFields(t, tshark, append([]string{"-n", "-r", f, "--disable-protocol", "rpcordma", "--disable-protocol", "icmp",
				"-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"},
				eFlags(theirs)...)...)
			us := runFields(t, bin, append([]string{"-r", f, "-a", "-T", "fields"}, eFlags(ours)...)...)
			compareCapture(t, rel, th, us)
		})
	}
}

// compareCapture compares every mapping in every frame of one capture.
func compareCapture(t *testing.T, rel string, th, us map[int]fieldRow) {
	t.Helper()
	rel = filepath.ToSlash(rel)
	pinned := strings.HasPrefix(rel, "testdata/") // committed captures; samples/ change with the lab

	frames := make([]int, 0, len(th))
	for n := range th {
		frames = append(frames, n)
	}
	for n := range us {
		if _, ok := th[n]; !ok {
			frames = append(frames, n)
		}
	}
	sort.Ints(frames)

	quirks := map[string]map[int]bool{}
	agree := map[string]int{}
	type diff struct {
		frame  int
		m      *mapping
		ov, tv []string
	}
	var diffs []diff
	for _, n := range frames {
		o, tr := us[n], th[n]
		note := func(q string) {
			if quirks[q] == nil {
				quirks[q] = map[int]bool{}
			}
			quirks[q][n] = true
		}
		if types := o["smc.llc.type"]; len(types) > 0 {
			if u, err := parseUint(types[0]); err == nil && u < 0x20 {
				note("llc-v1")
			}
		}
		for i := range mappings {
			m := &mappings[i]
			ov, oerr := oursValues(m, o)
			tv, terr := theirValues(m, tr, note)
			if oerr == nil && terr == nil && slices.Equal(ov, tv) {
				if len(ov) > 0 {
					agree[m.layer]++
				}
				continue
			}
			excused := false
			if oerr == nil && terr == nil {
				for _, e := range exceptions {
					if e.applies(m, o, tr, ov, tv) {
						note(e.name)
						excused = true
						break
					}
				}
			}
			if !excused {
				if oerr != nil {
					ov = []string{"error: " + oerr.Error()}
				}
				if terr != nil {
					tv = []string{"error: " + terr.Error()}
				}
				diffs = append(diffs, diff{n, m, ov, tv})
			}
		}
	}

	for i, d := range diffs {
		if i == 30 {
			t.Errorf("... and %d more differences", len(diffs)-30)
			break
		}
		t.Errorf("frame %d: %s: smcdump %v (%s) != tshark %v (%s)", d.frame, d.m.layer,
			d.ov, strings.Join(d.m.ours, "+"), d.tv, strings.Join(d.m.theirs, "|"))
	}

	t.Logf("%s: %d frames; agreeing values per layer: %v", rel, len(frames), agree)
	names := make([]string, 0, len(quirks))
	for q := range quirks {
		names = append(names, q)
	}
	sort.Strings(names)
	for _, q := range names {
		t.Logf("%s: quirk %s in %d frames", rel, q, len(quirks[q]))
	}
	if !pinned {
		return
	}
	want := wantQuirks[rel]
	for _, q := range names {
		if len(quirks[q]) != want[q] {
			t.Errorf("quirk %s covers %d frames, want %d: a difference may be hiding behind it", q, len(quirks[q]), want[q])
		}
	}
	for q, n := range want {
		if len(quirks[q]) == 0 && n != 0 {
			t.Errorf("quirk %s covers 0 frames, want %d", q, n)
		}
	}
	layers := wantLayers[rel]
	if strings.HasPrefix(rel, "testdata/public/linlinw5_rdma_ib_tutorial/") {
		layers = append(layers, "BTH")
	}
	for _, l := range layers {
		if agree[l] == 0 {
			t.Errorf("no %s value was compared: both tools printed nothing for it", l)
		}
	}
}

// oursValues concatenates smcdump's values of m.ours in canonical form.
func oursValues(m *mapping, row fieldRow) ([]string, error) {
	var out []string
	for _, f := range m.ours {
		for _, v := range row[f] {
			c, err := canonical(m.kind, true, v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

// theirValues concatenates (or derives) tshark's values in canonical form.
func theirValues(m *mapping, row fieldRow, note func(string)) ([]string, error) {
	var raw []string
	if m.derive != nil {
		raw = m.derive(row, note)
	} else {
		for _, f := range m.theirs {
			raw = append(raw, row[f]...)
		}
	}
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		c, err := canonical(m.kind, false, v)
		if err == nil && m.conv != nil {
			c, err = m.conv(c)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// canonical normalises one printed value so that equal data compare equal.
func canonical(k valKind, ours bool, s string) (string, error) {
	switch k {
	case vUint:
		u, err := parseUint(s)
		return strconv.FormatUint(u, 10), err
	case vBool:
		switch s {
		case "1", "True", "true":
			return "1", nil
		case "0", "False", "false":
			return "0", nil
		}
		return "", fmt.Errorf("not a boolean: %q", s)
	case vAddr:
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", err
		}
		return a.Unmap().String(), nil
	case vMAC:
		return strings.ToLower(strings.ReplaceAll(s, "-", ":")), nil
	case vText:
		return strings.TrimRight(s, " \x00"), nil
	case vUintBytes, vU64Bytes:
		if (k == vUintBytes) == ours {
			u, err := parseUint(s)
			return strconv.FormatUint(u, 10), err
		}
		u, err := strconv.ParseUint(strings.ReplaceAll(s, ":", ""), 16, 64)
		return strconv.FormatUint(u, 10), err
	}
	return "", fmt.Errorf("unknown kind %d", k)
}

// parseUint reads decimal or 0x hex, as both tools print numbers.
func parseUint(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// fieldLists returns the -e lists of both tools, frame.number first.
func fieldLists() (ours, theirs []string) {
	// The CLC types offered and chosen are compared by no mapping; the exceptions
	// read them to know an SMC-D message.
	// tcp.analysis.retransmission: tshark's word that a segment's bytes
	// came before (the clc-in-seen-bytes exception reads it).
	ours, theirs = []string{"frame.number", "smc.clc.path", "smc.clc.proposal.path_v2"}, []string{"frame.number", "tcp.analysis.retransmission"}
	for _, m := range mappings {
		for _, f := range m.ours {
			if !slices.Contains(ours, f) {
				ours = append(ours, f)
			}
		}
		for _, f := range m.theirs {
			if !slices.Contains(theirs, f) {
				theirs = append(theirs, f)
			}
		}
	}
	return ours, theirs
}

func eFlags(fields []string) []string {
	out := make([]string, 0, 2*len(fields))
	for _, f := range fields {
		out = append(out, "-e", f)
	}
	return out
}

// runFields runs a tool in -T fields mode and parses its tab-separated,
// comma-aggregated lines into rows keyed by frame number. The -e list is
// recovered from args.
func runFields(t *testing.T, bin string, args ...string) map[int]fieldRow {
	t.Helper()
	var fields []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "-e" {
			fields = append(fields, args[i+1])
		}
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s (%d fields): %v\n%s", filepath.Base(bin), len(fields), err, stderr.String())
	}
	rows := map[int]fieldRow{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		n, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatalf("%s: line without a frame number: %q", filepath.Base(bin), sc.Text())
		}
		row := fieldRow{}
		for i, c := range cols[1:] {
			if c == "" || i+1 >= len(fields) {
				continue
			}
			row[fields[i+1]] = strings.Split(c, ",")
		}
		rows[n] = row
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// captures lists every capture the test compares.
func captures(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{
		"testdata/reference/*.pcap",
		"testdata/public/*/*.pcap",
		"samples/*.pcap", "samples/*.pcapng",
	} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no captures found under testdata/")
	}
	return files
}

// buildSmcdump builds the command under test into a temporary directory.
func buildSmcdump(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "smcdump")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/smcdump")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/smcdump: %v\n%s", err, out)
	}
	// go test caches a passing result by the files the test process
	// touched, and the sources read by the go build child are not among
	// them. Stat them here, so that an edit anywhere in the module makes
	// a cached "ok" stale.
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			_, err = os.Stat(p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// checkCatalogue fails when a mapped smcdump field is not in smcdump's
// catalogue, so that a renamed field cannot turn a comparison into a
// silent "both empty".
func checkCatalogue(t *testing.T, bin string) {
	t.Helper()
	out, err := exec.Command(bin, "-G", "fields").Output()
	if err != nil {
		t.Fatalf("smcdump -G fields: %v", err)
	}
	known := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		for _, w := range strings.Fields(line) {
			known[w] = true
		}
	}
	ours, _ := fieldLists()
	for _, f := range ours {
		if !known[f] {
			t.Errorf("field %s is not in smcdump -G fields: update the mapping", f)
		}
	}
}
