// Package decode holds gopacket layers for SMC-R on the wire: the TCP SMC
// option, CLC messages carried in the TCP stream, the RoCEv1 GRH and the
// InfiniBand transport headers of RoCEv1/RoCEv2 (BTH and its extension
// headers, ICRC), and the SMC-R LLC and CDC messages carried in RC SENDs.
//
// Every layer implements gopacket.DecodingLayer and decodes without heap
// allocation on valid input, so one DecodingLayerParser can be reused for
// millions of frames. Errors name the layer, the field and the offset
// (see Error).
//
// Besides decoding, each layer appends its values to a Record under field
// names from one catalogue (see Field), which is what smcdump's -T fields,
// -G fields and -Y filters work on.
package decode
