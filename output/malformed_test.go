package output

import (
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
)

// RoCEv2 offsets in pingpong.pcap: Ethernet, IPv4 (no options), UDP, BTH;
// the SMC message follows.
const (
	roceIPOff  = 14
	roceSMCOff = 14 + 20 + 8 + 12
)

// fixICRC recomputes the ICRC of an edited RoCEv2 frame, so that the edit
// is the only thing wrong with it, as if the sender had made it.
func fixICRC(t *testing.T, data []byte) {
	t.Helper()
	ip := data[roceIPOff:]
	end := int(binary.BigEndian.Uint16(ip[2:4]))
	crc, _ := decode.ICRCRoCEv2(ip)
	binary.LittleEndian.PutUint32(ip[end-4:end], crc)
	if _, err := decode.ICRCRoCEv2(ip); err != nil {
		t.Fatalf("ICRC still wrong after the fix: %v", err)
	}
}

// malformedSMC is pingpong.pcap (Linux 6.12, SMC-Rv2) with two SMC
// messages damaged on the link the CLC handshake announced: the v2
// ADD_LINK request of frame 18 gets length 0xffff, the CDC of frame 23
// length byte 0xff. Both ICRCs are recomputed.
func malformedSMC(t *testing.T) string {
	return rewriteFrames(t, pingpong, 40, func(n int, data []byte, _ *gopacket.CaptureInfo) []byte {
		if n != 18 && n != 23 {
			return data
		}
		m := data[roceSMCOff:]
		switch n {
		case 18:
			if m[0] != byte(decode.LLCAddLinkV2) {
				t.Fatalf("frame 18 is not an ADD_LINK_V2: % x", m[:4])
			}
			m[1], m[2] = 0xff, 0xff
			fixICRC(t, data)
		case 23:
			if m[0] != decode.CDCType || m[1] != 44 {
				t.Fatalf("frame 23 is not a CDC: % x", m[:2])
			}
			m[1] = 0xff
			fixICRC(t, data)
		}
		return data
	})
}

// TestMalformedSMCEveryMode: a malformed LLC or CDC on a queue pair known
// as SMC-R is a frame.error in every output mode, with or without the
// tracker, and the tracker counts it.
func TestMalformedSMCEveryMode(t *testing.T) {
	p := malformedSMC(t)
	const (
		llcErr = "LLC ADD_LINK_V2: offset 1 (length): bad length"
		cdcErr = "CDC: offset 1 (length): bad length"
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
			o.NewTracker = func(v []string) (Tracker, error) { return track.NewForViews(track.Options{}, v) }
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
		NewTracker: func(v []string) (Tracker, error) { return track.NewForViews(track.Options{}, v) }})
	if err != nil || !strings.Contains(views, "malformed SMC messages 2") {
		t.Errorf("-z smc,conns does not count the two malformed messages: %v\n%s", err, views)
	}
}
