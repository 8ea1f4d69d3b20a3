package follow

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/internal/mutate"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/track"
)

// followAll returns the smc,follow view of every connection of a capture
// in mode, by the connection's client endpoint.
func followAll(t *testing.T, path string, mode Mode) map[string]string {
	t.Helper()
	views := map[int]*View{}
	sink := sinkFunc(func(ch *track.StreamChunk) {
		v := views[ch.Conn.ID]
		if v == nil {
			var err error
			if v, err = Parse("smc,follow", fmt.Sprintf("%d,%s", ch.Conn.ID, mode)); err != nil {
				t.Fatal(err)
			}
			views[ch.Conn.ID] = v
		}
		v.StreamChunk(ch)
	})
	if _, err := eachFrame(context.Background(), path, sink, nil); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range views {
		var b bytes.Buffer
		if _, err := v.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		v.Close()
		out[v.client.String()] = b.String()
	}
	return out
}

type sinkFunc func(*track.StreamChunk)

func (f sinkFunc) StreamChunk(ch *track.StreamChunk) { f(ch) }

func tshark(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(testutil.NeedTool(t, "tshark"), args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	return string(out)
}

var (
	nodeRE = regexp.MustCompile(`(?m)^Node 0: (\S+)$|^    host: (\S+)\n    port: (\d+)`)
	// What differs by design: the follow type and filter (smc, not tcp),
	// and in yaml the frame (smcdump names the CDC of the original
	// capture, tshark the exported segment) and time (tshark prints a
	// double: 1795336291.771483000 becomes ...771482944).
	normRE = regexp.MustCompile(`(?m)^(Follow: )(?:smc|tcp)(,.*)$|^Filter: .*\n|^(  - packet: )\d+$|^(    timestamp: )\S+$`)
)

func normalize(s string) string { return normRE.ReplaceAllString(s, "$1$2$3$4") }

// TestFollowMatchesTshark: the capture exported as TCP, tshark's
// -z follow,tcp of each connection is what -z smc,follow shows of it in
// every mode, byte for byte but for the follow type, the filter and, in
// yaml, the frame numbers and tshark's rounding of times; tshark finds
// every checksum right and no segment missing, retransmitted or out of
// order. multiconn.pcap has four connections on one link group, with
// messages of 64, 1000, 4096 and 200 bytes (hex lines cut short).
func TestFollowMatchesTshark(t *testing.T) {
	in := filepath.Join(testutil.SamplesDir(t), "multiconn.pcap")
	out := filepath.Join(t.TempDir(), "tcp.pcapng")
	st, err := Export(context.Background(), in, out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Conns != 4 || st.NoTuple != 0 || st.GapsBytes != 0 {
		t.Fatalf("export %+v, want 4 connections, none without a 4-tuple, no gap", st)
	}
	if bad := tshark(t, "-r", out, "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE",
		"-Y", "ip.checksum.status == 0 || tcp.checksum.status == 0 || tcp.analysis.flags", "-T", "fields", "-e", "frame.number"); bad != "" {
		t.Errorf("frames with a bad checksum or a TCP analysis flag: %s", bad)
	}
	for _, mode := range []Mode{ModeASCII, ModeHex, ModeRaw, ModeYAML} {
		ours := followAll(t, in, mode)
		if len(ours) != 4 {
			t.Fatalf("%s: %d connections followed, want 4", mode, len(ours))
		}
		for i := range 4 {
			theirs := tshark(t, "-r", out, "-q", "-z", fmt.Sprintf("follow,tcp,%s,%d", mode, i))
			m := nodeRE.FindStringSubmatch(theirs)
			if m == nil {
				t.Fatalf("%s stream %d: no node 0 in tshark's output:\n%.300s", mode, i, theirs)
			}
			client := m[1]
			if client == "" {
				client = m[2] + ":" + m[3]
			}
			want, ok := ours[client]
			if !ok {
				t.Fatalf("%s: no connection of client %s followed", mode, client)
			}
			if g, w := normalize(want), normalize(theirs); g != w {
				t.Errorf("%s, client %s: smc,follow differs from tshark's follow of the export:\n%s", mode, client, testutil.Diff([]byte(w), []byte(g)))
			}
		}
	}
}

// TestExportHTTP: an HTTP exchange carried over SMC-R is an HTTP exchange
// to tshark in the export (port 5000 decoded as HTTP, as a user would).
func TestExportHTTP(t *testing.T) {
	in := crafted.HTTP(t)
	out := filepath.Join(t.TempDir(), "tcp.pcapng")
	if _, err := Export(context.Background(), in, out); err != nil {
		t.Fatal(err)
	}
	got := tshark(t, "-r", out, "-d", "tcp.port==5000,http", "-Y", "http.request || http.response", "-T", "fields",
		"-e", "http.request.method", "-e", "http.request.uri", "-e", "http.response.code", "-e", "frame.comment")
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "GET\t/smc\t\tsmc: connection 1 C->S, released by CDC frame ") ||
		!strings.HasPrefix(lines[1], "\t\t200\tsmc: connection 1 S->C, released by CDC frame ") {
		t.Errorf("tshark -Y http on the export:\n%s", got)
	}
}

// TestExportGap: a WRITE packet the capture missed is a gap both ways:
// smc,follow marks it with its length and cause, and the export skips its
// sequence numbers, which tshark reports as a segment not captured.
func TestExportGap(t *testing.T) {
	path := filepath.Join(testutil.SamplesDir(t), "long.pcap")
	frames, lt := testutil.ReadFrames(t, path)
	// A WRITE MIDDLE (opcode 7) of the bulk: frame 24059 carries 1024
	// bytes at stream offset 9216 (smcdump -T fields -e smc.stream.offset).
	const drop = 24059
	if op := frames[drop-1].Data[14+20+8]; op != 0x07 {
		t.Fatalf("frame %d: opcode %#x, want a WRITE MIDDLE", drop, op)
	}
	in := testutil.WriteFrames(t, "gap.pcap", lt, append(frames[:drop-1:drop-1], frames[drop:]...))
	var b bytes.Buffer
	v, err := Parse("smc,follow,2,raw", "2,raw")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eachFrame(context.Background(), in, v, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := v.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n[1024 bytes missing in capture file: not captured]\n") {
		t.Errorf("smc,follow marks no gap of 1024 bytes:\n%.600s", b.String())
	}
	out := filepath.Join(t.TempDir(), "tcp.pcapng")
	st, err := Export(context.Background(), in, out)
	if err != nil {
		t.Fatal(err)
	}
	if st.GapsBytes != 1024 {
		t.Errorf("export: %d bytes missing, want 1024", st.GapsBytes)
	}
	lost := tshark(t, "-r", out, "-Y", "tcp.analysis.lost_segment", "-T", "fields", "-e", "tcp.seq_raw")
	if want := fmt.Sprintf("%d\n", clientISN+1+9216+1024); lost != want {
		t.Errorf("tshark: lost segment before seq %q, want %q", lost, want)
	}
}

// TestExportCut: a capture cut short is exported up to the cut, and the
// export says it was cut (smcdump exits 2, as for its other outputs).
func TestExportCut(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(in, data[:300000], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tcp.pcapng")
	st, err := Export(context.Background(), in, out)
	if !errors.Is(err, capture.ErrTruncatedFile) || st.Conns != 1 || st.Segments < 100 {
		t.Fatalf("export of a cut capture: %+v, %v; want its connection and the truncation", st, err)
	}
	if got := tshark(t, "-r", out, "-Y", "tcp.len > 0", "-T", "fields", "-e", "frame.number"); strings.Count(got, "\n") < 100 {
		t.Errorf("tshark reads %d data segments in the export", strings.Count(got, "\n"))
	}
}

// TestExportDamaged: a capture damaged in a record header is exported
// past its damage, as smcdump prints it, and the export ends with the
// file's error (smcdump exits 2) instead of passing for a whole file.
func TestExportDamaged(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// The captured length of a record in the middle beyond the snap length.
	offs := testutil.RecordOffsets(data)
	off := offs[len(offs)/2]
	binary.LittleEndian.PutUint32(data[off+8:], 0x7fffff00)
	in := filepath.Join(t.TempDir(), "damaged.pcap")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "tcp.pcapng")
	st, err := Export(context.Background(), in, out)
	var fe *capture.FileError
	if !errors.As(err, &fe) || !errors.Is(err, capture.ErrCorruptRecord) || fe.Frame != len(offs)/2+1 {
		t.Fatalf("export of a damaged capture: %v; want the damage at frame %d", err, len(offs)/2+1)
	}
	whole, err := Export(context.Background(), filepath.Join(testutil.SamplesDir(t), "pingpong.pcap"), filepath.Join(t.TempDir(), "whole.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Conns != 1 || st.Passed+st.Replaced != whole.Passed+whole.Replaced-1 {
		t.Errorf("export past the damage: %+v; want the whole file's %+v but one frame", st, whole)
	}
}

// TestExportHeldAtEnd: a capture whose frames come twice, each cut to 80
// bytes 20 us before it whole (two interfaces, two snap lengths), ended
// right after a CDC's cut copy: the tracker holds the copy for its
// packet, which does not come, and follows it at the end of the capture.
// The export writes its bytes as -z smc,follow shows them: as many data
// segments as the capture without copies, ended at that CDC.
func TestExportHeldAtEnd(t *testing.T) {
	frames, lt, err := mutate.ReadFile(filepath.Join(testutil.Root(t), "testdata/anck/handshake-credits.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	const end = 32 // the first 32 frames: the third CDC the last
	// Ended after the last frame's cut copy, before the frame itself.
	doubled := mutate.CutCopiesFirst(frames[:end], 80)
	doubled = doubled[:len(doubled)-1]
	dir := t.TempDir()
	once, twice := filepath.Join(dir, "once.pcap"), filepath.Join(dir, "twice.pcap")
	if err := mutate.WriteFile(once, lt, frames[:end]); err != nil {
		t.Fatal(err)
	}
	if err := mutate.WriteFile(twice, lt, doubled); err != nil {
		t.Fatal(err)
	}
	want, err := Export(context.Background(), once, filepath.Join(dir, "once.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Export(context.Background(), twice, filepath.Join(dir, "twice.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Segments != want.Segments || got.GapsBytes != want.GapsBytes || want.Segments < 6 {
		t.Errorf("export of the capture twice, ended at a held copy: %+v; of the capture once: %+v", got, want)
	}
}
