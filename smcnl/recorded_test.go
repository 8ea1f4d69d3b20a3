package smcnl

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
)

// Recorded dumps: `smclab record DIR` in a lab guest writes each command's
// replies to DIR/<name>.bin (netlink messages back to back), and the lab
// copies them to testdata/<scenario>/<name>.bin. These tests replay them
// through the same code paths as a live kernel.

// readRecording splits a .bin file into netlink messages.
func readRecording(t *testing.T, path string) []netlink.Message {
	t.Helper()
	msgs, err := SplitMessages(mustRead(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return msgs
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replayConn serves every command from the recording of one scenario.
func replayConn(t *testing.T, dir string) *Conn {
	files := map[uint8]string{
		cmdGetSysInfo: "sysinfo", cmdDumpUEID: "ueid", cmdDumpSEID: "seid",
		cmdDumpHSLimitation: "hs_limitation", cmdGetLinkSMCR: "links", cmdGetLGRSMCD: "lgr_smcd",
		cmdGetDevSMCR: "dev_smcr", cmdGetDevSMCD: "dev_smcd", cmdGetStats: "stats",
		cmdGetFallbackStats: "fallback",
	}
	return testConn(t, func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		p := filepath.Join(dir, files[greq.Header.Command]+".bin")
		if _, err := os.Stat(p); err != nil {
			return nil, err
		}
		var out []genetlink.Message
		for _, m := range readRecording(t, p) {
			var g genetlink.Message
			if err := g.UnmarshalBinary(m.Data); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			out = append(out, g)
		}
		if len(out) == 0 {
			// An empty dump (no link groups, no fallbacks); genltest's way
			// to say "no messages" is io.EOF.
			return nil, io.EOF
		}
		return out, nil
	})
}

func TestRecorded(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, e := range entries {
		dir := filepath.Join("testdata", e.Name())
		if !e.IsDir() || e.Name() == "fuzz" {
			continue
		}
		bins, _ := filepath.Glob(filepath.Join(dir, "*.bin"))
		if len(bins) == 0 {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if !isLittle() {
				t.Skip("recordings are x86 host-order bytes")
			}
			testRecordedDir(t, dir)
		})
	}
	if n == 0 {
		t.Fatal("no lab recordings in testdata/<scenario>/*.bin (made by `smclab record DIR` in the lab)")
	}
}

func testRecordedDir(t *testing.T, dir string) {
	if p := filepath.Join(dir, "diag.bin"); exists(p) {
		for i, m := range readRecording(t, p) {
			s, err := ParseSocket(m.Data)
			if err != nil {
				t.Errorf("diag reply %d: %v", i, err)
				continue
			}
			if s.Mode == ModeSMCR && s.State == StateActive && (s.Conn == nil || s.LGR == nil) {
				t.Errorf("diag reply %d: active SMC-R socket without CONNINFO/LGRINFO: %+v", i, s)
			}
		}
	}
	c := replayConn(t, dir)
	if exists(filepath.Join(dir, "sysinfo.bin")) {
		s, err := c.SysInfo()
		if err != nil {
			t.Errorf("SysInfo: %v", err)
		} else if s.Version < 1 {
			t.Errorf("SysInfo version %d", s.Version)
		}
	}
	if exists(filepath.Join(dir, "links.bin")) {
		gs, err := c.LinkGroupsR()
		if err != nil {
			t.Errorf("LinkGroupsR: %v", err)
		}
		for _, g := range gs {
			for _, l := range g.Links {
				if l.IBDev == "" || l.GID == "" {
					t.Errorf("link group %#x: link without device or GID: %+v", g.ID, l)
				}
			}
		}
	}
	for name, fn := range map[string]func() error{
		"stats":    func() error { _, err := c.Stats(); return err },
		"fallback": func() error { _, err := c.FallbackStats(); return err },
		"dev_smcr": func() error { _, err := c.DevicesR(); return err },
		"ueid":     func() error { _, err := c.UEIDs(); return err },
	} {
		if exists(filepath.Join(dir, name+".bin")) {
			if err := fn(); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestRecordingRoundTrip(t *testing.T) {
	skipBigEndian(t)
	in := []netlink.Message{
		{Header: netlink.Header{Type: sockDiagByFamily, Flags: netlink.Multi, Sequence: 7, PID: 9}, Data: pingpongClientSocket(t)},
		{Header: netlink.Header{Type: 0x1d}, Data: []byte{1, 2, 3}}, // unaligned payload
	}
	b := AppendMessages(nil, in)
	if len(b)%4 != 0 {
		t.Fatalf("recording length %d not aligned", len(b))
	}
	out, err := SplitMessages(b)
	if err != nil {
		t.Fatal(err)
	}
	in[0].Header.Length = uint32(16 + len(in[0].Data))
	in[1].Header.Length = 19
	if diff := cmp.Diff(in, out); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	for n := 1; n < 16+len(in[0].Data); n++ {
		if _, err := SplitMessages(b[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
}

// TestRecordReplay records a dump the way smclab record does and replays
// it through replayConn: the result must not change.
func TestRecordReplay(t *testing.T) {
	live := testConn(t, func(genetlink.Message, netlink.Message) ([]genetlink.Message, error) {
		return []genetlink.Message{pingpongLGR(0x100, 0, 1), pingpongLink(1, 3, 0x01010000)}, nil
	})
	dir := t.TempDir()
	live.SetRecorder(func(cmd uint8, msgs []netlink.Message) {
		if cmd != cmdGetLinkSMCR {
			t.Errorf("recorded command %d", cmd)
		}
		if err := os.WriteFile(filepath.Join(dir, "links.bin"), AppendMessages(nil, msgs), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	want, err := live.LinkGroupsR()
	if err != nil {
		t.Fatal(err)
	}
	got, err := replayConn(t, dir).LinkGroupsR()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" || len(got) != 1 || len(got[0].Links) != 1 {
		t.Fatalf("replay (-recorded +replayed):\n%s", diff)
	}
}
