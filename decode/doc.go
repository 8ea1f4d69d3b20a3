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
// # Kernel generations
//
// A layer accepts what the Linux kernel of today accepts, and also the
// shapes older kernels sent (the 28-byte v2 CLC Decline of 5.10 to 5.15,
// CLCDecline.ShortV2), read for what they meant then. A CLC message that
// no kernel of today accepts is an error of DecodeFromBytes, which leaves
// nothing behind; CLC.DecodePartial decodes it as far as its bytes go, so
// that its fields can be shown beside the error.
//
// Besides decoding, each layer appends its values to a Record under field
// names from one catalogue (see Field), which is what smcdump's -T fields,
// -G fields and -Y filters work on.
package decode
