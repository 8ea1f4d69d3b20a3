package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
)

// TestMalformedSMCEveryMode: a malformed LLC or CDC on a queue pair known
// as SMC-R is a frame.error in every output mode, with or without the
// tracker, and the tracker counts it.
func TestMalformedSMCEveryMode(t *testing.T) {
	p := crafted.MalformedSMC(t)
	const (
		llcErr = crafted.MalformedLLCErr
		cdcErr = crafted.MalformedCDCErr
	)
	text, _, err := run(t, Options{Read: p})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[int]string{18: llcErr, 23: cdcErr} {
		if l := linesOf(text, n); len(l) != 1 || !strings.Contains(l[0], want) || strings.Contains(l[0], "bad ICRC") {
			t.Errorf("text, frame %d: %q, want %q and a good ICRC", n, l, want)
		}
	}

	fields, _, err := run(t, Options{Read: p, Format: FormatFields, Fields: []string{"frame.number", "frame.error"}})
	if err != nil {
		t.Fatal(err)
	}
	for n, want := range map[string]string{"18": llcErr, "23": cdcErr} {
		if !strings.Contains(fields, n+"\t"+want) {
			t.Errorf("-T fields -e frame.error: frame %s lacks %q:\n%s", n, want, fields)
		}
	}

	for _, tracker := range []bool{false, true} {
		o := Options{Read: p, Format: FormatFields, Fields: []string{"frame.number"}, DisplayFilter: "frame.error"}
		if tracker {
			o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
			o.Fields = append(o.Fields, "smc.link.id")
		}
		got, _, err := run(t, o)
		if err != nil || got != map[bool]string{false: "18\n23\n", true: "18\t1\n23\t1\n"}[tracker] {
			t.Errorf("-Y frame.error (tracker %v): %q %v, want frames 18 and 23", tracker, got, err)
		}
	}

	verbose, _, err := run(t, Options{Read: p, Verbose: true, DisplayFilter: "frame.number == 23"})
	if err != nil || !strings.Contains(verbose, cdcErr) {
		t.Errorf("-V: %v\n%s", err, verbose)
	}

	js, _, err := run(t, Options{Read: p, Format: FormatJSON, DisplayFilter: "frame.number == 18"})
	var frames []map[string]any
	if err != nil || json.Unmarshal([]byte(js), &frames) != nil || len(frames) != 1 || !strings.Contains(js, llcErr) {
		t.Errorf("-T json: %v\n%s", err, js)
	}

	views, _, err := run(t, Options{Read: p, Quiet: true, Views: []string{"smc,conns"},
		NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) }})
	if err != nil || !strings.Contains(views, "malformed SMC messages 2") {
		t.Errorf("-z smc,conns does not count the two malformed messages: %v\n%s", err, views)
	}
}

// patchTCP re-serializes a real Ethernet/IPv4/TCP frame after edit changed
// its payload, so that checksums and lengths are right again.
func patchTCP(t *testing.T, data []byte, edit func(payload []byte)) []byte {
	t.Helper()
	p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
	eth := *p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip := *p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp := *p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	payload := bytes.Clone(tcp.Payload)
	edit(payload)
	if err := tcp.SetNetworkLayerForChecksum(&ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, &eth, &ip, &tcp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

// TestMalformedCLCLength: the real Proposal of pingpong.pcap (frame 8,
// after a SYN and SYN-ACK that both carry the SMC option) with an
// impossible length, then the TCP close. Linux's server fails such a
// handshake (smc_clc_wait_msg: EPROTO) without a Decline. The Proposal is a
// frame.error with its offset in every mode, and the tracker counts it and
// calls the connection failed, with the reason.
func TestMalformedCLCLength(t *testing.T) {
	all := readFrames(t, pingpong, -1)
	for _, l := range []int{0xffff, 4, 0} {
		t.Run(fmt.Sprint(l), func(t *testing.T) {
			var fs []rawFrame
			for _, n := range []int{5, 6, 7, 8, 9, 4107, 4109, 4111, 4112} {
				fs = append(fs, all[n-1])
			}
			fs[3].Data = patchTCP(t, fs[3].Data, func(p []byte) { p[5], p[6] = byte(l>>8), byte(l) })
			fs[3].CI.CaptureLength, fs[3].CI.Length = len(fs[3].Data), len(fs[3].Data)
			p := writeFrames(t, "badlen.pcap", fs)
			want := "CLC Proposal: offset 5 (length): bad length: length " + fmt.Sprint(l)

			text, _, err := run(t, Options{Read: p})
			if l := linesOf(text, 4); err != nil || len(l) != 1 || !strings.Contains(l[0], want) {
				t.Errorf("text: %v %q, want %q", err, l, want)
			}
			fields, _, err := run(t, Options{Read: p, Format: FormatFields, Fields: []string{"frame.number", "frame.error"}, DisplayFilter: "frame.error"})
			if err != nil || !strings.HasPrefix(fields, "4\t"+want) || strings.Count(fields, "\n") != 1 {
				t.Errorf("-Y frame.error -T fields: %v %q", err, fields)
			}
			verbose, _, err := run(t, Options{Read: p, Verbose: true, DisplayFilter: "frame.number == 4"})
			if err != nil || !strings.Contains(verbose, want) {
				t.Errorf("-V: %v\n%s", err, verbose)
			}
			js, _, err := run(t, Options{Read: p, Format: FormatJSON, DisplayFilter: "frame.error"})
			if err != nil || !strings.Contains(js, want) {
				t.Errorf("-T json: %v\n%s", err, js)
			}
			views, _, err := run(t, Options{Read: p, Quiet: true, Views: []string{"smc,conns", "smc,decline"},
				NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) }})
			if err != nil || !strings.Contains(views, "failed   malformed CLC from the client: "+want) ||
				!strings.Contains(views, "malformed SMC messages 1") || strings.Contains(views, "no CLC after SMC options") {
				t.Errorf("-z: %v\n%s", err, views)
			}
		})
	}
}

// TestCLCLengthSwallowsConfirm: the Proposal of pingpong.pcap (frame 8,
// 156 bytes) with a length field that takes in the client's next message,
// the 180-byte Confirm of frame 12, and 100 bytes more, or just the
// Confirm. The Proposal's frame carries the error (a whole Proposal ends
// at 156, its length says 436 or 336), the Confirm's frame says it lies
// inside that Proposal, the FINs are not blamed, and the connection
// stays one: the Confirm still ties the link and its CDCs to it, but a
// receiver that reads the Proposal's length takes the Confirm into it, so
// the outcome is failed with the malformed Proposal as the reason.
// Before, nothing marked the Proposal or the Confirm, the error landed on
// the FIN (stream ended after 336 of 436 bytes), and the link's traffic
// became a second, unknown connection.
func TestCLCLengthSwallowsConfirm(t *testing.T) {
	all := readFrames(t, pingpong, -1)
	for _, extra := range []int{100, 0} {
		t.Run(fmt.Sprint(extra), func(t *testing.T) {
			fs := append([]rawFrame(nil), all...)
			l := 156 + 180 + extra
			fs[7].Data = patchTCP(t, fs[7].Data, func(p []byte) {
				if len(p) != 156 || p[4] != 1 {
					t.Fatalf("frame 8 is not the 156-byte Proposal")
				}
				p[5], p[6] = byte(l>>8), byte(l)
			})
			p := writeFrames(t, "swallow.pcap", fs)
			propErr := fmt.Sprintf("CLC Proposal: offset 5 (length): bad length: length %d, but a whole CLC Proposal ends at 156 (its trailer at 152): the length takes in the next %d bytes of the stream", l, l-156)
			confErr := fmt.Sprintf("CLC Confirm: lies inside the CLC Proposal of frame 8 (its bytes 156-335 of the %d its length says): a receiver reads it as part of that message", l)

			text, _, err := run(t, Options{Read: p})
			if err != nil {
				t.Fatal(err)
			}
			if l := linesOf(text, 8); len(l) != 1 || !strings.Contains(l[0], "[error: "+propErr+"]") {
				t.Errorf("frame 8: %q, want %q", l, propErr)
			}
			if l := linesOf(text, 12); len(l) != 1 || !strings.Contains(l[0], "CLC Confirm SMC-Rv2 first-contact QPN 0x11") || !strings.Contains(l[0], "[error: "+confErr+"]") {
				t.Errorf("frame 12: %q, want the Confirm and %q", l, confErr)
			}
			fields, _, err := run(t, Options{Read: p, All: true, Format: FormatFields, Fields: []string{"frame.number", "frame.error"}, DisplayFilter: "frame.error"})
			if want := "8\t" + propErr + "\n12\t" + confErr + "\n"; err != nil || fields != want {
				t.Errorf("-Y frame.error: %v\n%s\nwant\n%s", err, fields, want)
			}
			views, _, err := run(t, Options{Read: p, Quiet: true, Views: []string{"smc,conns"},
				NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) }})
			if err != nil || !strings.Contains(views, "SMC connections: 1\n") ||
				!strings.Contains(views, "failed   malformed CLC from the client: "+propErr) ||
				!strings.Contains(views, "malformed SMC messages 1") {
				t.Errorf("-z smc,conns: %v\n%s", err, views)
			}
			// The link's CDCs are this connection's.
			cdcs, _, err := run(t, Options{Read: p, Format: FormatFields, Fields: []string{"smc.conn.id"}, DisplayFilter: "smc.cdc",
				NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) }})
			if err != nil || strings.Count(cdcs, "1\n") != 1023 || strings.Trim(cdcs, "1\n") != "" {
				t.Errorf("CDCs not all of connection 1: %v, %d lines of %d bytes", err, strings.Count(cdcs, "\n"), len(cdcs))
			}
		})
	}
}

// TestLegacyDeclineEveryMode: the 28-byte v2 Decline of Linux 5.10-5.15
// is selected by smc.clc.type == 4 with its reason; a 32-byte one no
// kernel accepts is too, with its fields, and its error is frame.error in
// every output mode (issue 28, point 9).
func TestLegacyDeclineEveryMode(t *testing.T) {
	dir := filepath.Join("..", "testdata", "legacy")
	out, _, err := run(t, Options{Read: filepath.Join(dir, "decline-v2-28.pcap"), DisplayFilter: "smc.clc.type == 4", Format: FormatFields,
		Fields: []string{"frame.number", "smc.clc.decline.reason", "smc.clc.decline.os_type", "smc.clc.decline.short_v2", "frame.error"}})
	if err != nil || out != "10\t50528258\t2\t1\t\n" {
		t.Errorf("28-byte v2 Decline: %q %v", out, err)
	}
	bad := filepath.Join(dir, "decline-malformed.pcap")
	const msg = "CLC Decline: offset 5 (length): bad length"
	for _, o := range []Options{
		{Format: FormatFields, Fields: []string{"frame.number", "smc.clc.decline.reason", "frame.error"}},
		{Format: FormatJSON},
		{Format: FormatJSONL},
		{},
		{Verbose: true},
	} {
		o.Read, o.DisplayFilter = bad, "smc.clc.type == 4"
		out, _, err := run(t, o)
		if err != nil || !strings.Contains(out, msg) || !strings.Contains(out, "0x03030002") && !strings.Contains(out, "50528258") {
			t.Errorf("format %q verbose %v: %v\n%s", o.Format, o.Verbose, err, out)
		}
	}
}
