package tsharkdiff

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCutTCPAgainstTshark compares the TCP header of every frame of
// copies cut at snap lengths that end inside the TCP header's options
// (tcpdump's old default of 68 among them) or inside its segment's
// payload: ports, raw sequence and acknowledgement numbers, the payload's
// length on the wire and the flags, which both tools read from a header
// whose options the capture cut. Below the header's fixed 20 bytes
// smcdump shows no TCP field (tshark shows the ports of some frames).
func TestCutTCPAgainstTshark(t *testing.T) {
	tshark, root, bin := setup(t, "runs tshark and smcdump on cut copies")
	ours := []string{"frame.number", "tcp.srcport", "tcp.dstport", "tcp.seq", "tcp.ack", "tcp.len",
		"tcp.flags.syn", "tcp.flags.ack", "tcp.flags.fin", "tcp.flags.rst"}
	theirs := []string{"frame.number", "tcp.srcport", "tcp.dstport", "tcp.seq_raw", "tcp.ack_raw", "tcp.len",
		"tcp.flags.syn", "tcp.flags.ack", "tcp.flags.fin", "tcp.flags.reset"}
	// Snap lengths from the TCP header's fixed 20 bytes (Ethernet, and
	// IPv4's 20 or IPv6's 40 bytes before it) to past the SYN's options.
	v4, v6 := []int{54, 60, 64, 68, 74, 80, 96}, []int{74, 80, 88, 94, 100, 110}
	files := map[string][]int{
		"testdata/reference/pingpong.pcap":       v4,
		"testdata/reference/fallback-nosmc.pcap": v4,
		"testdata/reference/decline-nordma.pcap": v4,
		"testdata/reference/no-ueid.pcap":        v4,
		"samples/ipv6.pcap":                      v6,
	}
	dir := t.TempDir()
	for rel, snaps := range files {
		for _, snap := range snaps {
			name := fmt.Sprintf("%s@%d", filepath.Base(rel), snap)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cut := filepath.Join(dir, name+".pcap")
				if err := cutPcap(filepath.Join(root, rel), cut, snap); err != nil {
					t.Fatal(err)
				}
				th := runFields(t, tshark, append([]string{"-n", "-r", cut, "-T", "fields", "-E", "separator=/t",
					"-E", "occurrence=f"}, eFlags(theirs)...)...)
				us := runFields(t, bin, append([]string{"-r", cut, "-a", "-T", "fields"}, eFlags(ours)...)...)
				seen, diffs := 0, 0
				for n, tr := range th {
					o := us[n]
					if len(tr["tcp.srcport"]) > 0 {
						seen++
					}
					for i := 1; i < len(ours); i++ {
						if ov, tv := o[ours[i]], tr[theirs[i]]; !slices.Equal(ov, tv) {
							if diffs++; diffs <= 10 {
								t.Errorf("frame %d: %s %q, tshark's %s %q", n, ours[i], ov, theirs[i], tv)
							}
						}
					}
				}
				if seen == 0 {
					t.Errorf("no TCP header read at snap length %d", snap)
				}
			})
		}
	}
}

// cutPcap writes to dst the classic pcap src with every record cut to
// snap bytes, as `editcap -s` or a capture with that snap length would.
func cutPcap(src, dst string, snap int) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if len(b) < 24 || binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
		return fmt.Errorf("%s: not a little-endian classic pcap", src)
	}
	le := binary.LittleEndian
	out := append([]byte(nil), b[:24]...)
	le.PutUint32(out[16:], uint32(snap))
	for p := b[24:]; len(p) > 0; {
		if len(p) < 16 {
			return fmt.Errorf("%s: record header cut", src)
		}
		incl := int(le.Uint32(p[8:]))
		if len(p) < 16+incl {
			return fmt.Errorf("%s: record cut", src)
		}
		keep := min(incl, snap)
		h := append([]byte(nil), p[:16]...)
		le.PutUint32(h[8:], uint32(keep))
		out = append(append(out, h...), p[16:16+keep]...)
		p = p[16+incl:]
	}
	return os.WriteFile(dst, out, 0o644)
}
