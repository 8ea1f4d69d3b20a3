package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// Link types this package decodes. LINKTYPE_RAW has three numbers in the
// wild (101 in files, DLT_RAW 12 or 14 on some BSDs), and 228/229 are the
// version-specific raw variants.
const (
	linkTypeRawBSD12 layers.LinkType = 12
	linkTypeRawBSD14 layers.LinkType = 14
)

// SupportedLinkType reports whether a capture of link type lt can be decoded.
func SupportedLinkType(lt layers.LinkType) bool {
	switch lt {
	case layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2,
		layers.LinkTypeRaw, linkTypeRawBSD12, linkTypeRawBSD14, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		return true
	}
	return false
}

// vlanStack decodes up to two stacked 802.1Q/802.1ad tags (QinQ) into
// separate structs: a single layers.Dot1Q in the parser would be
// overwritten by the inner tag.
type vlanStack struct {
	tags [2]layers.Dot1Q
	n    int // tags decoded in this frame
	cur  int // index of the tag decoded last
}

func (v *vlanStack) reset() { v.n, v.cur = 0, 0 }

func (v *vlanStack) NextLayerType() gopacket.LayerType { return v.tags[v.cur].NextLayerType() }

func (v *vlanStack) LayerPayload() []byte { return v.tags[v.cur].Payload }

func (v *vlanStack) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	i := v.n
	if i >= len(v.tags) {
		i = len(v.tags) - 1 // a third tag overwrites the inner one
	}
	v.cur = i
	if err := v.tags[i].DecodeFromBytes(data, df); err != nil {
		return err
	}
	v.n = i + 1
	return nil
}

// udpLayer is layers.UDP whose next layer is the BTH on the RoCEv2
// destination port and nothing otherwise: it spares the per-frame lookup in
// gopacket's port table, and keeps a UDP datagram *from* port 4791 (which
// that table would also send to the BTH) out of the RoCE decoders.
type udpLayer struct{ layers.UDP }

func (u *udpLayer) NextLayerType() gopacket.LayerType {
	if u.DstPort == decode.UDPPortRoCEv2 {
		return decode.LayerTypeBTH
	}
	if decode.IsDump(u.Payload) { // ANCK's dump device uses the connection's ports
		return decode.LayerTypeSMCDump
	}
	switch u.DstPort {
	case udpPortVXLAN:
		return layers.LayerTypeVXLAN
	case udpPortGeneve:
		return layers.LayerTypeGeneve
	}
	return gopacket.LayerTypeZero
}

// udpNext is the layer after f's UDP header (udpLayer.NextLayerType),
// RoCEv2's for a datagram roceByICRC takes.
func (d *Decoder) udpNext(f *Frame) gopacket.LayerType {
	if t := d.udp.NextLayerType(); t != gopacket.LayerTypeZero || !roceByICRC(f, &d.udp.UDP) {
		return t
	}
	return decode.LayerTypeBTH
}

// roceByICRC reports whether UDP datagram u of f, sent to a port one byte
// off RoCEv2's, is a RoCEv2 packet whose destination port the capture's
// copy damaged: its ICRC, which covers the port, verifies with 4791. It
// is then decoded as one, its ICRC failing (Frame.ICRCMend names the
// byte). Other ports cost no check.
func roceByICRC(f *Frame, u *layers.UDP) bool {
	p, r := uint16(u.DstPort), uint16(decode.UDPPortRoCEv2)
	if p>>8 != r>>8 && p&0xFF != r&0xFF || len(u.Payload) < 12+4 || f.Cut {
		return false
	}
	var ip []byte
	switch {
	case f.IPv4 != nil && cap(f.IPv4.Payload) == cap(u.Contents):
		ip = f.Data[cap(f.Data)-cap(f.IPv4.Contents):]
	case f.IPv6 != nil && cap(f.IPv6.Payload) == cap(u.Contents):
		ip = f.Data[cap(f.Data)-cap(f.IPv6.Contents):]
	default:
		return false
	}
	at := cap(ip) - cap(u.Contents) // the UDP header's offset in ip
	ip = bytes.Clone(ip)
	binary.BigEndian.PutUint16(ip[at+2:], r)
	_, err := decode.ICRCRoCEv2(ip)
	return err == nil
}

// Decoder turns raw frames of one link type into a Frame. It owns every
// layer struct and reuses them, so decoding a frame does not allocate.
//
// The layers are chained by hand (decodeChain) rather than by gopacket's
// DecodingLayerParser: its container lookup, interface calls and a second
// pass to attach the layers cost more than decoding the headers of a RoCE
// frame, and the chain can stop at the deepest layer a consumer needs.
type Decoder struct {
	linkType layers.LinkType

	eth  layers.Ethernet
	vlan vlanStack
	sll  layers.LinuxSLL
	sll2 layers.LinuxSLL2
	ip4  layers.IPv4
	ip6  layers.IPv6
	tcp  layers.TCP
	udp  udpLayer
	roce roceLayers
	dump decode.DumpHdr
	// tunnel: a mirror's or an overlay's encapsulation (Frame.Tunnel).
	tunnel tunnelLayers
	// dumpLearn: what this capture's dump device frames taught so far.
	dumpLearn decode.DumpLearner

	first     gopacket.LayerType // layer the link type starts with (zero: raw IP)
	truncated bool               // DecodeFeedback of the frame being decoded
	// depth is the deepest layer decoded (all when zero): see SetDepth.
	depth Depth
}

// Depth limits how far Decode goes down the protocol stack: consumers that
// read only the outer headers (a -T fields column of the BTH, say) do not
// pay for decoding what lies beneath.
type Depth uint8

// Depths, from the deepest. TCP and UDP are always decoded: the CLC
// reassembly and the choice of SMC-relevant frames need them.
const (
	DepthAll       Depth = iota // every layer, SMC messages included
	DepthTransport              // up to the BTH and its extension headers; no LLC, CDC
	DepthBTH                    // up to the BTH; no extension headers
)

// SetTruncated implements gopacket.DecodeFeedback.
func (d *Decoder) SetTruncated() { d.truncated = true }

// NewDecoder returns a Decoder for frames of link type lt.
func NewDecoder(lt layers.LinkType) (*Decoder, error) {
	if !SupportedLinkType(lt) {
		return nil, &FileError{Err: ErrUnsupportedLink}
	}
	d := &Decoder{linkType: lt}
	switch lt {
	case layers.LinkTypeEthernet:
		d.first = layers.LayerTypeEthernet
	case layers.LinkTypeLinuxSLL:
		d.first = layers.LayerTypeLinuxSLL
	case layers.LinkTypeLinuxSLL2:
		d.first = layers.LayerTypeLinuxSLL2
	}
	return d, nil
}

// LinkType is the link type the decoder was made for.
func (d *Decoder) LinkType() layers.LinkType { return d.linkType }

// SetDepth limits decoding to the layers down to depth (DepthAll: every
// layer, the default).
func (d *Decoder) SetDepth(depth Depth) { d.depth = depth }

// Decode decodes f.Data into f, resetting every per-frame field except
// Number, CI and Data.
func (d *Decoder) Decode(f *Frame) { d.decode(f, true) }

// decode is Decode; outer picks the straight-line decoding of the usual
// outer layers (decodeOuter), which the tests compare with the loop alone.
func (d *Decoder) decode(f *Frame, outer bool) {
	f.reset()
	f.LinkType = d.linkType
	d.vlan.reset()
	first := d.first
	if first == gopacket.LayerTypeZero { // raw IP: the version nibble picks the first layer
		first = layers.LayerTypeIPv4
		if len(f.Data) > 0 && f.Data[0]>>4 == 6 {
			first = layers.LayerTypeIPv6
		}
	}
	d.truncated = false
	d.decodeChain(f, first, outer)
	f.Truncated = d.truncated
	if f.Truncated && !f.Cut {
		// gopacket's IPv4 and UDP layers take what a frame holds when a
		// length field claims more, and only call the frame truncated:
		// on a frame captured whole, the field is wrong.
		if err := lengthClaim(f); err != nil {
			f.LengthBad = true
			f.Err = err // the outermost error: it explains the layers after
		} else if f.Tunnel != nil {
			// The carried frame's own lengths hold: what claimed more
			// was a tunnel's outer header (the mirror's or overlay's),
			// damaged in the capture's copy. The packet it carries is
			// whole, and its ICRC says whether its bytes are the
			// sender's.
			f.Truncated = false
		}
	}
	if f.TCP != nil && !f.TCP.SYN && len(f.TCP.Options) > 0 {
		f.mendSYNFlags()
	}
	if f.TCP != nil && f.TCP.SYN {
		f.SMCOption, f.SMCO = decode.SMCOptionKind(f.TCP.Options)
	}
	if f.BTH != nil {
		f.BTH.TrailerCut = f.Cut
		d.roce.checkICRC(f)
	}
}

// cutDecoder is an SMC message layer that decodes the start of a message
// the capture's snap length cut (decode.LLC, decode.CDC).
type cutDecoder interface {
	DecodeCut(data []byte, wire int) error
}

// bthWireLen is the length on the wire of the BTH packet of cut frame f,
// of which the capture holds have bytes: the UDP payload's (RoCEv2) or the
// GRH's (RoCEv1), by their length fields; have when neither says more.
func bthWireLen(f *Frame, have int) int {
	switch {
	case f.UDP != nil && int(f.UDP.Length) > 8:
		return max(have, int(f.UDP.Length)-8)
	case f.GRH != nil:
		return max(have, int(f.GRH.PayloadLen))
	}
	return have
}

// decodeChain decodes the layers of f.Data from typ on, attaching each to
// f as it goes, until a layer has no payload, names a next layer this
// package does not decode (not an error, as with gopacket's
// IgnoreUnsupported), lies below the decoder's depth, or fails: the first
// error is the frame's, and the layers decoded before it stay attached.
func (d *Decoder) decodeChain(f *Frame, typ gopacket.LayerType, outer bool) {
	defer func() {
		// gopacket's own layers may panic on hostile input; a frame
		// error is what the parser made of that too.
		if r := recover(); r != nil {
			f.Err = fmt.Errorf("panic: %v", r)
		}
	}()
	data := f.Data
	if outer && typ == layers.LayerTypeEthernet {
		typ, data = d.decodeOuter(f, data)
	}
	var err error
	for len(data) > 0 {
		var l gopacket.DecodingLayer
		cur := typ
		// A switch on layer types (variables, not constants) compares
		// them in order: the BTH, which the loop starts with for nearly
		// every frame (decodeOuter took the layers above it), first.
		switch typ {
		case decode.LayerTypeBTH:
			if f.Cut {
				err = d.roce.bth.DecodeCut(data, bthWireLen(f, len(data)), d)
			} else {
				err = d.roce.bth.DecodeFromBytes(data, d)
			}
			if err == nil {
				f.BTH = &d.roce.bth
				typ, data = d.roce.bth.NextLayerType(), d.roce.bth.Payload
				if d.depth >= DepthBTH {
					f.Decoded = append(f.Decoded, cur)
					return
				}
			}
		case layers.LayerTypeEthernet:
			if err = d.eth.DecodeFromBytes(data, d); err == nil {
				f.Eth = &d.eth
				typ, data = d.eth.NextLayerType(), d.eth.Payload
				if et := d.eth.EthernetType; et >= 0x600 {
					if sent := etherTypeSent(f, et, data); sent != 0 {
						typ = sent
					}
				}
			}
		case layers.LayerTypeIPv4:
			if plainIPv4(data) {
				// What layers.IPv4 would make of it, without its option
				// parser and error paths: nearly every frame.
				d.decodePlainIPv4(data)
				err = nil
			} else if n := versionIHLDamaged(data); n > 0 {
				// Its header is the plain 20 bytes sent, read so; its
				// checksum, over the bytes held, shows the damage
				// (decode.IPv4HeaderSumOK).
				f.CLCErr = append(f.CLCErr, ipv4Note("version and header length", 0, uint16(data[0]), 0x45))
				d.decodePlainIPv4(data[:n])
				err = nil
			} else if shortLengthDamaged(data) {
				// Its segment is the frame's whole rest; the length the
				// capture damaged is kept to show.
				d.decodePlainIPv4(data)
				d.ip4.Length = binary.BigEndian.Uint16(data[2:4])
				err = nil
			} else if !f.Cut && longLengthDamaged(data) {
				// The packet is the frame's whole rest (a RoCE packet's
				// ICRC then covers the length as sent).
				held := binary.BigEndian.Uint16(data[2:4])
				f.CLCErr = append(f.CLCErr, ipv4Note("total length", 2, held, uint16(len(data))))
				d.decodePlainIPv4(data)
				err = nil
			} else if err = d.ip4.DecodeFromBytes(data, d); err == nil && d.ip4.Version != 4 {
				// layers.IPv4 takes any version nibble; a receiver
				// drops the packet (Linux's ip_rcv_core), so nothing
				// after the header is what reached the peer.
				err = &decode.Error{Layer: "IPv4", Field: "version", Offset: 0, Err: decode.ErrUnknownType,
					Detail: "version " + strconv.Itoa(int(d.ip4.Version)) + " in an IPv4 header"}
			}
			if err == nil {
				if p := d.ip4.Protocol; p != layers.IPProtocolTCP && p != layers.IPProtocolUDP && d.ip4.IHL == 5 {
					d.mendProtocol(f, data)
				}
				if d.ip4.IHL == 5 && (d.ip4.FragOffset != 0 || d.ip4.Flags&layers.IPv4MoreFragments != 0) {
					d.mendFragment(f, data)
				}
				f.IPv4 = &d.ip4
				typ, data = d.ip4.NextLayerType(), d.ip4.Payload
			}
		case layers.LayerTypeDot1Q:
			if err = d.vlan.DecodeFromBytes(data, d); err == nil {
				f.VLAN = d.vlan.tags[:d.vlan.n]
				typ, data = d.vlan.NextLayerType(), d.vlan.LayerPayload()
			}
		case layers.LayerTypeLinuxSLL:
			if err = d.sll.DecodeFromBytes(data, d); err == nil {
				f.SLL = &d.sll
				typ, data = d.sll.NextLayerType(), d.sll.Payload
			}
		case layers.LayerTypeLinuxSLL2:
			if err = d.sll2.DecodeFromBytes(data, d); err == nil {
				f.SLL2 = &d.sll2
				typ, data = d.sll2.NextLayerType(), d.sll2.Payload
			}
		case layers.LayerTypeIPv6:
			if err = d.ip6.DecodeFromBytes(data, d); err == nil {
				f.IPv6 = &d.ip6
				typ, data = d.ip6.NextLayerType(), d.ip6.Payload
			}
		case layers.LayerTypeTCP:
			if err = d.tcp.DecodeFromBytes(data, d); err == nil {
				f.TCP = &d.tcp
				typ = gopacket.LayerTypeZero // the CLC reassembler reads the payload
			}
		case decode.LayerTypeSMCDump:
			if err = d.dump.DecodeWith(data, &d.dumpLearn, f.Number); err == nil {
				f.Dump = &d.dump
				typ = gopacket.LayerTypeZero
				if d.depth == DepthAll && d.dump.Kind == decode.DumpCDC && d.dump.Mode == 1 {
					// The CDC inside: decoded as on a link, credits
					// byte included (the dump device is ANCK's).
					f.Decoded = append(f.Decoded, cur)
					cur = decode.LayerTypeCDC
					if err = d.roce.cdc.DecodeFromBytes(d.dump.CDCBytes(), d); err == nil {
						d.roce.cdc.ANCK = true
						f.CDC = &d.roce.cdc
					}
				}
			}
		case layers.LayerTypeUDP:
			if err = d.udp.DecodeFromBytes(data, d); err == nil {
				f.UDP = &d.udp.UDP
				typ, data = d.udpNext(f), d.udp.Payload
			}
		default:
			if l = d.roce.layer(typ, d.depth); l == nil {
				var ok bool
				if typ, data, ok, err = d.decodeTunnel(f, typ, data); !ok {
					return
				}
				break
			}
			var c cutDecoder
			if f.Cut && f.BTH != nil && f.BTH.TrailerCut {
				c, _ = l.(cutDecoder)
			}
			if c != nil {
				// The SMC message of a packet the capture cut, as far as
				// it holds it.
				err = c.DecodeCut(data, f.BTH.DataWireLen())
			} else {
				err = l.DecodeFromBytes(data, d)
			}
			if err == nil {
				d.roce.attach(typ, f)
				typ, data = l.NextLayerType(), l.LayerPayload()
			}
		}
		if err != nil {
			if f.Cut && cutShort(cur, data, err) {
				// The snap length cut the layer, the sender did not: the
				// frame says it is cut (frame.cut), and is no error.
				if cur == layers.LayerTypeTCP && decodeTCPCut(&d.tcp, data) {
					f.TCPCut = &d.tcp
				}
				return
			}
			f.Err = layerError(cur, data, err)
			return
		}
		f.Decoded = append(f.Decoded, cur)
	}
}

// cutShort reports whether err, of decoding layer typ from data, says only
// that the layer's bytes end too soon: a frame the snap length cut. The
// RoCE and SMC layers say so (decode.ErrTruncated); gopacket's TCP layer
// refuses a header longer than the bytes with an error of its own.
func cutShort(typ gopacket.LayerType, data []byte, err error) bool {
	if errors.Is(err, decode.ErrTruncated) {
		return true
	}
	return typ == layers.LayerTypeTCP && (len(data) < 20 || len(data) < int(data[12]>>4)*4)
}

// plainIPv4 reports an IPv4 header without options whose total length is
// exactly the bytes that follow (no Ethernet padding, not cut).
func plainIPv4(b []byte) bool {
	return len(b) >= 20 && b[0] == 0x45 && int(binary.BigEndian.Uint16(b[2:4])) == len(b)
}

// ErrEtherTypeMended notes a frame whose EtherType the capture damaged
// (etherTypeDamaged, etherTypeDamagedIPv6), read as IPv4 or IPv6.
var ErrEtherTypeMended = fmt.Errorf("EtherType %w", ErrMended)

// etherTypeNote is the note of a frame whose EtherType et the capture
// damaged (etherTypeDamaged, or etherTypeDamagedIPv6 where v6).
func etherTypeNote(et layers.EthernetType, v6 bool) error {
	what := "a whole IPv4 header whose checksum verifies: read as IPv4"
	if v6 {
		what = "an IPv6 header whose TCP segment's checksum verifies: read as IPv6"
	}
	return &decode.Error{Layer: "Ethernet", Field: "type", Offset: 12, Err: ErrEtherTypeMended,
		Detail: fmt.Sprintf("EtherType %#04x ahead of %s", uint16(et), what)}
}

// etherTypeSent is the layer the payload b of an Ethernet frame f whose
// EtherType et is not IPv4's was sent as where the capture damaged et
// (etherTypeDamaged, etherTypeDamagedIPv6), with a note on f; 0 where et
// is as sent.
func etherTypeSent(f *Frame, et layers.EthernetType, b []byte) gopacket.LayerType {
	switch {
	case et == layers.EthernetTypeIPv4:
	case etherTypeDamaged(b):
		f.CLCErr = append(f.CLCErr, etherTypeNote(et, false))
		return layers.LayerTypeIPv4
	case et != layers.EthernetTypeIPv6 && etherTypeDamagedIPv6(b):
		f.CLCErr = append(f.CLCErr, etherTypeNote(et, true))
		return layers.LayerTypeIPv6
	}
	return 0
}

// etherTypeDamagedIPv6 reports whether b, the payload of an Ethernet
// frame whose EtherType is neither IPv4's nor IPv6's, is an IPv6 header
// with no extension header followed by a TCP segment that fills b (its
// payload length) and whose checksum, filled in (not left to the NIC),
// verifies over the IPv6 pseudo-header (RFC 8200 section 8.1): the
// capture's copy has the EtherType damaged, as etherTypeDamaged says of
// IPv4. IPv6 has no header checksum; the segment's covers both addresses,
// the length and every byte after the header, which no other payload
// matches. (A RoCEv1 GRH, whose first nibble is 6 too, names the BTH as
// its next header; RoCEv2's UDP checksum is 0: neither is taken.)
func etherTypeDamagedIPv6(b []byte) bool {
	if len(b) < 60 || b[0]>>4 != 6 || b[6] != byte(layers.IPProtocolTCP) || int(binary.BigEndian.Uint16(b[4:6])) != len(b)-40 {
		return false
	}
	seg := b[40:]
	hl := int(seg[12]>>4) * 4
	if hl < 20 || hl > len(seg) {
		return false
	}
	pseudo := pseudoSum(b[8:24], b[24:40], len(seg))
	got := binary.BigEndian.Uint16(seg[16:18])
	return got != ^gopacket.FoldChecksum(pseudo) && headerSum(seg[:hl], seg[hl:], pseudo, seg[:4]) == got
}

// etherTypeDamaged reports whether b, the payload of an Ethernet frame
// whose EtherType is not IPv4's, is a plain IPv4 header of a TCP or UDP
// packet whose checksum is filled in and verifies, its total length b's
// (or within b in a frame padded to Ethernet's 60 bytes): the capture's
// copy has the EtherType damaged. Only the frame check sequence covers
// the EtherType, and a NIC or switch drops a frame whose FCS fails before
// a capture point sees it, so the frame was sent as IPv4 and taken so.
// No other protocol's payload starts with a header that verifies as one.
func etherTypeDamaged(b []byte) bool {
	if len(b) < 20 || b[0] != 0x45 || b[9] != byte(layers.IPProtocolTCP) && b[9] != byte(layers.IPProtocolUDP) || b[10]|b[11] == 0 {
		return false
	}
	if n := int(binary.BigEndian.Uint16(b[2:4])); n != len(b) && (len(b) != 46 || n < 20 || n > len(b)) {
		return false
	}
	return decode.IPv4Header20SumOK((*[20]byte)(b[:20]))
}

// shortLengthDamaged reports a plain IPv4 header of a TCP segment whose
// total length claims fewer bytes than follow it and whose checksum fails,
// but verifies with the length those bytes give (lengthDamaged): the
// segment is read whole, not cut inside its TCP header or payload.
// Ethernet padding after a short packet leaves the checksum verifying
// with the length carried: not this.
func shortLengthDamaged(b []byte) bool {
	return len(b) >= 40 && b[9] == byte(layers.IPProtocolTCP) && lengthDamaged(b) < 0
}

// longLengthDamaged reports a plain IPv4 header whose total length claims
// more bytes than the frame holds after it, the capture's damage
// (lengthDamaged), not a packet that claims more than it carries.
func longLengthDamaged(b []byte) bool { return lengthDamaged(b) > 0 }

// lengthDamaged compares with the bytes b holds the total length of the
// plain IPv4 header at its start where its checksum fails as held but
// verifies with those bytes' length (ipv4SentAs): the capture's copy has
// the length damaged (a receiver's IP layer drops a header whose checksum
// fails, ip_rcv_core in net/ipv4/ip_input.c, so the packet it took had the
// frame's length). It is 0 for any other header, one whose checksum was
// not filled in (0) among them.
func lengthDamaged(b []byte) int {
	if len(b) < 20 || len(b) > 0xFFFF || b[0] != 0x45 {
		return 0
	}
	held := int(binary.BigEndian.Uint16(b[2:4]))
	if held == len(b) || ipv4SentAs(b, 2, 2, []uint16{uint16(len(b))}) != 0 {
		return 0
	}
	return held - len(b)
}

// ipv4SentAs returns which of the values sent a field of the plain IPv4
// header at the start of b (size bytes at offset off) was sent with, -1
// for none: the first for which the header, whose checksum fails as held,
// verifies with it in the field's place. The capture's copy has that field
// damaged: its receiver's IP layer drops a header whose checksum fails
// (ip_rcv_core in net/ipv4/ip_input.c), so the packet it took was the one
// sent.
func ipv4SentAs(b []byte, off, size int, sent []uint16) int {
	if len(b) < 20 {
		return -1
	}
	var h [20]byte
	copy(h[:], b[:20])
	if decode.IPv4Header20SumOK(&h) {
		return -1 // verifies as held, or was not filled in (0)
	}
	for i, v := range sent {
		if size == 1 {
			h[off] = byte(v)
		} else {
			binary.BigEndian.PutUint16(h[off:], v)
		}
		if decode.IPv4Header20SumOK(&h) {
			return i
		}
	}
	return -1
}

// versionIHLDamaged reports, as the bytes the packet takes (its total
// length), an IPv4 header whose version and header length byte is not a
// plain header's (0x45) and whose checksum fails as held but verifies with
// 0x45 in its place (ipv4SentAs; a receiver also drops a header whose
// version is not 4). It returns 0 for any other header.
func versionIHLDamaged(b []byte) int {
	if len(b) < 20 || b[0] == 0x45 {
		return 0
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < 20 || n > len(b) || ipv4SentAs(b, 0, 1, []uint16{0x45}) < 0 {
		return 0
	}
	return n
}

// mendProtocol reads the plain IPv4 header at the start of b, whose
// protocol is neither TCP nor UDP, with TCP's or UDP's where its checksum
// fails as held and verifies with that protocol in its place (ipv4SentAs),
// with a note on f; or with TCP's where the header's checksum field is
// damaged too and what follows the header verifies as a TCP segment
// (tcpAsSent). Other protocols are rare on an SMC capture, and a
// checksum that verifies keeps them.
func (d *Decoder) mendProtocol(f *Frame, b []byte) {
	sent := [...]uint16{uint16(layers.IPProtocolTCP), uint16(layers.IPProtocolUDP)}
	i := ipv4SentAs(b, 9, 1, sent[:])
	switch {
	case i >= 0:
	case len(b) >= 20 && !decode.IPv4HeaderSumOK(b[:20]) && tcpAsSent(b[:20], d.ip4.Payload):
		i = 0
		f.CLCErr = append(f.CLCErr, &decode.Error{Layer: "IPv4", Field: "protocol", Offset: 9, Err: ErrIPv4Mended,
			Detail: fmt.Sprintf("%#x held, and the header's checksum fails; what follows verifies as a TCP segment: read as %#x", b[9], sent[0])})
		d.ip4.Protocol = layers.IPProtocolTCP
		return
	default:
		return
	}
	v := sent[i]
	f.CLCErr = append(f.CLCErr, ipv4Note("protocol", 9, uint16(b[9]), v))
	d.ip4.Protocol = layers.IPProtocol(v)
}

// tcpAsSent reports whether seg, the payload of the plain IPv4 header
// hdr, all of it held, is a TCP segment whose checksum verifies with
// TCP's pseudo-header: 16 bits that random bytes match once in 65536,
// besides a data offset that fits.
func tcpAsSent(hdr, seg []byte) bool {
	if int(binary.BigEndian.Uint16(hdr[2:4])) != 20+len(seg) || len(seg) < 20 {
		return false
	}
	off := int(seg[12]>>4) * 4
	if off < 20 || off > len(seg) {
		return false
	}
	got := binary.BigEndian.Uint16(seg[16:18])
	return headerSum(seg[:off], seg[off:], pseudoSum(hdr[12:16], hdr[16:20], len(seg)), seg[:4]) == got
}

// mendFragment reads the plain IPv4 header at the start of b, which says
// it is a fragment, as the whole packet (don't fragment, or no flags, at
// offset 0) where its checksum fails as held and verifies so (ipv4SentAs:
// its flags and fragment offset damaged), with a note on f. SMC's TCP
// segments and RoCEv2 packets are sent whole (Linux sets don't fragment on
// TCP; RoCEv2 fits the path MTU); a fragment whose checksum verifies stays
// one.
func (d *Decoder) mendFragment(f *Frame, b []byte) {
	sent := [...]uint16{uint16(layers.IPv4DontFragment) << 13, 0}
	i := ipv4SentAs(b, 6, 2, sent[:])
	if i < 0 {
		return
	}
	v := sent[i]
	f.CLCErr = append(f.CLCErr, ipv4Note("flags and fragment offset", 6, binary.BigEndian.Uint16(b[6:8]), v))
	d.ip4.Flags, d.ip4.FragOffset = layers.IPv4Flag(v>>13), 0
}

// ErrIPv4Mended notes an IPv4 header a field of which the capture
// damaged (ipv4SentAs), read as sent.
var ErrIPv4Mended = fmt.Errorf("field %w", ErrMended)

// ipv4Note is the note of an IPv4 header whose field (at offset off) the
// capture damaged: held, read as sent.
func ipv4Note(field string, off int, held, sent uint16) error {
	return &decode.Error{Layer: "IPv4", Field: field, Offset: off, Err: ErrIPv4Mended,
		Detail: fmt.Sprintf("%#x held, with which the header's checksum fails; it verifies with %#x: read as that", held, sent)}
}

// decodePlainIPv4 fills the IPv4 layer from a plain header (plainIPv4)
// field by field as layers.IPv4.DecodeFromBytes does.
func (d *Decoder) decodePlainIPv4(b []byte) {
	ip := &d.ip4
	ip.Version, ip.IHL = 4, 5
	ip.Length = uint16(len(b))
	ip.TOS = b[1]
	ip.Id = binary.BigEndian.Uint16(b[4:6])
	ff := binary.BigEndian.Uint16(b[6:8])
	ip.Flags, ip.FragOffset = layers.IPv4Flag(ff>>13), ff&0x1FFF
	ip.TTL = b[8]
	ip.Protocol = layers.IPProtocol(b[9])
	ip.Checksum = binary.BigEndian.Uint16(b[10:12])
	ip.SrcIP, ip.DstIP = b[12:16], b[16:20]
	ip.Options, ip.Padding = ip.Options[:0], nil
	ip.Contents, ip.Payload = b[:20], b[20:]
}

// decodeOuter decodes the outer layers of an Ethernet frame as the loop of
// decodeChain would, for the shape of nearly every frame: an Ethernet II
// header, a plain IPv4 header (plainIPv4) and, for an unfragmented UDP
// datagram whose length field is sound, the UDP header. It stops at the
// first layer that is anything else, and returns that layer's type and
// bytes for the loop to go on with. Straight-line code spares the loop's
// dispatch on the layer type for each of these layers, and gopacket's
// Ethernet decoder its store of a whole BaseLayer at once, which the CPU
// cannot forward to the loads that follow.
func (d *Decoder) decodeOuter(f *Frame, data []byte) (gopacket.LayerType, []byte) {
	if len(data) < 14 {
		return layers.LayerTypeEthernet, data
	}
	et := layers.EthernetType(binary.BigEndian.Uint16(data[12:14]))
	if et < 0x600 { // an 802.3 length: gopacket trims the payload to it
		return layers.LayerTypeEthernet, data
	}
	eth := &d.eth
	eth.DstMAC, eth.SrcMAC = data[0:6], data[6:12]
	eth.EthernetType, eth.Length = et, 0
	eth.Contents, eth.Payload = data[:14], data[14:]
	f.Eth = eth
	f.Decoded = append(f.Decoded, layers.LayerTypeEthernet)
	data = data[14:]
	if et != layers.EthernetTypeIPv4 {
		switch etherTypeSent(f, et, data) {
		case layers.LayerTypeIPv4:
		case layers.LayerTypeIPv6:
			return layers.LayerTypeIPv6, data
		default:
			return et.LayerType(), data
		}
	}
	if !plainIPv4(data) {
		return layers.LayerTypeIPv4, data
	}
	d.decodePlainIPv4(data)
	f.IPv4 = &d.ip4
	f.Decoded = append(f.Decoded, layers.LayerTypeIPv4)
	data = d.ip4.Payload
	ip := &d.ip4
	if ip.Protocol != layers.IPProtocolTCP && ip.Protocol != layers.IPProtocolUDP {
		d.mendProtocol(f, ip.Contents)
	}
	if ip.FragOffset != 0 || ip.Flags&layers.IPv4MoreFragments != 0 {
		d.mendFragment(f, ip.Contents)
	}
	if ip.Protocol != layers.IPProtocolUDP || ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset != 0 {
		return ip.NextLayerType(), data
	}
	// layers.UDP fails on fewer than 8 bytes and on a length field of 1
	// to 7 (0 is a jumbogram's): the loop reports those. The UDP layer
	// is gopacket's own decoder, since layers.UDP keeps the ports of its
	// TransportFlow in unexported fields.
	if len(data) < 8 {
		return layers.LayerTypeUDP, data
	}
	if n := binary.BigEndian.Uint16(data[4:6]); n != 0 && n < 8 {
		return layers.LayerTypeUDP, data
	}
	d.udp.DecodeFromBytes(data, d) // cannot fail: see above
	f.UDP = &d.udp.UDP
	f.Decoded = append(f.Decoded, layers.LayerTypeUDP)
	return d.udpNext(f), d.udp.Payload
}

// lengthClaim is the error of a whole frame's IP or UDP length field that
// claims more bytes than the frame holds, the outermost first; nil when
// none does.
func lengthClaim(f *Frame) error {
	claim := func(layer, field string, off, claimed, have int) error {
		return &decode.Error{Layer: layer, Field: field, Offset: off, Err: decode.ErrBadLength,
			Detail: strconv.Itoa(claimed) + " bytes claimed, " + strconv.Itoa(have) + " in the frame"}
	}
	switch {
	case f.IPv4 != nil:
		if have := len(f.IPv4.Contents) + len(f.IPv4.Payload); int(f.IPv4.Length) > have {
			return claim("IPv4", "total_length", 2, int(f.IPv4.Length), have)
		}
	case f.IPv6 != nil:
		if have := len(f.IPv6.Payload); int(f.IPv6.Length) > have {
			return claim("IPv6", "payload_length", 4, int(f.IPv6.Length), have)
		}
	}
	if u := f.UDP; u != nil && u.Length >= 8 {
		if have := len(u.Contents) + len(u.Payload); int(u.Length) > have {
			return claim("UDP", "length", 4, int(u.Length), have)
		}
	}
	return nil
}
