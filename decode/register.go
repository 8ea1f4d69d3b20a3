package decode

import "github.com/gopacket/gopacket/layers"

// Port and EtherType numbers that lead gopacket to the RoCE layers.
const (
	// EtherTypeRoCEv1 is the EtherType of RoCEv1 (IBTA annex A16): a GRH
	// follows the Ethernet header.
	EtherTypeRoCEv1 layers.EthernetType = 0x8915
	// UDPPortRoCEv2 is the IANA port of RoCEv2 (IBTA annex A17). Only the
	// destination port identifies RoCEv2; the source port is flow entropy
	// (rxe derives it from the QPN, §5.1).
	UDPPortRoCEv2 layers.UDPPort = 4791
)

// This is the only place in smcscope that writes gopacket's tables, so
// that importing decode is enough for gopacket.NewPacket and
// DecodingLayerParser to reach the BTH of every RoCE frame:
// Ethernet -> GRH -> BTH (RoCEv1) and Ethernet -> IP -> UDP -> BTH (RoCEv2).
//
// gopacket's UDP layer looks up the destination port first and the source
// port only when the destination is unknown to it, so a RoCEv2 frame whose
// entropy source port happens to be a registered one stays on the BTH path.
func init() {
	layers.EthernetTypeMetadata[EtherTypeRoCEv1] = layers.EnumMetadata{
		DecodeWith: LayerTypeGRH,
		Name:       "RoCEv1",
		LayerType:  LayerTypeGRH,
	}
	layers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
}
