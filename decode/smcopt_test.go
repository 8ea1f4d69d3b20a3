package decode

import (
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

func TestSMCOption(t *testing.T) {
	t.Parallel()
	// pingpong.pcap: the client's SYN (frame 5) and the server's SYN-ACK (frame 6).
	syns := map[int]bool{}
	for _, f := range clcReadTCP(t, "reference/pingpong.pcap") {
		if f.tcp.SYN {
			syns[f.n] = SMCOption(f.tcp.Options)
		}
	}
	if !syns[5] || !syns[6] {
		t.Errorf("pingpong SYN/SYN-ACK option = %v, want frames 5 and 6 true", syns)
	}
	// A plain TCP listener answers without the option (fallback-nosmc frame 6).
	for _, f := range clcReadTCP(t, "reference/fallback-nosmc.pcap") {
		if !f.tcp.SYN {
			if SMCOption(f.tcp.Options) {
				t.Errorf("fallback-nosmc frame %d: option on a non-SYN segment", f.n)
			}
			continue
		}
		want := !f.tcp.ACK // client SYN has it, server SYN-ACK does not
		if got := SMCOption(f.tcp.Options); got != want {
			t.Errorf("fallback-nosmc frame %d (ACK %v): SMCOption = %v, want %v", f.n, f.tcp.ACK, got, want)
		}
	}
}

// tcpdump's TFO and AccECN captures use kind 254 with other ExIDs.
func TestSMCOptionNegativeControls(t *testing.T) {
	t.Parallel()
	for _, file := range []string{
		"public/tcpdump_tests_negative_controls/tfo-5c1fa7f9ae91.pcap",
		"public/tcpdump_tests_negative_controls/accecn_handshake.pcap",
	} {
		kind254 := 0
		for _, f := range clcReadTCP(t, file) {
			for _, o := range f.tcp.Options {
				if o.OptionType == 254 {
					kind254++
				}
			}
			if SMCOption(f.tcp.Options) {
				t.Errorf("%s frame %d: SMC reported for a non-SMC kind 254 option", file, f.n)
			}
		}
		if kind254 == 0 {
			t.Errorf("%s: no kind 254 option found; the control proves nothing", file)
		}
	}
}

func TestAppendSMCOptionFields(t *testing.T) {
	t.Parallel()
	frames := clcReadTCP(t, "reference/fallback-nosmc.pcap")
	var synWith, synAckWithout, data *layers.TCP
	for _, f := range frames {
		switch {
		case f.tcp.SYN && !f.tcp.ACK:
			synWith = f.tcp
		case f.tcp.SYN && f.tcp.ACK:
			synAckWithout = f.tcp
		case len(f.tcp.Payload) > 0 && data == nil:
			data = f.tcp
		}
	}
	if synWith == nil || synAckWithout == nil || data == nil {
		t.Fatal("fallback-nosmc.pcap lacks SYN, SYN-ACK or data")
	}
	for _, tc := range []struct {
		name string
		tcp  *layers.TCP
		want string // "" = field absent
	}{
		{"SYN with option", synWith, "1"},
		{"SYN-ACK without option", synAckWithout, "0"},
		{"data segment", data, ""},
		{"nil", nil, ""},
	} {
		var r Record
		AppendSMCOptionFields(&r, tc.tcp)
		v, ok := r.First(fTCPSMCOption)
		got := ""
		if ok {
			got = v.Format(KindBool)
		}
		if got != tc.want {
			t.Errorf("%s: tcp.smc_option = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestSMCOptionNear: the SMC option's six bytes, whole or with any one or
// two changed, are found among other options, behind one whose length
// was damaged too; with three changed they are not.
func TestSMCOptionNear(t *testing.T) {
	opt := []byte{0xfe, 0x06, 0xe2, 0xd4, 0xc3, 0xd9}
	pre := []byte{0x02, 0x04, 0x05, 0xb4, 0x01, 0x01} // MSS, two NOPs
	for i := range opt {
		b := append(append([]byte(nil), pre...), opt...)
		b[len(pre)+i] ^= 0x08
		if !SMCOptionNear(b) {
			t.Errorf("byte %d changed: not found", i)
		}
		b[len(pre)+(i+1)%len(opt)] ^= 0x08
		if !SMCOptionNear(b) {
			t.Errorf("bytes %d and %d changed: not found", i, (i+1)%len(opt))
		}
		b[len(pre)+(i+3)%len(opt)] ^= 0x08
		if SMCOptionNear(b) {
			t.Errorf("bytes %d, %d and %d changed: found", i, (i+1)%len(opt), (i+3)%len(opt))
		}
	}
	// editcap -E's two-byte run over kind and length.
	b := append(append([]byte(nil), pre...), opt...)
	b[len(pre)], b[len(pre)+1] = 0x25, 0x00
	if !SMCOptionNear(b) {
		t.Error("kind and length overwritten: not found")
	}
	b = append(append([]byte(nil), pre...), opt...)
	b[5] = 0x74 // the second NOP: kind 0x74 of length 254, past the end
	if !SMCOptionNear(b) {
		t.Error("whole behind a damaged option: not found")
	}
	if SMCOptionNear(pre) {
		t.Error("no option: found")
	}
}

// TestSMCOptionIn: the SMC option is found where a receiver's walk of the
// option list reaches it (behind NOPs and other options, padded with
// zeros after), not behind an option whose length is short or runs past
// the list, nor after the end of options.
func TestSMCOptionIn(t *testing.T) {
	opt := []byte{0xfe, 0x06, 0xe2, 0xd4, 0xc3, 0xd9}
	pre := []byte{0x02, 0x04, 0x05, 0xb4, 0x01, 0x01} // MSS, two NOPs
	for _, tc := range []struct {
		name string
		opts []byte
		want bool
	}{
		{"behind MSS and NOPs", append(slices.Clone(pre), opt...), true},
		{"then end of options", append(append(slices.Clone(pre), opt...), 0, 0), true},
		{"after end of options", append(append([]byte{0}, pre...), opt...), false},
		{"behind a length past the list", append([]byte{0x02, 0x40, 0x05, 0xb4, 0x01, 0x01}, opt...), false},
		{"behind a length of 1", append([]byte{0x02, 0x01, 0x05, 0xb4, 0x01, 0x01}, opt...), false},
		{"its ExID damaged", append(slices.Clone(pre), 0xfe, 0x06, 0xe2, 0xd4, 0xc3, 0xd8), false},
		{"none", pre, false},
	} {
		if got := SMCOptionIn(tc.opts); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
