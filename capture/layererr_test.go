package capture

import (
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// TestLayerError: a header gopacket's layers refuse is a frame error that
// names the layer, the offset and the field, as the SMC layers' do, for
// each check those decoders make (a RoCE frame of pingpong, one header
// field changed at a time, its IPv4 header's checksum made again over 20
// bytes: the sender's header, not one the capture damaged, which
// versionIHLDamaged reads as sent).
func TestLayerError(t *testing.T) {
	roce := firstRoCEv4(t)
	d, _ := NewDecoder(layers.LinkTypeEthernet)
	for _, c := range []struct {
		name string
		edit func(b []byte) []byte
		want string
		cut  bool // the snap length cut the frame: its wire length is the original's
	}{
		{"ethernet short", func(b []byte) []byte { return b[:10] }, "Ethernet: offset 0: truncated: need 14 bytes, have 10", false},
		{"ihl under 5", func(b []byte) []byte { b[14] = 0x43; return b }, "IPv4: offset 0 (ihl): bad length: IHL 3 (12 bytes), under the minimum 5 (20 bytes)", false},
		{"ihl past total", func(b []byte) []byte { b[14], b[16], b[17] = 0x4f, 0, 48; return b }, "IPv4: offset 0 (ihl): bad length: 60 bytes of header, past the total length's 48", false},
		{"total under 20", func(b []byte) []byte { b[16], b[17] = 0, 13; return b }, "IPv4: offset 2 (total_length): bad length: 13 bytes, under the header's 20", false},
		{"option past header", func(b []byte) []byte { b[14], b[34], b[35] = 0x46, 0x83, 9; return b }, "IPv4: offset 21 (option length): bad length: option type 131 of length 9, past the header's end at 24", false},
		{"option length 1", func(b []byte) []byte { b[14], b[34], b[35] = 0x46, 0x83, 1; return b }, "IPv4: offset 21 (option length): bad length: option type 131 of length 1, under its type and length's 2 bytes", false},
		{"udp length under 8", func(b []byte) []byte { b[38], b[39] = 0, 5; return b }, "UDP: offset 4 (length): bad length: 5 bytes, under its own header's 8", false},
		// The UDP header and BTH read as TCP: the BTH's reserved byte
		// is the data offset's.
		{"tcp data offset", func(b []byte) []byte { b[23] = 6; return b }, "TCP: offset 12 (data_offset): bad length: data offset 0 (0 bytes), under the minimum 5 (20 bytes)", false},
		{"ihl past the cut frame", func(b []byte) []byte { b[14] = 0x4f; return b[:14+40] }, "IPv4: offset 0 (ihl): truncated: need 60 bytes, have 40", true},
		{"tcp data offset past the segment", func(b []byte) []byte { b[16], b[17], b[23], b[14+20+12] = 0, 50, 6, 0xf0; return b[:14+50] }, "TCP: offset 12 (data_offset): truncated: need 60 bytes, have 30", false},
		{"udp short", func(b []byte) []byte { b[16], b[17] = 0, 25; return b[:14+25] }, "UDP: offset 0: truncated: need 8 bytes, have 5", false},
	} {
		data := c.edit(append([]byte(nil), roce...))
		if len(data) >= 34 {
			resumIPv4(data[14:34])
		}
		var f Frame
		f.Data = data
		f.CI.CaptureLength, f.CI.Length = len(data), len(data)
		if c.cut {
			f.CI.Length = len(roce)
		}
		d.decode(&f, true)
		if f.Err == nil || f.Err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.name, f.Err, c.want)
		}
	}
}

// resumIPv4 makes the checksum of the IPv4 header h (20 bytes) again.
func resumIPv4(h []byte) {
	h[10], h[11] = 0, 0
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	h[10], h[11] = byte(^sum>>8), byte(^sum)
}
