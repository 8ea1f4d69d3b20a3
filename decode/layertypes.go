package decode

import "github.com/gopacket/gopacket"

// Layer types of this package, from one block of gopacket's range for
// application layers (1000-1999).
var (
	LayerTypeCLC   = gopacket.RegisterLayerType(1700, gopacket.LayerTypeMetadata{Name: "SMC-CLC", Decoder: gopacket.DecodeFunc(decodeCLC)})
	LayerTypeGRH   = gopacket.RegisterLayerType(1701, gopacket.LayerTypeMetadata{Name: "IB-GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH   = gopacket.RegisterLayerType(1702, gopacket.LayerTypeMetadata{Name: "IB-BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeRETH  = gopacket.RegisterLayerType(1703, gopacket.LayerTypeMetadata{Name: "IB-RETH", Decoder: gopacket.DecodeFunc(decodeRETH)})
	LayerTypeAETH  = gopacket.RegisterLayerType(1704, gopacket.LayerTypeMetadata{Name: "IB-AETH", Decoder: gopacket.DecodeFunc(decodeAETH)})
	LayerTypeImmDt = gopacket.RegisterLayerType(1705, gopacket.LayerTypeMetadata{Name: "IB-ImmDt", Decoder: gopacket.DecodeFunc(decodeImmDt)})
	LayerTypeIETH  = gopacket.RegisterLayerType(1706, gopacket.LayerTypeMetadata{Name: "IB-IETH", Decoder: gopacket.DecodeFunc(decodeIETH)})
	LayerTypeDETH  = gopacket.RegisterLayerType(1707, gopacket.LayerTypeMetadata{Name: "IB-DETH", Decoder: gopacket.DecodeFunc(decodeDETH)})
	LayerTypeLLC   = gopacket.RegisterLayerType(1708, gopacket.LayerTypeMetadata{Name: "SMC-LLC", Decoder: gopacket.DecodeFunc(decodeLLC)})
	LayerTypeCDC   = gopacket.RegisterLayerType(1709, gopacket.LayerTypeMetadata{Name: "SMC-CDC", Decoder: gopacket.DecodeFunc(decodeCDC)})
	// LayerTypeSMCDump is ANCK's SMC dump device header (DumpHdr).
	LayerTypeSMCDump = gopacket.RegisterLayerType(1710, gopacket.LayerTypeMetadata{Name: "SMC-Dump", Decoder: gopacket.DecodeFunc(decodeSMCDump)})
)
