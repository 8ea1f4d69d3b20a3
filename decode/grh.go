package decode

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

const (
	grhLen     = 40
	grhNextBTH = 0x1B // IBA transport header follows (IB_GRH_NEXT_HDR)
)

// GRH is the InfiniBand Global Route Header that starts a RoCEv1 packet
// (EtherType 0x8915). It has the layout of an IPv6 header, with GIDs as
// addresses (IBTA vol. 1 §8.3, the GRH). SMC-R v1 uses RoCEv1, so its GIDs are
// the CLC/LLC GIDs.
type GRH struct {
	layers.BaseLayer
	Version      uint8      // offset 0, high 4 bits: 6
	TrafficClass uint8      // offset 0.4, 8 bits
	FlowLabel    uint32     // offset 1.4, 20 bits
	PayloadLen   uint16     // offset 4: bytes after the GRH, ICRC included
	NextHeader   uint8      // offset 6: 0x1B = BTH
	HopLimit     uint8      // offset 7
	SGID         netip.Addr // offset 8, 16 bytes
	DGID         netip.Addr // offset 24, 16 bytes
}

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType is LayerTypeBTH when the next header is 0x1B.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NextHeader == grhNextBTH {
		return LayerTypeBTH
	}
	return payloadOrZero(g.Payload)
}

// DecodeFromBytes decodes the 40-byte GRH. The payload is cut to PayLen,
// so Ethernet padding never reaches the BTH (whose last 4 bytes must be
// the ICRC).
// DecodeFromBytes decodes one GRH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := g.decode(data, df); err != nil {
		*g = GRH{}
		return err
	}
	return nil
}

func (g *GRH) decode(data []byte, df gopacket.DecodeFeedback) error {
	*g = GRH{}
	if len(data) < grhLen {
		df.SetTruncated()
		return Truncated("GRH", "", len(data), grhLen, len(data))
	}
	v := binary.BigEndian.Uint32(data[0:4])
	g.Version = uint8(v >> 28)
	g.TrafficClass = uint8(v >> 20)
	g.FlowLabel = v & 0xFFFFF
	g.PayloadLen = binary.BigEndian.Uint16(data[4:6])
	g.NextHeader = data[6]
	g.HopLimit = data[7]
	g.SGID = netip.AddrFrom16([16]byte(data[8:24]))
	g.DGID = netip.AddrFrom16([16]byte(data[24:40]))
	if g.Version != 6 {
		return &Error{Layer: "GRH", Field: "ipver", Offset: 0, Err: ErrReserved,
			Detail: "IPVer " + strconv.Itoa(int(g.Version)) + ", want 6"}
	}
	end := grhLen + int(g.PayloadLen)
	if end > len(data) {
		df.SetTruncated()
		return Truncated("GRH", "paylen", 4, end, len(data))
	}
	g.Contents = data[:grhLen]
	g.Payload = data[grhLen:end]
	return nil
}

// AppendFields adds the roce.grh.* fields.
func (g *GRH) AppendFields(r *Record) {
	r.AddUint(fGRHVersion, uint64(g.Version))
	r.AddUint(fGRHTClass, uint64(g.TrafficClass))
	r.AddUint(fGRHFlowLabel, uint64(g.FlowLabel))
	r.AddUint(fGRHPayLen, uint64(g.PayloadLen))
	r.AddUint(fGRHNextHeader, uint64(g.NextHeader))
	r.AddUint(fGRHHopLimit, uint64(g.HopLimit))
	r.AddAddr(fGRHSGID, g.SGID)
	r.AddAddr(fGRHDGID, g.DGID)
}

// AppendSummary appends "RoCEv1 fe80::1 > fe80::2".
func (g *GRH) AppendSummary(dst []byte) []byte {
	dst = append(dst, "RoCEv1 "...)
	dst = g.SGID.AppendTo(dst)
	dst = append(dst, " > "...)
	return g.DGID.AppendTo(dst)
}

// NetworkFlow is the flow between the two GIDs, as layers.IPv6 gives it
// for its addresses: a RoCEv1 GRH is RoCE's network layer, so gopacket
// users get Packet.NetworkLayer() and flows for RoCEv1 as for RoCEv2.
func (g *GRH) NetworkFlow() gopacket.Flow {
	s, d := g.SGID.As16(), g.DGID.As16()
	return gopacket.NewFlow(layers.EndpointIPv6, s[:], d[:])
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	p.SetNetworkLayer(g)
	return nextOrDone(p, g.NextLayerType(), g.Payload)
}

// GRH fields (IBTA vol. 1 §8.3), placed in the 40-byte GRH: IPVer (4
// bits), TClass (8) and FlowLabel (20) share the first 4 bytes, then
// PayLen, NxtHdr, HopLmt, SGID, DGID.
var (
	fGRHVersion    = Field(OwnerGRH, "roce.grh.version", KindUint, "GRH IP version (6)", At(0, 1, Bits(0xf0)))
	fGRHTClass     = Field(OwnerGRH, "roce.grh.tclass", KindUint, "GRH traffic class", Hex(), At(0, 2, Bits(0x0ff0)))
	fGRHFlowLabel  = Field(OwnerGRH, "roce.grh.flow_label", KindUint, "GRH flow label", Hex(), At(1, 3, Bits(0x0fffff)))
	fGRHPayLen     = Field(OwnerGRH, "roce.grh.paylen", KindUint, "GRH payload length (after the GRH, ICRC included)", At(4, 2))
	fGRHNextHeader = Field(OwnerGRH, "roce.grh.nxthdr", KindUint, "GRH next header (0x1b = BTH)", Hex(), At(6, 1))
	fGRHHopLimit   = Field(OwnerGRH, "roce.grh.hoplimit", KindUint, "GRH hop limit", At(7, 1))
	fGRHSGID       = Field(OwnerGRH, "roce.grh.sgid", KindAddr, "GRH source GID", At(8, 16))
	fGRHDGID       = Field(OwnerGRH, "roce.grh.dgid", KindAddr, "GRH destination GID", At(24, 16))
)
