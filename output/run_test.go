package output

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
)

const (
	ref        = "../testdata/reference/"
	pingpong   = ref + "pingpong.pcap"
	declineRDM = ref + "decline-nordma.pcap"
	fallback   = ref + "fallback-nosmc.pcap"
	noUEID     = ref + "no-ueid.pcap"
)

func run(t *testing.T, o Options) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	o.Stdout, o.Stderr = &out, &errb
	err := Run(context.Background(), o)
	return out.String(), errb.String(), err
}

// lineOf returns the text lines of frame n.
func linesOf(out string, n int) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("%d  ", n)) {
			ls = append(ls, l)
		}
	}
	return ls
}

func TestTextGolden(t *testing.T) {
	tests := []struct {
		file  string
		frame int
		want  []string // substrings of the frame's line
	}{
		{declineRDM, 5, []string{"10.10.0.2:55036 -> 10.10.0.1:5000", "TCP", "[SYN]", "SMC option"}},
		{declineRDM, 8, []string{"CLC Proposal", "SMC-Rv2", `"SMC-LAB-UEID"`}},
		{declineRDM, 10, []string{"10.10.0.1:5000 -> 10.10.0.2:55036", "CLC Decline", "0x03030002 NOSMCRDEV"}},
		{noUEID, 8, []string{"CLC Decline", "0x03030000"}},
		{fallback, 6, []string{"[SYN, ACK]", "no SMC option"}},
		{pingpong, 10, []string{"CLC Accept", "first-contact", "QPN 0x11", "rkey 0x3a9"}},
		{pingpong, 12, []string{"CLC Confirm", "PSN 0xddf8a0"}},
		{pingpong, 14, []string{"LLC", "CONFIRM_LINK_V2", "SEND Only", "PSN 0xa6ac2e"}},
		{pingpong, 22, []string{"RoCE  RC RDMA WRITE Only", "rkey 0x3a9", "len 24"}},
		{pingpong, 23, []string{"10.10.0.2 -> 10.10.0.1  CDC  CDC seq 1 token 1 prod 0/24"}},
		{pingpong, 24, []string{"RoCE  RC ACK", "PSN 0xddf8a2"}},
	}
	outs := map[string]string{}
	for _, tt := range tests {
		out, ok := outs[tt.file]
		if !ok {
			var err error
			out, _, err = run(t, Options{Read: tt.file})
			if err != nil {
				t.Fatal(err)
			}
			outs[tt.file] = out
		}
		ls := linesOf(out, tt.frame)
		if len(ls) != 1 {
			t.Errorf("%s frame %d: %d lines %q", tt.file, tt.frame, len(ls), ls)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(ls[0], w) {
				t.Errorf("%s frame %d: line %q lacks %q", tt.file, tt.frame, ls[0], w)
			}
		}
	}
	// Not SMC-relevant: the fallback's application data (frame 8) and pure
	// ACKs are hidden unless -a.
	if ls := linesOf(outs[fallback], 8); len(ls) != 0 {
		t.Errorf("fallback frame 8 shown without -a: %q", ls)
	}
	all, _, err := run(t, Options{Read: fallback, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(all, "\n"); n != 74 {
		t.Errorf("-a printed %d lines, want 74", n)
	}
	if ls := linesOf(all, 8); len(ls) != 1 || !strings.Contains(ls[0], "len 24") {
		t.Errorf("-a frame 8: %q", ls)
	}
}

func TestCount(t *testing.T) {
	out, _, err := run(t, Options{Read: pingpong, Count: 7})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 7 {
		t.Errorf("-c 7 printed %d lines", n)
	}
}

func TestVerboseAndHex(t *testing.T) {
	out, _, err := run(t, Options{Read: declineRDM, Verbose: true, Hex: true, DisplayFilter: "smc.clc.type == 4"})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"10  ", "CLC Decline",
		"  SMC CLC (smc.clc)\n",
		"smc.clc.decline.reason = 0x", "3030002 (NOSMCRDEV)",
		"tcp.srcport = 5000",
		"0000  52 54 00 0a 00 02 52 54  00 0a 00 01 08 00 45 00  RT....RT......E.",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("-V -x output lacks %q", w)
		}
	}
	if strings.Contains(out, "CLC Proposal") {
		t.Error("-Y smc.clc.type == 4 let the Proposal through")
	}
}

func TestFields(t *testing.T) {
	out, _, err := run(t, Options{Read: pingpong, Format: FormatFields,
		Fields: []string{"frame.number", "smc.clc.type", "ip.src", "tcp.flags.syn"}, Separator: ";", Header: true,
		DisplayFilter: "tcp"})
	if err != nil {
		t.Fatal(err)
	}
	want := "frame.number;smc.clc.type;ip.src;tcp.flags.syn\n" +
		"5;;10.10.0.2;1\n6;;10.10.0.1;1\n8;1;10.10.0.2;0\n10;2;10.10.0.1;0\n12;3;10.10.0.2;0\n"
	if out != want {
		t.Errorf("fields output:\n%s\nwant:\n%s", out, want)
	}
	// A field with several values in one frame is joined by ','.
	out, _, err = run(t, Options{Read: pingpong, Format: FormatFields, Fields: []string{"frame.number", "roce.bth.psn"},
		DisplayFilter: "frame.number == 23"})
	if err != nil || out != "23\t14547107\n" {
		t.Errorf("got %q %v", out, err)
	}
}

func TestFieldsMultipleValues(t *testing.T) {
	// The Confirm carries a GID list; each CLC has several GID fields,
	// and vlan-less frames have none: joined values, empty column.
	out, _, err := run(t, Options{Read: pingpong, Format: FormatFields, Fields: []string{"frame.number", "vlan.id", "smc.clc.type", "smc.clc.type"},
		DisplayFilter: "smc.clc"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "8\t\t1\t1\n10\t\t2\t2\n12\t\t3\t3\n" {
		t.Errorf("got %q", out)
	}
}

func TestJSON(t *testing.T) {
	for _, f := range []Format{FormatJSON, FormatJSONL} {
		out, _, err := run(t, Options{Read: declineRDM, Format: f, All: true})
		if err != nil {
			t.Fatal(err)
		}
		var objs []map[string]any
		if f == FormatJSON {
			if err := json.Unmarshal([]byte(out), &objs); err != nil {
				t.Fatalf("-T json invalid: %v", err)
			}
		} else {
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("-T jsonl line invalid: %v: %s", err, l)
				}
				objs = append(objs, m)
			}
		}
		if len(objs) != 76 {
			t.Fatalf("%s: %d objects, want 76", f, len(objs))
		}
		d := objs[9]
		if d["frame.number"] != 10.0 || d["smc.clc.decline.reason"] != float64(0x03030002) || d["tcp.smc_option"] != nil {
			t.Errorf("%s frame 10: %v", f, d)
		}
		if s := fmt.Sprint(d["_summary"]); !strings.Contains(s, "NOSMCRDEV") {
			t.Errorf("%s frame 10 summary %s", f, s)
		}
	}
}

// TestJSONClosedOnError: a truncated file ends the run with an error, but
// the JSON array written so far is complete.
func TestJSONClosedOnError(t *testing.T) {
	b, err := os.ReadFile(pingpong)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(p, b[:3000], 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, Options{Read: p, Format: FormatJSON, All: true})
	if !errors.Is(err, capture.ErrTruncatedFile) || ExitCode(err) != 2 {
		t.Fatalf("error %v (exit %d)", err, ExitCode(err))
	}
	var objs []map[string]any
	if err := json.Unmarshal([]byte(out), &objs); err != nil || len(objs) == 0 {
		t.Fatalf("JSON after truncation invalid (%v): %q", err, out)
	}
	// Cancellation (interrupt) closes it too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var buf bytes.Buffer
	if err := Run(ctx, Options{Read: pingpong, Format: FormatJSON, Stdout: &buf, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &objs); err != nil {
		t.Fatalf("JSON after cancel invalid: %v: %q", err, buf.String())
	}
}

// A field asked for by its Wireshark name is the field, and the header
// says the name asked for, as tshark's does.
func TestFieldsWiresharkName(t *testing.T) {
	ours, _, err := run(t, Options{Read: pingpong, Format: FormatFields, Header: true, Fields: []string{"roce.bth.psn", "tcp.flags.rst"}})
	if err != nil {
		t.Fatal(err)
	}
	theirs, _, err := run(t, Options{Read: pingpong, Format: FormatFields, Header: true, Fields: []string{"infiniband.bth.psn", "tcp.flags.reset"}})
	if err != nil {
		t.Fatal(err)
	}
	oh, ob, _ := strings.Cut(ours, "\n")
	th, tb, _ := strings.Cut(theirs, "\n")
	if th != "infiniband.bth.psn\ttcp.flags.reset" || oh != "roce.bth.psn\ttcp.flags.rst" {
		t.Errorf("headers %q and %q", oh, th)
	}
	if ob != tb || len(ob) == 0 {
		t.Errorf("the two spellings print different columns (%d and %d bytes)", len(ob), len(tb))
	}
}

func TestGlossary(t *testing.T) {
	out, _, err := run(t, Options{Glossary: "fields"})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	names := 0
	for _, d := range decode.Fields() {
		names++
		if d.Wireshark != "" {
			names++
		}
	}
	if len(lines) != names {
		t.Fatalf("%d lines for %d field names", len(lines), names)
	}
	if !slices.IsSorted(lines) {
		t.Error("-G fields is not sorted by name")
	}
	want := map[string]bool{"frame.number\tuint\t": false, "smc.cdc.seq\tuint\t": false, "ip.src\taddress\t": false, "tcp.smc_option\tbool\t": false,
		"tcp.flags.reset\tbool\tWireshark's name for tcp.flags.rst": false, "infiniband.bth.psn\tuint\tWireshark's name for roce.bth.psn": false}
	for _, l := range lines {
		if strings.Count(l, "\t") != 2 {
			t.Errorf("line %q: want name<TAB>type<TAB>description", l)
		}
		for w := range want {
			if strings.HasPrefix(l, w) {
				want[w] = true
			}
		}
	}
	for w, ok := range want {
		if !ok {
			t.Errorf("-G fields lacks %q", w)
		}
	}
	if _, _, err := run(t, Options{Glossary: "protocols"}); ExitCode(err) != 2 {
		t.Errorf("-G protocols: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{}, "nothing to read"},
		{Options{Read: pingpong, Iface: "lo"}, "exclude"},
		{Options{Read: pingpong, Format: FormatFields}, "needs at least one -e"},
		{Options{Read: pingpong, Format: FormatFields, Fields: []string{"smc.nope"}}, `-e "smc.nope": unknown field`},
		{Options{Read: pingpong, Fields: []string{"ip.src"}}, "-e needs -T fields"},
		{Options{Read: pingpong, Format: "xml"}, `-T "xml"`},
		{Options{Read: pingpong, DisplayFilter: "smc.clc.type =="}, "-Y: "},
		{Options{Read: pingpong, CaptureFilter: "tcp"}, "-f is a capture filter for -i"},
		{Options{Read: pingpong, Views: []string{"smc,conns"}}, "-z"},
		{Options{Read: pingpong, Jobs: -1}, "-j -1: want a number of goroutines"},
		{Options{Read: pingpong, Jobs: 1000000}, "-j 1000000: at most 256 goroutines"},
	}
	for _, tt := range tests {
		_, _, err := run(t, tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
			t.Errorf("%+v: error %v (exit %d), want %q and exit 2", tt.o, err, ExitCode(err), tt.want)
		}
	}
	var o Options
	for _, bad := range []string{"separator", "header=maybe", "quote=x", "occurrence=2", "bogus=1"} {
		if err := o.ParseSeparatorOption(bad); err == nil {
			t.Errorf("-E %s accepted", bad)
		}
	}
	if err := o.ParseSeparatorOption("separator=/t"); err != nil || o.Separator != "\t" {
		t.Errorf("separator=/t: %v %q", err, o.Separator)
	}
}

func TestBadFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pcap")
	os.WriteFile(empty, nil, 0o644)
	tests := []struct {
		path, want string
		code       int
	}{
		{empty, "empty.pcap: empty file", 1},
		{ref + "README.md", "not a capture file", 1},
		{filepath.Join(dir, "missing.pcap"), "no such file", 1},
	}
	for _, tt := range tests {
		_, _, err := run(t, Options{Read: tt.path})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v", tt.path, err)
		}
		if c := ExitCode(err); c != tt.code {
			t.Errorf("%s: exit %d, want %d", tt.path, c, tt.code)
		}
	}
}

// TestWriteSelected: -w saves the selected frames as pcapng that reads back.
func TestWriteSelected(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.pcapng")
	out, _, err := run(t, Options{Read: pingpong, Write: p, DisplayFilter: "smc.clc or smc.llc"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "" {
		t.Errorf("-w alone printed %q", out)
	}
	out, _, err = run(t, Options{Read: p})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "CLC Proposal") || !strings.Contains(out, "CONFIRM_LINK_V2") || strings.Contains(out, "CDC seq") {
		t.Errorf("re-read of -w output:\n%s", out)
	}
}

// fakeTracker counts frames and adds one field the capture does not fill.
type fakeTracker struct {
	n     int
	specs []string
}

var fFake = decode.Field(decode.OwnerTrack, "zz.test.seen", decode.KindUint, "frames fed to the test tracker so far")

func (t *fakeTracker) Feed(f *capture.Frame) { t.n++ }
func (t *fakeTracker) AppendFields(f *capture.Frame, r *decode.Record) {
	r.AddUint(fFake, uint64(t.n))
}
func (t *fakeTracker) WriteViews(w io.Writer, specs []string, format string) error {
	_, err := fmt.Fprintf(w, "%s view %v saw %d frames\n", format, specs, t.n)
	return err
}

func TestTrackerHook(t *testing.T) {
	var made []*fakeTracker
	newT := func(specs []string) (Tracker, error) {
		ft := &fakeTracker{specs: specs}
		made = append(made, ft)
		return ft, nil
	}
	// -z: the tracker sees every frame, not only the selected ones.
	out, _, err := run(t, Options{Read: fallback, Views: []string{"smc,conns"}, NewTracker: newT})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out, "text view [smc,conns] saw 74 frames\n") {
		t.Errorf("output tail: %q", out[max(0, len(out)-80):])
	}
	out, _, err = run(t, Options{Read: fallback, Quiet: true, Views: []string{"smc,conns"}, NewTracker: newT})
	if err != nil || out != "text view [smc,conns] saw 74 frames\n" {
		t.Errorf("-q -z output %q (%v)", out, err)
	}
	// Tracker fields in -Y and -e make Run create a tracker and add them.
	out, _, err = run(t, Options{Read: fallback, Format: FormatFields, Fields: []string{"frame.number", "zz.test.seen"},
		DisplayFilter: "zz.test.seen == 6", All: true, NewTracker: newT})
	if err != nil || out != "6\t6\n" {
		t.Errorf("tracker field: %q %v", out, err)
	}
	// Plain text needs no tracker.
	n := len(made)
	if _, _, err := run(t, Options{Read: fallback, NewTracker: newT}); err != nil || len(made) != n {
		t.Errorf("a tracker was made for plain text output (%v)", err)
	}
	if _, _, err := run(t, Options{Read: fallback, Views: []string{"x"}}); ExitCode(err) != 2 {
		t.Errorf("-z without a tracker: %v", err)
	}
}

// TestProblemsShown: frames cut by the snap length and RoCE frames with a
// wrong ICRC are printed, flagged, and the run goes on. The line names
// what explains a wrong ICRC: one byte, or a CDC's or LLC message's bytes
// its sender sends as zeros (and one byte more).
func TestProblemsShown(t *testing.T) {
	const cdc = 14 + 20 + 8 + 12
	p := rewriteFrames(t, pingpong, 31, func(n int, data []byte, ci *gopacket.CaptureInfo) []byte {
		switch n {
		case 14: // CONFIRM_LINK with two reserved bytes damaged (the LLC message is where a CDC would be)
			data[cdc+38] ^= 0x11
			data[cdc+41] ^= 0x22
		case 27: // CDC with two reserved bytes damaged
			data[cdc+30] ^= 0x6A
			data[cdc+40] ^= 0x56
		case 22: // WRITE ONLY cut to 80 of its 98 bytes
			data, ci.CaptureLength = data[:80], 80
		case 23: // CDC with one payload bit flipped: the ICRC no longer matches
			data[70] ^= 0x01
		case 31: // CDC with two reserved bytes and its producer count damaged
			data[cdc+8] ^= 0x11
			data[cdc+33] ^= 0x20
			data[cdc+15] ^= 0x04
		}
		return data
	})
	text, _, err := run(t, Options{Read: p})
	if err != nil {
		t.Fatal(err)
	}
	if l := linesOf(text, 22); len(l) != 1 || !strings.Contains(l[0], "[cut by snaplen: 80 of 98 bytes]") {
		t.Errorf("frame 22: %q", l)
	}
	if l := linesOf(text, 23); len(l) != 1 || !strings.Contains(l[0], ": byte 70 sent as 0x00]") {
		t.Errorf("frame 23: %q", l)
	}
	if l := linesOf(text, 14); len(l) != 1 || !strings.HasSuffix(l[0], ": LLC reserved bytes sent as zeros]") {
		t.Errorf("frame 14: %q", l)
	}
	if l := linesOf(text, 27); len(l) != 1 || !strings.HasSuffix(l[0], ": CDC reserved bytes sent as zeros]") {
		t.Errorf("frame 27: %q", l)
	}
	if l := linesOf(text, 31); len(l) != 1 || !strings.Contains(l[0], "prod 0/68 ") ||
		!strings.HasSuffix(l[0], ": CDC reserved bytes sent as zeros, byte 69 sent as 0x40]") {
		t.Errorf("frame 31: %q", l)
	}
	if l := linesOf(text, 30); len(l) != 1 {
		t.Errorf("the run stopped before frame 30")
	}
	fields, _, err := run(t, Options{Read: p, Format: FormatFields, Fields: []string{"frame.number", "roce.icrc.ok", "frame.cut"},
		DisplayFilter: "roce.icrc.ok == 0 or frame.cut"})
	if err != nil || fields != "14\t0\t\n22\t\t1\n23\t0\t\n27\t0\t\n31\t0\t\n" {
		t.Errorf("fields %q %v", fields, err)
	}
}

// TestTCPHeaderCutShown: a segment whose TCP header the snap length cut
// inside its options is a TCP line (ports, flags, the payload's length on
// the wire), the SMC option of a SYN unknown, not absent; as tshark shows
// it, and -T fields with it.
func TestTCPHeaderCutShown(t *testing.T) {
	p := rewriteFrames(t, fallback, 10, func(n int, data []byte, ci *gopacket.CaptureInfo) []byte {
		switch n {
		case 5: // SYN cut to 64 of its 82 bytes: MSS and SACK_PERM kept
			data, ci.CaptureLength = data[:64], 64
		case 10: // a data segment cut to 60: 6 bytes of its options
			data, ci.CaptureLength = data[:60], 60
		}
		return data
	})
	text, _, err := run(t, Options{Read: p, All: true})
	if err != nil {
		t.Fatal(err)
	}
	if l := linesOf(text, 5); len(l) != 1 || !strings.Contains(l[0], ":39008 -> 10.10.0.1:5000  TCP  [SYN] seq 3201529688 len 0 SMC option not captured (options cut) [cut by snaplen: 64 of 82 bytes]") {
		t.Errorf("frame 5: %q", l)
	}
	if l := linesOf(text, 10); len(l) != 1 || !strings.Contains(l[0], "TCP  [PSH, ACK] seq 3201529713 len 64 [cut by snaplen: 60 of 130 bytes]") {
		t.Errorf("frame 10: %q", l)
	}
	fields, _, err := run(t, Options{Read: p, Format: FormatFields, All: true,
		Fields: []string{"frame.number", "tcp.srcport", "tcp.flags.syn", "tcp.len", "tcp.smc_option"}, DisplayFilter: "frame.cut"})
	if err != nil || fields != "5\t39008\t1\t0\t\n10\t39008\t0\t64\t\n" {
		t.Errorf("fields %q %v", fields, err)
	}
}

func TestFieldsJoinedValues(t *testing.T) {
	out, _, err := run(t, Options{Read: declineRDM, Format: FormatFields,
		Fields: []string{"frame.number", "smc.clc.decline.extra_diag", "smc.clc.type"}, DisplayFilter: "smc.clc.type == 4"})
	if err != nil || out != "10\t0,0,0,0\t4\n" {
		t.Errorf("got %q %v", out, err)
	}
}

// TestTwoCLCInOneSegment: a segment completing two CLC messages prints one
// line for each, under the same frame number. The bytes are pingpong's
// Proposal and Confirm, re-sent in one segment after the real Accept.
func TestTwoCLCInOneSegment(t *testing.T) {
	frames := readFrames(t, pingpong, 12)
	pkt := func(i int) gopacket.Packet {
		return gopacket.NewPacket(frames[i].Data, layers.LayerTypeEthernet, gopacket.Default)
	}
	p8 := pkt(7)
	eth := *p8.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := *p8.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := *p8.Layer(layers.LayerTypeTCP).(*layers.TCP)
	payload := append(append([]byte(nil), tcp.Payload...), pkt(11).Layer(layers.LayerTypeTCP).(*layers.TCP).Payload...)
	tcp.SetNetworkLayerForChecksum(&ip)
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		&eth, &ip, &tcp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	merged := buf.Bytes()

	ci := frames[11].CI
	ci.CaptureLength, ci.Length = len(merged), len(merged)
	// SYN, SYN-ACK, ACK, Accept, then the merged segment.
	p := writeFrames(t, "merged.pcap", []rawFrame{frames[4], frames[5], frames[6], frames[9], {CI: ci, Data: merged}})

	text, _, err := run(t, Options{Read: p})
	if err != nil {
		t.Fatal(err)
	}
	ls := linesOf(text, 5)
	if len(ls) != 2 || !strings.Contains(ls[0], "CLC Proposal") || !strings.Contains(ls[1], "CLC Confirm") {
		t.Errorf("frame 5 lines: %q", ls)
	}
	tree, _, err := run(t, Options{Read: p, Verbose: true, DisplayFilter: "frame.number == 5"})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(tree, "  SMC CLC (smc.clc)\n"); n != 2 {
		t.Errorf("-V shows %d CLC groups for two messages", n)
	}
	if ls := linesOf(text, 4); len(ls) != 1 || !strings.Contains(ls[0], "CLC Accept") {
		t.Errorf("frame 4 lines: %q", ls)
	}
}

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := progress{on: true, w: &buf, prefix: "smcdump: "}
	p.tick(1 << 16) // last is zero: long ago
	p.tick(1<<16 + 1)
	p.clear()
	if got := buf.String(); got != "\rsmcdump: 65536 frames read\r\033[K" {
		t.Errorf("progress output %q", got)
	}
	buf.Reset()
	off := progress{w: &buf}
	off.tick(1 << 16)
	off.clear()
	if buf.Len() != 0 {
		t.Errorf("progress printed while off: %q", buf.String())
	}
}

func TestFieldsEOptions(t *testing.T) {
	base := Options{Read: declineRDM, Format: FormatFields,
		Fields: []string{"frame.number", "smc.clc.decline.extra_diag", "vlan.id"}, DisplayFilter: "smc.clc.type == 4"}
	tests := []struct {
		opts []string
		want string
	}{
		{nil, "10\t0,0,0,0\t\n"},
		{[]string{"aggregator=/s", "separator=;"}, "10;0 0 0 0;\n"},
		{[]string{"occurrence=f"}, "10\t0\t\n"},
		{[]string{"occurrence=l", "quote=d"}, "\"10\"\t\"0\"\t\n"},
		{[]string{"quote=s", "header=y", "separator=,"}, "frame.number,smc.clc.decline.extra_diag,vlan.id\n'10','0,0,0,0',\n"},
	}
	for _, tt := range tests {
		o := base
		for _, e := range tt.opts {
			if err := o.ParseSeparatorOption(e); err != nil {
				t.Fatal(err)
			}
		}
		out, _, err := run(t, o)
		if err != nil || out != tt.want {
			t.Errorf("-E %v: got %q (%v), want %q", tt.opts, out, err, tt.want)
		}
	}
}

// jsonTracker writes a JSON view, as track does with format "json".
type jsonTracker struct{ fakeTracker }

func (t *jsonTracker) WriteViews(w io.Writer, specs []string, format string) error {
	_, err := fmt.Fprintf(w, "{\n  \"view\": %q,\n  \"format\": %q,\n  \"frames\": %d\n}\n", specs[0], format, t.n)
	return err
}

// TestJSONWithViews: -T json with -z stays one JSON value, -T jsonl gives
// each view its own line, and -q leaves the frames out of both.
func TestJSONWithViews(t *testing.T) {
	newT := func([]string) (Tracker, error) { return &jsonTracker{}, nil }
	views := []string{"smc,conns", "smc,decline"}
	for _, quiet := range []bool{false, true} {
		out, _, err := run(t, Options{Read: declineRDM, Format: FormatJSON, All: true, Quiet: quiet, Views: views, NewTracker: newT})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Frames []map[string]any          `json:"frames"`
			Views  map[string]map[string]any `json:"views"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("-T json -z (quiet %v) is not one JSON value: %v\n%s", quiet, err, out)
		}
		wantFrames := 76
		if quiet {
			wantFrames = 0
		}
		if len(doc.Frames) != wantFrames || len(doc.Views) != 2 || doc.Views["smc,decline"]["format"] != "json" ||
			doc.Views["smc,conns"]["frames"] != 76.0 {
			t.Errorf("quiet %v: %d frames, views %v", quiet, len(doc.Frames), doc.Views)
		}
	}
	out, _, err := run(t, Options{Read: declineRDM, Format: FormatJSONL, All: true, Views: views, NewTracker: newT})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 76+2 {
		t.Fatalf("-T jsonl -z: %d lines, want 78", len(lines))
	}
	for i, l := range lines[76:] {
		var v struct {
			View string         `json:"view"`
			Data map[string]any `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil || v.View != views[i] || v.Data["frames"] != 76.0 {
			t.Errorf("view line %q: %+v %v", l, v, err)
		}
	}
}

// TestKnownQPDecodesSMC: a SEND on a queue pair known (from the CLC
// handshake) as an SMC-R link is decoded as SMC even when the payload classifier rejects it, so a
// malformed message is reported as an SMC error instead of passing as opaque
// RDMA data. Frame 23 of pingpong.pcap is a CDC; its length byte is changed
// from 44 to 45.
func TestKnownQPDecodesSMC(t *testing.T) {
	p := rewriteFrames(t, pingpong, 30, func(n int, data []byte, _ *gopacket.CaptureInfo) []byte {
		if n == 23 {
			const cdcLen = 14 + 20 + 8 + 12 + 1 // Ethernet, IPv4, UDP, BTH, then the CDC type byte
			if data[cdcLen-1] != 0xFE || data[cdcLen] != 44 {
				t.Fatalf("frame 23 is not the CDC expected: % x", data[cdcLen-1:cdcLen+1])
			}
			data[cdcLen] = 45
		}
		return data
	})
	opts := Options{Read: p, Format: FormatFields, Fields: []string{"smc.cdc.seq", "frame.error"},
		DisplayFilter: "frame.number == 23", All: true}
	// Without the tracker too: the reader learned the QP from the CLC handshake.
	got, _, err := run(t, opts)
	if err != nil || got != "\tCDC: offset 1 (length): bad length: length 45, want 44\n" {
		t.Errorf("without tracker: %q %v", got, err)
	}
	opts.Views, opts.Quiet = nil, false
	opts.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
	opts.Fields = append(opts.Fields, "smc.conn.id") // a tracker field makes Run feed the tracker
	got, _, err = run(t, opts)
	if err != nil || !strings.HasPrefix(got, "\tCDC") || !strings.Contains(got, "bad length") {
		t.Errorf("with tracker: %q %v, want a CDC length error", got, err)
	}
}

// rawFrame is one frame of a capture (the shared test helper's type).
type rawFrame = testutil.Packet

// readFrames returns the first n frames of a real capture, or all of them
// when n < 0.
func readFrames(t testing.TB, src string, n int) []rawFrame {
	t.Helper()
	fs, _ := testutil.ReadFrames(t, src)
	if n >= 0 {
		if n > len(fs) {
			t.Fatalf("%s has %d frames, want %d", src, len(fs), n)
		}
		fs = fs[:n]
	}
	return fs
}

// writeFrames writes frames as an Ethernet pcap called name in t.TempDir()
// and returns its path.
func writeFrames(t testing.TB, name string, fs []rawFrame) string {
	t.Helper()
	return testutil.WriteFrames(t, name, layers.LinkTypeEthernet, fs)
}

// rewriteFrames copies the first n frames of a real capture into a new pcap
// in t.TempDir(), letting edit change a frame (it returns the new bytes).
func rewriteFrames(t *testing.T, src string, n int, edit func(n int, data []byte, ci *gopacket.CaptureInfo) []byte) string {
	t.Helper()
	fs := readFrames(t, src, n)
	for i := range fs {
		fs[i].Data = edit(i+1, fs[i].Data, &fs[i].CI)
	}
	return writeFrames(t, "edited.pcap", fs)
}

// TestAppendJSONString: escapes, multi-byte runes and invalid UTF-8, the
// same for string and []byte input.
func TestAppendJSONString(t *testing.T) {
	in := "a\"b\\c\x01é€\xffz\xe2\x82"
	want := `"a\"b\\c\u0001é€\ufffdz\ufffd\ufffd"`
	if got := string(appendJSONString(nil, in)); got != want {
		t.Errorf("string: %s, want %s", got, want)
	}
	if got := string(appendJSONString(nil, []byte(in))); got != want {
		t.Errorf("[]byte: %s, want %s", got, want)
	}
	var s string
	if err := json.Unmarshal([]byte(want), &s); err != nil || s != "a\"b\\c\x01é€\ufffdz\ufffd\ufffd" {
		t.Errorf("not JSON for %q: %q %v", in, s, err)
	}
}

// TestQuietAllFormats: -q prints no frame in any format (only -z views).
func TestQuietAllFormats(t *testing.T) {
	for _, f := range []Format{FormatText, FormatJSON, FormatJSONL, FormatFields} {
		o := Options{Read: declineRDM, Format: f, Quiet: true, All: true}
		if f == FormatFields {
			o.Fields = []string{"frame.number"}
		}
		out, _, err := run(t, o)
		if err != nil || out != "" {
			t.Errorf("-q -T %s printed %q (%v)", f, out, err)
		}
	}
}

// TestFrameContains: -Y "frame contains" searches the frames' bytes: the
// EBCDIC "SMCR" (e2 d4 c3 d9) is in pingpong.pcap's SYN options and its
// three CLC segments, the ASCII "SMCR" nowhere.
func TestFrameContains(t *testing.T) {
	for expr, want := range map[string]string{
		`frame contains e2:d4:c3:d9`:                    "5\t\n6\t\n8\t1\n10\t2\n12\t3\n",
		`frame contains "\xe2\xd4\xc3\xd9" and smc.clc`: "8\t1\n10\t2\n12\t3\n",
		`frame contains "SMCR"`:                         "",
	} {
		out, _, err := run(t, Options{Read: pingpong, Format: FormatFields, Fields: []string{"frame.number", "smc.clc.type"}, DisplayFilter: expr})
		if err != nil || out != want {
			t.Errorf("%s: %q %v, want %q", expr, out, err, want)
		}
	}
}

// TestFieldsJoinedTextQuoted: several values joined in a column stay
// apart when one of them holds the aggregator: expert messages hold
// commas (issue 28, point 8). A value without one is written as it is,
// and -E quote (the whole column quoted, tshark's option) is left alone.
func TestFieldsJoinedTextQuoted(t *testing.T) {
	path := crafted.ExpertVector(t, "option-echoed").Build(t)
	o := Options{Read: path, Format: FormatFields, Fields: []string{"frame.number", "smc.expert.message", "smc.expert.id"},
		DisplayFilter: "frame.number == 8", NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) }}
	out, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	want := "8\t\"the connection fell back to TCP: a CLC Decline, or a peer without the SMC option\"," +
		"both SYNs carried the SMC option but no CLC message followed: a middlebox echoed the option for a peer that does not speak SMC" +
		"\tsmc.fallback,smc.option.echoed_no_clc\n"
	if out != want {
		t.Errorf("got  %q\nwant %q", out, want)
	}
}

// TestVerboseOneNodePerLayer: -V shows each layer once per message: the
// ICRC's value (added with the BTH) and its verdict (added after the
// headers that follow) are one "RoCE ICRC" node (issue 28, point 8).
func TestVerboseOneNodePerLayer(t *testing.T) {
	out, _, err := run(t, Options{Read: pingpong, Verbose: true, Count: 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, frame := range strings.Split(out, "\n\n") {
		seen := map[string]bool{}
		for _, line := range strings.Split(frame, "\n") {
			if !strings.HasPrefix(line, "  ") || strings.HasPrefix(line, "      ") {
				continue
			}
			if seen[line] && !strings.Contains(line, "(smc.clc)") {
				t.Errorf("heading %q twice in\n%s", line, frame)
				return
			}
			seen[line] = true
		}
	}
	if !strings.Contains(out, "  RoCE ICRC (roce.icrc)\n      roce.icrc = 0x") || !strings.Contains(out, ")\n      roce.icrc.ok = 1") {
		t.Errorf("ICRC node lacks its value or verdict")
	}
}

// TestNoSMCFrames: a capture none of whose frames is SMC (here
// pingpong.pcap with 4 bytes chopped off each frame's start, as
// editcap -C 4 does: no frame's EtherType is where Ethernet's is) prints
// no line; the run says why on stderr, once, on one goroutine or two,
// and says nothing with -a, -Y or -q, or when one frame is shown.
func TestNoSMCFrames(t *testing.T) {
	frames, lt := testutil.ReadFrames(t, pingpong)
	for i := range frames {
		frames[i].Data = frames[i].Data[4:]
		frames[i].CI.CaptureLength -= 4
		frames[i].CI.Length -= 4
	}
	chopped := testutil.WriteFrames(t, "chopped.pcap", lt, frames)
	for _, o := range []Options{{Read: chopped}, {Read: chopped, Jobs: 2}, {Read: chopped, Format: FormatFields, Fields: []string{"frame.number"}}} {
		out, errs, err := run(t, o)
		if err != nil || out != "" || strings.Count(errs, "none of its") != 1 || !strings.Contains(errs, "-a shows every frame") {
			t.Errorf("jobs %d %s: out %q, stderr %q, error %v", o.Jobs, o.Format, out, errs, err)
		}
	}
	for _, o := range []Options{{Read: chopped, All: true}, {Read: chopped, DisplayFilter: "frame.number == 1"}, {Read: chopped, Quiet: true}, {Read: pingpong}} {
		if _, errs, err := run(t, o); err != nil || errs != "" {
			t.Errorf("%+v: stderr %q, error %v", o, errs, err)
		}
	}
}
