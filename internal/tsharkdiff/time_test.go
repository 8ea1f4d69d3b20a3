package tsharkdiff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestTimeAgainstTshark compares frame.time_epoch, frame by frame, on the
// reference captures (microsecond pcap) and on one capture of each other
// resolution made here: nanosecond pcap, pcapng with if_tsresol 10^-3 and
// 2^-10 (testutil.Pcapng), times one nanosecond apart.
//
// Where smcdump differs from tshark, on purpose: tshark 4.0 always prints
// nine decimals (1795330404.828948000 for a microsecond capture); smcdump
// prints as many as the capture resolves (1795330404.828948), which says
// what the file holds and no more. So the comparison pads smcdump's value
// with zeros to nine decimals and then wants tshark's digits exactly: the
// same instant, to the nanosecond. Both cut a 2^-10 fraction to whole
// nanoseconds.
func TestTimeAgainstTshark(t *testing.T) {
	tshark, root, bin := setup(t, "runs tshark and smcdump on the reference captures")
	files := timedCaptures(t, root)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			th := runFields(t, tshark, "-n", "-r", f, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch")
			us := runFields(t, bin, "-r", f, "-a", "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch")
			if len(th) == 0 || len(th) != len(us) {
				t.Fatalf("tshark %d frames, smcdump %d", len(th), len(us))
			}
			for n, row := range th {
				theirs, ours := row["frame.time_epoch"], us[n]["frame.time_epoch"]
				if len(theirs) != 1 || len(ours) != 1 {
					t.Fatalf("frame %d: tshark %q, smcdump %q", n, theirs, ours)
				}
				sec, frac, _ := strings.Cut(ours[0], ".")
				if padded := sec + "." + frac + strings.Repeat("0", 9-len(frac)); padded != theirs[0] {
					t.Errorf("frame %d: smcdump %s, tshark %s", n, ours[0], theirs[0])
				}
			}
		})
	}
}

// timedCaptures are the reference captures of TestTimeAgainstTshark (a
// microsecond pcap each) and one capture of each other resolution, made
// in t.TempDir(): a nanosecond pcap, pcapng with if_tsresol 10^-3 and
// 2^-10; their frames 977 ns apart (2^-10 s units differ too) and the
// first one nanosecond after a microsecond.
func timedCaptures(t *testing.T, root string) []string {
	t.Helper()
	files := []string{}
	for _, f := range []string{"pingpong.pcap", "decline-nordma.pcap", "fallback-nosmc.pcap", "no-ueid.pcap"} {
		files = append(files, filepath.Join(root, "testdata", "reference", f))
	}
	frames, _ := testutil.ReadFrames(t, files[2])
	frames = frames[:6]
	base := time.Unix(1795336493, 775685001)
	for i := range frames {
		frames[i].CI.Timestamp = base.Add(time.Duration(i) * 977) // 977 ns apart: 2^-10 s units differ too
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"ns.pcap":      testutil.PcapNanos(t, layers.LinkTypeEthernet, frames),
		"ms.pcapng":    testutil.Pcapng(layers.LinkTypeEthernet, 3, frames),
		"bin10.pcapng": testutil.Pcapng(layers.LinkTypeEthernet, 0x80|10, frames),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	return files
}

// TestTextTimeAgainstTshark compares the time column of the text lines
// (smcdump -r F -a, tshark -r F: seconds since the first frame) with
// tshark's, digit for digit: both print as many decimals as the capture
// resolves, nine for a nanosecond pcap, so that frames 977 ns apart do not
// all read 0.000001.
func TestTextTimeAgainstTshark(t *testing.T) {
	tshark, root, bin := setup(t, "runs tshark and smcdump on captures of each time resolution")
	for _, f := range timedCaptures(t, root) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			theirs, ours := textTimes(t, tshark, "-n", "-r", f), textTimes(t, bin, "-r", f, "-a")
			if len(theirs) == 0 || len(theirs) != len(ours) {
				t.Fatalf("tshark %d lines, smcdump %d", len(theirs), len(ours))
			}
			for i := range theirs {
				if theirs[i] != ours[i] {
					t.Errorf("line %d: smcdump %s, tshark %s", i+1, ours[i], theirs[i])
				}
			}
		})
	}
}

// textTimes runs bin and returns the second column, the time, of each of
// its text lines.
func textTimes(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("%s %q: %v", filepath.Base(bin), args, err)
	}
	var times []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if c := strings.Fields(l); len(c) > 1 {
			times = append(times, c[1])
		}
	}
	return times
}
