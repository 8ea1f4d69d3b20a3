package capture

import (
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

func (v *vlanStack) CanDecode() gopacket.LayerClass { return layers.LayerTypeDot1Q }

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
	return gopacket.LayerTypeZero
}

// Decoder turns raw frames of one link type into a Frame. It owns every
// layer struct and reuses them, so decoding a frame does not allocate.
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

	// One chain from the link layer to the SMC message: RoCEv1's GRH is
	// reached through the EtherType 0x8915 that package decode registers
	// in gopacket's table, RoCEv2's BTH through udpLayer.
	link, raw4, raw6 *gopacket.DecodingLayerParser
}

// NewDecoder returns a Decoder for frames of link type lt.
func NewDecoder(lt layers.LinkType) (*Decoder, error) {
	if !SupportedLinkType(lt) {
		return nil, &FileError{Err: ErrUnsupportedLink}
	}
	d := &Decoder{linkType: lt}
	dlc := gopacket.DecodingLayerContainer(gopacket.DecodingLayerSparse(nil))
	for _, l := range []gopacket.DecodingLayer{&d.eth, &d.vlan, &d.sll, &d.sll2, &d.ip4, &d.ip6, &d.tcp, &d.udp} {
		dlc = dlc.Put(l)
	}
	dlc = d.roce.put(dlc)
	parser := func(first gopacket.LayerType) *gopacket.DecodingLayerParser {
		p := gopacket.NewDecodingLayerParser(first)
		p.SetDecodingLayerContainer(dlc)
		p.IgnoreUnsupported = true
		return p
	}
	switch lt {
	case layers.LinkTypeEthernet:
		d.link = parser(layers.LayerTypeEthernet)
	case layers.LinkTypeLinuxSLL:
		d.link = parser(layers.LayerTypeLinuxSLL)
	case layers.LinkTypeLinuxSLL2:
		d.link = parser(layers.LayerTypeLinuxSLL2)
	}
	d.raw4 = parser(layers.LayerTypeIPv4)
	d.raw6 = parser(layers.LayerTypeIPv6)
	return d, nil
}

// LinkType is the link type the decoder was made for.
func (d *Decoder) LinkType() layers.LinkType { return d.linkType }

// Decode decodes f.Data into f, resetting every per-frame field except
// Number, CI and Data.
func (d *Decoder) Decode(f *Frame) {
	f.reset()
	f.LinkType = d.linkType
	d.vlan.reset()
	p := d.link
	if p == nil { // raw IP: the version nibble picks the first layer
		p = d.raw4
		if len(f.Data) > 0 && f.Data[0]>>4 == 6 {
			p = d.raw6
		}
	}
	err := p.DecodeLayers(f.Data, &f.Decoded)
	f.Truncated = p.Truncated
	if err != nil {
		f.Err = err
	}
	d.attach(f)
}

// attach points the frame at the layers decoded in this frame.
func (d *Decoder) attach(f *Frame) {
	for _, t := range f.Decoded {
		switch t {
		case layers.LayerTypeEthernet:
			f.Eth = &d.eth
		case layers.LayerTypeDot1Q:
			f.VLAN = d.vlan.tags[:d.vlan.n]
		case layers.LayerTypeLinuxSLL:
			f.SLL = &d.sll
		case layers.LayerTypeLinuxSLL2:
			f.SLL2 = &d.sll2
		case layers.LayerTypeIPv4:
			f.IPv4 = &d.ip4
		case layers.LayerTypeIPv6:
			f.IPv6 = &d.ip6
		case layers.LayerTypeTCP:
			f.TCP = &d.tcp
		case layers.LayerTypeUDP:
			f.UDP = &d.udp.UDP
		default:
			d.roce.attach(t, f)
		}
	}
	if f.TCP != nil && f.TCP.SYN {
		f.SMCOption = decode.SMCOption(f.TCP.Options)
	}
	if f.BTH != nil {
		d.roce.checkICRC(f)
	}
}
