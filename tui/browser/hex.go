package browser

import (
	"strings"
	"unsafe"

	"github.com/smcscope/smcscope/capture"
)

// span is a byte range of a frame.
type span struct{ off, n int }

// layerSpans finds where each decoded layer's bytes sit in the frame,
// keyed like the field tree's headings (the field owners' keys), so
// selecting a layer or one of its fields highlights its bytes in the hex
// pane. The layers' Contents are subslices of the frame's data; their
// distance from its start is the offset. A CLC message reassembled from
// earlier segments is not inside this frame and gets no span.
func layerSpans(f *capture.Frame) map[string]span {
	out := map[string]span{"frame": {0, len(f.Data)}}
	add := func(key string, b []byte) {
		if len(b) == 0 || len(f.Data) == 0 {
			return
		}
		// Why unsafe: gopacket hands out subslices, not offsets.
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(f.Data))))
		if off >= 0 && off+len(b) <= len(f.Data) {
			out[key] = span{off, len(b)}
		}
	}
	if f.Eth != nil {
		add("eth", f.Eth.Contents)
	}
	if f.IPv4 != nil {
		add("ip", f.IPv4.Contents)
	}
	if f.IPv6 != nil {
		add("ip", f.IPv6.Contents)
	}
	if f.TCP != nil {
		add("tcp", f.TCP.Contents)
	}
	if f.UDP != nil {
		add("udp", f.UDP.Contents)
	}
	s := &f.SMCLayers
	if s.GRH != nil {
		add("roce.grh", s.GRH.Contents)
	}
	if s.BTH != nil {
		add("roce.bth", s.BTH.Contents)
		if n := len(f.Data); n >= 4 {
			out["roce.icrc"] = span{n - 4, 4}
		}
	}
	if s.RETH != nil {
		add("roce.reth", s.RETH.Contents)
	}
	if s.AETH != nil {
		add("roce.aeth", s.AETH.Contents)
	}
	if s.ImmDt != nil {
		add("roce.immdt", s.ImmDt.Contents)
	}
	if s.IETH != nil {
		add("roce.ieth", s.IETH.Contents)
	}
	if s.DETH != nil {
		add("roce.deth", s.DETH.Contents)
	}
	if s.LLC != nil {
		add("smc.llc", s.LLC.Contents)
	}
	if s.CDC != nil {
		add("smc.cdc", s.CDC.Contents)
	}
	for _, c := range s.CLC {
		add("smc.clc", c.Contents)
	}
	return out
}

// hexDump formats data as output.Hex does (offset, 16 bytes, ASCII) and
// marks the bytes of sp with a highlight region.
func hexDump(data []byte, sp span) string {
	const digits = "0123456789abcdef"
	in := func(i int) bool { return sp.n > 0 && i >= sp.off && i < sp.off+sp.n }
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		for s := 12; s >= 0; s -= 4 {
			b.WriteByte(digits[off>>uint(s)&15])
		}
		b.WriteString("  ")
		for i := off; i < off+16; i++ {
			switch {
			case i >= len(data):
				b.WriteString("   ")
			case in(i):
				b.WriteString("[black:yellow]")
				b.WriteByte(digits[data[i]>>4])
				b.WriteByte(digits[data[i]&15])
				b.WriteString("[-:-] ")
			default:
				b.WriteByte(digits[data[i]>>4])
				b.WriteByte(digits[data[i]&15])
				b.WriteByte(' ')
			}
			if i == off+7 {
				b.WriteByte(' ')
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}
