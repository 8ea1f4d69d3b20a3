package capture

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// TunnelKind is the encapsulation a mirror session or an overlay put a
// frame in.
type TunnelKind uint8

// Tunnel kinds.
const (
	TunnelNone    TunnelKind = iota
	TunnelGRE                // GRE carrying Ethernet (0x6558) or IP: RFC 2784, RFC 1701's key
	TunnelERSPAN1            // ERSPAN type I: GRE 0x88BE without a sequence number, no header of its own
	TunnelERSPAN2            // ERSPAN type II: GRE 0x88BE, an 8-byte header
	TunnelERSPAN3            // ERSPAN type III: GRE 0x22EB, a 12-byte header (+8 platform bytes)
	TunnelVXLAN              // VXLAN, UDP port 4789: RFC 7348 (cloud traffic mirroring)
	TunnelGeneve             // Geneve, UDP port 6081: RFC 8926
	numTunnelKinds
)

var tunnelNames = [numTunnelKinds]string{"", "GRE", "ERSPAN I", "ERSPAN II", "ERSPAN III", "VXLAN", "Geneve"}

func (k TunnelKind) String() string {
	if k < numTunnelKinds {
		return tunnelNames[k]
	}
	return "tunnel"
}

// Tunnel is the outermost-but-one view of a frame that a mirror session
// (ERSPAN, GRE) or an overlay (VXLAN, Geneve, as cloud traffic mirroring
// sends) carried: the layers of the Frame are those of the frame it
// carries, which is what SMC ran on; the tunnel keeps who carried it.
// With tunnels nested, the innermost.
type Tunnel struct {
	Kind     TunnelKind
	Src, Dst netip.Addr // the outer IP addresses
	// ID is the VXLAN or Geneve VNI, the ERSPAN session ID or the GRE
	// key (HasID).
	ID    uint32
	HasID bool
	// Truncated: the mirror cut the frame it carries (Frame.Cut is then
	// set: what follows is decoded as the start of a longer frame): the
	// ERSPAN header's T bit says so, or (Claimed) the frame's IP length
	// claims more bytes than the tunnel carried, as a mirror that cuts
	// its copies to a length without a flag for it does (VXLAN has none).
	Truncated bool
	// Claimed is the length the carried frame claims (its link header and
	// IP length) where that is more than the tunnel carried, Carried; 0
	// for a cut its T bit said.
	Claimed, Carried int
	// Seq is the GRE sequence number (RFC 2890; HasSeq): ERSPAN types II
	// and III always carry one, counting the session's mirrored frames
	// (Linux: __gre_xmit counts them in o_seqno, net/ipv4/ip_gre.c), so a step of
	// more than one is frames the collector never got.
	Seq    uint32
	HasSeq bool
	// Session is the mirror session that numbered the frame: the
	// outermost tunnel with a GRE sequence number where tunnels nest (an
	// ERSPAN session copying a port whose traffic is VXLAN, or a GRE
	// tunnel's frames mirrored again), else the tunnel itself. A capture's
	// mirror accounting follows it: the frames of one session are
	// numbered by it whatever else they carry.
	Session TunnelSession
}

// TunnelSession is a tunnel as a mirror session that numbers its frames:
// its kind, outer addresses, ID and GRE sequence number (HasSeq).
type TunnelSession struct {
	Kind     TunnelKind
	Src, Dst netip.Addr
	ID       uint32
	HasID    bool
	Seq      uint32
	HasSeq   bool
}

// AppendName appends the carrier as its users name it: "ERSPAN II
// session 7", "GRE key 9", "VXLAN VNI 77", "ERSPAN I".
func (t *Tunnel) AppendName(dst []byte) []byte {
	return appendTunnelName(dst, t.Kind, t.ID, t.HasID)
}

// AppendName appends the session as Tunnel.AppendName names a tunnel.
func (s *TunnelSession) AppendName(dst []byte) []byte {
	return appendTunnelName(dst, s.Kind, s.ID, s.HasID)
}

// Outer reports whether the session that numbered the frame is not the
// tunnel itself but one around it (Session).
func (t *Tunnel) Outer() bool {
	s := &t.Session
	return s.HasSeq && (s.Kind != t.Kind || s.ID != t.ID || s.HasID != t.HasID || s.Src != t.Src || s.Dst != t.Dst ||
		!t.HasSeq || s.Seq != t.Seq)
}

func appendTunnelName(dst []byte, k TunnelKind, id uint32, hasID bool) []byte {
	dst = append(dst, k.String()...)
	if !hasID {
		return dst
	}
	switch k {
	case TunnelGRE:
		dst = append(dst, " key "...)
	case TunnelVXLAN, TunnelGeneve:
		dst = append(dst, " VNI "...)
	default:
		dst = append(dst, " session "...)
	}
	return strconv.AppendUint(dst, uint64(id), 10)
}

// UndecodedGRE reports whether f, which no tunnel with a GRE sequence
// number carried, holds in its own outer headers a GRE frame that did not
// decode as one: a damaged version, length, ethertype, protocol or GRE
// header. It reads the headers where they lie, the damage being in what
// the decoder needed. With an IPv4 header whose checksum holds (a GRE
// frame the decoder could not read, not a later fragment) or IPv6, src
// and dst are its addresses (addrs); where the checksum fails, the
// frame is GRE by its protocol or ERSPAN's GRE protocol type after a
// 20-byte header, its addresses unknown. An ERSPAN I or GRE tunnel
// without a sequence number is one too (its S bit damaged, perhaps).
func (f *Frame) UndecodedGRE() (src, dst netip.Addr, addrs, ok bool) {
	if tn := f.Tunnel; tn != nil {
		return tn.Src, tn.Dst, true, tn.Kind == TunnelERSPAN1 || tn.Kind == TunnelGRE
	}
	d := f.Data
	var off int
	var et uint16
	switch f.LinkType {
	case layers.LinkTypeEthernet:
		var ok bool
		if et, off, ok = ethernetNetwork(d); !ok {
			return src, dst, false, false
		}
	case layers.LinkTypeLinuxSLL:
		if len(d) < 16 {
			return src, dst, false, false
		}
		off, et = 16, binary.BigEndian.Uint16(d[14:])
	case layers.LinkTypeLinuxSLL2:
		if len(d) < 20 {
			return src, dst, false, false
		}
		off, et = 20, binary.BigEndian.Uint16(d[0:])
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
	default:
		return src, dst, false, false
	}
	ip := d[off:]
	if len(ip) < 40 {
		return src, dst, false, false
	}
	if et == uint16(layers.EthernetTypeIPv6) || et == 0 && ip[0]>>4 == 6 {
		ok = ip[6] == byte(layers.IPProtocolGRE)
		return netip.AddrFrom16([16]byte(ip[8:24])), netip.AddrFrom16([16]byte(ip[24:40])), true, ok
	}
	if et != uint16(layers.EthernetTypeIPv4) && ip[0] != 0x45 {
		return src, dst, false, false
	}
	gre := ip[9] == byte(layers.IPProtocolGRE)
	if gp := layers.EthernetType(binary.BigEndian.Uint16(ip[22:])); !gre && gp != layers.EthernetTypeERSPAN && gp != greERSPAN3 {
		return src, dst, false, false
	}
	if !decode.IPv4HeaderSumOK(ip) {
		return src, dst, false, true
	}
	if !gre || binary.BigEndian.Uint16(ip[6:])&0x1fff != 0 {
		return src, dst, false, false
	}
	return netip.AddrFrom4([4]byte(ip[12:16])), netip.AddrFrom4([4]byte(ip[16:20])), true, true
}

// udpPortVXLAN and udpPortGeneve are the IANA ports of the overlays.
const (
	udpPortVXLAN  = 4789
	udpPortGeneve = 6081
)

// greERSPAN3 is ERSPAN type III's GRE protocol type
// (draft-foschiano-erspan), which gopacket does not name; type I and II
// share layers.EthernetTypeERSPAN.
const greERSPAN3 layers.EthernetType = 0x22EB

// tunnelLayers decodes the encapsulations; they are rare, so they stay
// out of the common frames' way (decodeChain reaches them last).
type tunnelLayers struct {
	gre    layers.GRE
	vxlan  layers.VXLAN
	geneve layers.Geneve
	erspan erspanHeader
	t      Tunnel
}

// erspanHeader is an ERSPAN type II or III header: a version (1: II, 2:
// III) in the top nibble, the VLAN, COS, encapsulation and T bits, the
// session ID; type III adds a timestamp word and a word whose low bit
// says an 8-byte platform-specific subheader follows.
type erspanHeader struct {
	kind      TunnelKind // TunnelERSPAN2 or TunnelERSPAN3
	truncated bool
	session   uint16
	payload   []byte
	next      gopacket.LayerType
}

func (e *erspanHeader) decode(data []byte) error {
	if len(data) < 8 {
		return errTunnel("ERSPAN", len(data), 8)
	}
	e.truncated = data[2]&0x04 != 0
	e.session = binary.BigEndian.Uint16(data[2:4]) & 0x03FF
	e.kind, e.next = TunnelERSPAN2, layers.LayerTypeEthernet
	n := 8
	switch data[0] >> 4 {
	case 1:
	case 2:
		e.kind, n = TunnelERSPAN3, 12
		if len(data) < n {
			return errTunnel("ERSPAN III", len(data), n)
		}
		if data[11]&0x01 != 0 { // O: the platform-specific subheader
			n += 8
		}
		if ft := data[10] >> 2 & 0x1F; ft != 0 { // frame type: 0 Ethernet
			e.next = gopacket.LayerTypeZero
		}
		if len(data) < n {
			return errTunnel("ERSPAN III", len(data), n)
		}
	default:
		e.next = gopacket.LayerTypeZero
	}
	e.payload = data[n:]
	return nil
}

func errTunnel(layer string, have, want int) error {
	return &decode.Error{Layer: layer, Field: "header", Offset: 0, Err: decode.ErrTruncated,
		Detail: strconv.Itoa(have) + " bytes, the header needs " + strconv.Itoa(want)}
}

// enterTunnel starts a tunnel of kind k in f: the outer addresses are kept, and
// the layers decoded so far, the carrier's, give way to the carried
// frame's.
func (d *Decoder) enterTunnel(f *Frame, k TunnelKind, id uint32, hasID bool) {
	t := &d.tunnel.t
	var outer TunnelSession
	if f.Tunnel != nil { // nested: f.Tunnel is t, the tunnel around this one
		outer = t.Session
	}
	*t = Tunnel{Kind: k, ID: id, HasID: hasID}
	if g := &d.tunnel.gre; k >= TunnelGRE && k <= TunnelERSPAN3 && g.SeqPresent {
		t.Seq, t.HasSeq = g.Seq, true
	}
	switch {
	case f.IPv4 != nil:
		t.Src, t.Dst = addr(f.IPv4.SrcIP), addr(f.IPv4.DstIP)
	case f.IPv6 != nil:
		t.Src, t.Dst = addr(f.IPv6.SrcIP), addr(f.IPv6.DstIP)
	}
	t.Session = TunnelSession{Kind: k, Src: t.Src, Dst: t.Dst, ID: id, HasID: hasID, Seq: t.Seq, HasSeq: t.HasSeq}
	if outer.HasSeq {
		t.Session = outer
	}
	f.Tunnel = t
	f.Eth, f.VLAN, f.SLL, f.SLL2 = nil, nil, nil, nil
	f.IPv4, f.IPv6, f.TCP, f.UDP = nil, nil, nil, nil
	d.vlan.reset()
}

// mirrorCut marks f cut by the mirror where the frame the tunnel carries,
// p (starting with layer next), claims more bytes than it holds: the
// sender of the tunnel cut it, the capture's record being whole.
func (d *Decoder) mirrorCut(f *Frame, p []byte, next gopacket.LayerType) {
	if f.Cut {
		return
	}
	if n := innerClaim(p, next); n > len(p) && !innerLengthDamaged(p, next) {
		t := &d.tunnel.t
		t.Truncated, t.Claimed, t.Carried = true, n, len(p)
		f.Cut = true
	}
}

// innerLengthDamaged reports a carried frame p (starting with layer next)
// whose IPv4 header's length claims more than p holds only because the
// capture damaged it (longLengthDamaged): no cut of the mirror's.
func innerLengthDamaged(p []byte, next gopacket.LayerType) bool {
	off, ok := innerIP(p, next)
	return ok && longLengthDamaged(p[off:])
}

// innerClaim returns the length a carried frame p, starting with layer
// next, claims for itself: its Ethernet and VLAN headers (ethernetNetwork)
// and its IP length; 0 where it has no IP header to say.
func innerClaim(p []byte, next gopacket.LayerType) int {
	if off, ok := innerIP(p, next); ok {
		return ipClaim(p, off)
	}
	return 0
}

// innerIP returns where the IPv4 or IPv6 header of a carried frame p,
// starting with layer next, begins: after its Ethernet and VLAN headers
// (ethernetNetwork), or at once.
func innerIP(p []byte, next gopacket.LayerType) (off int, ok bool) {
	switch next {
	case layers.LayerTypeEthernet:
		if et, off, ok := ethernetNetwork(p); ok && (et == uint16(layers.EthernetTypeIPv4) || et == uint16(layers.EthernetTypeIPv6)) {
			return off, off < len(p)
		}
	case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
		return 0, len(p) > 0
	}
	return 0, false
}

// ipClaim returns off plus the length the IPv4 or IPv6 header at off in p
// claims for its packet, 0 where there is none.
func ipClaim(p []byte, off int) int {
	if len(p) < off+6 {
		return 0
	}
	switch p[off] >> 4 {
	case 4:
		return off + int(binary.BigEndian.Uint16(p[off+2:off+4]))
	case 6:
		return off + 40 + int(binary.BigEndian.Uint16(p[off+4:off+6]))
	}
	return 0
}

// decodeTunnel decodes one encapsulation layer of type typ; ok is false
// for a layer type that is not one.
func (d *Decoder) decodeTunnel(f *Frame, typ gopacket.LayerType, data []byte) (next gopacket.LayerType, payload []byte, ok bool, err error) {
	tl := &d.tunnel
	switch typ {
	case layers.LayerTypeGRE:
		g := &tl.gre
		if err = g.DecodeFromBytes(data, d); err != nil {
			return 0, nil, true, err
		}
		payload = g.Payload
		switch g.Protocol {
		case layers.EthernetTypeERSPAN:
			if !g.SeqPresent {
				// Type I: the mirrored frame right after the GRE header.
				d.enterTunnel(f, TunnelERSPAN1, 0, false)
				d.mirrorCut(f, payload, layers.LayerTypeEthernet)
				return layers.LayerTypeEthernet, payload, true, nil
			}
			return layers.LayerTypeERSPANII, payload, true, nil
		case greERSPAN3:
			return layers.LayerTypeERSPANII, payload, true, nil
		case layers.EthernetTypeTransparentEthernetBridging, layers.EthernetTypeIPv4, layers.EthernetTypeIPv6:
			d.enterTunnel(f, TunnelGRE, g.Key, g.KeyPresent)
			d.mirrorCut(f, payload, g.Protocol.LayerType())
			return g.Protocol.LayerType(), payload, true, nil
		}
		return gopacket.LayerTypeZero, nil, true, nil
	case layers.LayerTypeERSPANII:
		e := &tl.erspan
		if err = e.decode(data); err != nil {
			return 0, nil, true, err
		}
		d.enterTunnel(f, e.kind, uint32(e.session), true)
		if n := innerClaim(e.payload, e.next); e.truncated && (n == 0 || n > len(e.payload)) {
			// A T bit on a frame whose IP length the bytes carried
			// fill is no cut (a switch truncates only what is longer
			// than its limit): the bit is damaged in the capture's
			// copy, and the frame's ICRC judges it as any other's.
			tl.t.Truncated = true
			f.Cut = true
		}
		d.mirrorCut(f, e.payload, e.next)
		return e.next, e.payload, true, nil
	case layers.LayerTypeVXLAN:
		v := &tl.vxlan
		if err = v.DecodeFromBytes(data, d); err != nil {
			return 0, nil, true, err
		}
		d.enterTunnel(f, TunnelVXLAN, v.VNI, v.ValidIDFlag)
		d.mirrorCut(f, v.Payload, layers.LayerTypeEthernet)
		return layers.LayerTypeEthernet, v.Payload, true, nil
	case layers.LayerTypeGeneve:
		g := &tl.geneve
		if err = g.DecodeFromBytes(data, d); err != nil {
			return 0, nil, true, err
		}
		d.enterTunnel(f, TunnelGeneve, g.VNI, true)
		d.mirrorCut(f, g.Payload, g.NextLayerType())
		return g.NextLayerType(), g.Payload, true, nil
	}
	return 0, nil, false, nil
}
