package decode

import (
	"encoding/binary"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// The extension headers that follow the BTH (IBTA
// vol. 1 §9.3). Each layer knows only its own bytes, so after RETH, AETH,
// DETH, ImmDt and IETH the chain continues as gopacket.Payload. Where IBTA
// stacks a second header behind the first — RDMA WRITE Only with
// Immediate (RETH, ImmDt), UD SEND Only with Immediate (DETH, ImmDt), and
// the RD requests (DETH, then RETH/ImmDt/AtomicETH) — that header stays at
// the front of the payload; BTH.Data and BTH.Imm know the whole chain and
// give the data and the immediate value. SMC-R never sends these.

const (
	rethLen  = 16
	aethLen  = 4
	immDtLen = 4
	iethLen  = 4
	dethLen  = 8
)

// RETH is the RDMA Extended Transport Header of RDMA WRITE First/Only and
// RDMA READ Request. For SMC-R it names the peer's RMB: VA = RMB VA +
// producer cursor, RKey = the rkey from CLC or CONFIRM RKEY (§4.5).
type RETH struct {
	layers.BaseLayer
	VA     uint64 // offset 0, 8 bytes: virtual address
	RKey   uint32 // offset 8: remote key
	DMALen uint32 // offset 12: length of the whole message, not of this packet
}

// LayerType returns LayerTypeRETH.
func (h *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (h *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// NextLayerType returns gopacket.LayerTypePayload (see the note above RETH
// on WRITE Only with Immediate).
func (h *RETH) NextLayerType() gopacket.LayerType { return payloadOrZero(h.Payload) }

// DecodeFromBytes decodes the 16-byte RETH.
// DecodeFromBytes decodes one RETH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (h *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.decode(data, df); err != nil {
		*h = RETH{}
		return err
	}
	return nil
}

func (h *RETH) decode(data []byte, df gopacket.DecodeFeedback) error {
	*h = RETH{}
	if len(data) < rethLen {
		df.SetTruncated()
		return Truncated("RETH", "", len(data), rethLen, len(data))
	}
	h.VA = binary.BigEndian.Uint64(data[0:8])
	h.RKey = binary.BigEndian.Uint32(data[8:12])
	h.DMALen = binary.BigEndian.Uint32(data[12:16])
	h.Contents = data[:rethLen]
	h.Payload = data[rethLen:]
	return nil
}

// AppendFields adds roce.reth.va, roce.reth.rkey and roce.reth.len.
func (h *RETH) AppendFields(r *Record) {
	r.AddUint(fRETHVA, h.VA)
	r.AddUint(fRETHRKey, uint64(h.RKey))
	r.AddUint(fRETHLen, uint64(h.DMALen))
}

// AppendSummary continues the BTH line: " VA 0xff30243b84730000 rkey 0x3a9 len 24".
func (h *RETH) AppendSummary(dst []byte) []byte {
	dst = append(dst, " VA 0x"...)
	dst = numfmt.AppendHex(dst, h.VA)
	dst = append(dst, " rkey 0x"...)
	dst = numfmt.AppendHex(dst, uint64(h.RKey))
	dst = append(dst, " len "...)
	return numfmt.AppendUint(dst, uint64(h.DMALen))
}

// AETHType is what an AETH syndrome says: ACK, RNR NAK or NAK.
type AETHType uint8

// AETH syndrome types (syndrome bits 0x60; IBTA table 43).
const (
	AETHAck      AETHType = 0 // ACK; low 5 bits = credit count
	AETHRNRNak   AETHType = 1 // receiver not ready; low 5 bits = RNR timer
	AETHReserved AETHType = 2
	AETHNak      AETHType = 3 // NAK; low 5 bits = NAK code
)

var aethTypeNames = [4]string{"ACK", "RNR NAK", "reserved", "NAK"}

func (t AETHType) String() string { return aethTypeNames[t&3] }

// NAKCode is the low five bits of a NAK syndrome.
type NAKCode uint8

// NAK codes (IBTA table 44; Linux AETH_NAK_*).
const (
	NAKPSNSeqError   NAKCode = 0 // AETH_NAK_PSN_SEQ_ERROR
	NAKInvalidReq    NAKCode = 1 // AETH_NAK_INVALID_REQ
	NAKRemAccessErr  NAKCode = 2 // AETH_NAK_REM_ACC_ERR
	NAKRemOpErr      NAKCode = 3 // AETH_NAK_REM_OP_ERR
	NAKInvalidRDReq  NAKCode = 4 // AETH_NAK_INV_RD_REQ
	nakCodeNamesSize         = 5
)

var nakCodeNames = [nakCodeNamesSize]string{
	"PSN sequence error", "invalid request", "remote access error",
	"remote operational error", "invalid RD request",
}

func (c NAKCode) String() string {
	if int(c) < len(nakCodeNames) {
		return nakCodeNames[c]
	}
	return "reserved NAK code " + strconv.Itoa(int(c))
}

// AETHSyndrome is the first byte of the AETH.
type AETHSyndrome uint8

// Type returns ACK, RNR NAK or NAK.
func (s AETHSyndrome) Type() AETHType { return AETHType(s>>5) & 3 }

// Code returns the low five bits: the credit count of an ACK (31 = no
// end-to-end credits, what rxe always sends), the RNR timer of an RNR NAK,
// or the NAKCode of a NAK.
func (s AETHSyndrome) Code() uint8 { return uint8(s) & 0x1F }

// String gives "ACK", "RNR NAK timer 5" or "NAK PSN sequence error".
func (s AETHSyndrome) String() string { return syndromeStrings[s] }

// syndromeStrings is every syndrome's String, made once: -V names the
// syndrome of every RoCE ACK.
var syndromeStrings = func() (n [256]string) {
	for s := range n {
		n[s] = string(AETHSyndrome(s).appendName(nil))
	}
	return n
}()

func (s AETHSyndrome) appendName(dst []byte) []byte {
	dst = append(dst, s.Type().String()...)
	switch s.Type() {
	case AETHRNRNak:
		dst = append(dst, " timer "...)
		dst = numfmt.AppendUint(dst, uint64(s.Code()))
	case AETHNak:
		dst = append(dst, ' ')
		dst = append(dst, NAKCode(s.Code()).String()...)
	}
	return dst
}

func aethSyndromeName(v uint64) string {
	if v > 0xFF {
		return ""
	}
	return AETHSyndrome(v).String()
}

func aethTypeName(v uint64) string {
	if v > 3 {
		return ""
	}
	return AETHType(v).String()
}

// AETH is the ACK Extended Transport Header of RC Acknowledge and RDMA
// READ responses.
type AETH struct {
	layers.BaseLayer
	Syndrome AETHSyndrome // offset 0
	MSN      uint32       // offset 1, 24 bits: message sequence number
}

// LayerType returns LayerTypeAETH.
func (h *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (h *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// NextLayerType returns gopacket.LayerTypePayload (READ response data, or
// the AtomicAckETH of an Atomic Acknowledge).
func (h *AETH) NextLayerType() gopacket.LayerType { return payloadOrZero(h.Payload) }

// DecodeFromBytes decodes the 4-byte AETH. A syndrome of the reserved
// type (bits 0x60 = 10) is an error.
// DecodeFromBytes decodes one AETH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (h *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.decode(data, df); err != nil {
		*h = AETH{}
		return err
	}
	return nil
}

func (h *AETH) decode(data []byte, df gopacket.DecodeFeedback) error {
	*h = AETH{}
	if len(data) < aethLen {
		df.SetTruncated()
		return Truncated("AETH", "", len(data), aethLen, len(data))
	}
	h.Syndrome = AETHSyndrome(data[0])
	h.MSN = u24(data[1:])
	h.Contents = data[:aethLen]
	h.Payload = data[aethLen:]
	if h.Syndrome.Type() == AETHReserved {
		return &Error{Layer: "AETH", Field: "syndrome", Offset: 0, Err: ErrReserved,
			Detail: "syndrome 0x" + string(appendHexPad(nil, uint64(h.Syndrome), 2))}
	}
	return nil
}

// AppendFields adds roce.aeth.syndrome, .type, .code and .msn.
func (h *AETH) AppendFields(r *Record) {
	r.AddUint(fAETHSyndrome, uint64(h.Syndrome))
	r.AddUint(fAETHType, uint64(h.Syndrome.Type()))
	r.AddUint(fAETHCode, uint64(h.Syndrome.Code()))
	r.AddUint(fAETHMSN, uint64(h.MSN))
}

// AppendSummary continues the BTH line: " MSN 3".
func (h *AETH) AppendSummary(dst []byte) []byte {
	dst = append(dst, " MSN "...)
	return numfmt.AppendUint(dst, uint64(h.MSN))
}

// ImmDt is the 4-byte immediate data of SEND/WRITE with Immediate. SMC-R
// upstream never sends it; the Alibaba RWWI variant puts a token and
// credits there (§5.9).
type ImmDt struct {
	layers.BaseLayer
	Imm uint32
}

// LayerType returns LayerTypeImmDt.
func (h *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (h *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// NextLayerType returns gopacket.LayerTypePayload.
func (h *ImmDt) NextLayerType() gopacket.LayerType { return payloadOrZero(h.Payload) }

// DecodeFromBytes decodes the 4-byte ImmDt.
// DecodeFromBytes decodes one ImmDt. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (h *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.decode(data, df); err != nil {
		*h = ImmDt{}
		return err
	}
	return nil
}

func (h *ImmDt) decode(data []byte, df gopacket.DecodeFeedback) error {
	*h = ImmDt{}
	if len(data) < immDtLen {
		df.SetTruncated()
		return Truncated("ImmDt", "", len(data), immDtLen, len(data))
	}
	h.Imm = binary.BigEndian.Uint32(data[:4])
	h.Contents = data[:immDtLen]
	h.Payload = data[immDtLen:]
	return nil
}

// AppendFields adds roce.immdt.
func (h *ImmDt) AppendFields(r *Record) { r.AddUint(fImmDt, uint64(h.Imm)) }

// AppendSummary continues the BTH line: " imm 0x...".
func (h *ImmDt) AppendSummary(dst []byte) []byte {
	dst = append(dst, " imm 0x"...)
	return appendHexPad(dst, uint64(h.Imm), 8)
}

// IETH is the Invalidate Extended Transport Header of SEND with Invalidate.
type IETH struct {
	layers.BaseLayer
	RKey uint32 // the remote key to invalidate
}

// LayerType returns LayerTypeIETH.
func (h *IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// CanDecode returns LayerTypeIETH.
func (h *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// NextLayerType returns gopacket.LayerTypePayload.
func (h *IETH) NextLayerType() gopacket.LayerType { return payloadOrZero(h.Payload) }

// DecodeFromBytes decodes the 4-byte IETH.
// DecodeFromBytes decodes one IETH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (h *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.decode(data, df); err != nil {
		*h = IETH{}
		return err
	}
	return nil
}

func (h *IETH) decode(data []byte, df gopacket.DecodeFeedback) error {
	*h = IETH{}
	if len(data) < iethLen {
		df.SetTruncated()
		return Truncated("IETH", "", len(data), iethLen, len(data))
	}
	h.RKey = binary.BigEndian.Uint32(data[:4])
	h.Contents = data[:iethLen]
	h.Payload = data[iethLen:]
	return nil
}

// AppendFields adds roce.ieth.rkey.
func (h *IETH) AppendFields(r *Record) { r.AddUint(fIETHRKey, uint64(h.RKey)) }

// AppendSummary continues the BTH line: " invalidate rkey 0x...".
func (h *IETH) AppendSummary(dst []byte) []byte {
	dst = append(dst, " invalidate rkey 0x"...)
	return numfmt.AppendHex(dst, uint64(h.RKey))
}

// DETH is the Datagram Extended Transport Header of UD (and RD) packets.
// rdma_cm's connection management MADs travel this way (QP1, Q_Key
// 0x80010000).
type DETH struct {
	layers.BaseLayer
	QKey  uint32 // offset 0
	SrcQP uint32 // offset 5, 24 bits (offset 4 reserved)
}

// LayerType returns LayerTypeDETH.
func (h *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns LayerTypeDETH.
func (h *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// NextLayerType returns gopacket.LayerTypePayload.
func (h *DETH) NextLayerType() gopacket.LayerType { return payloadOrZero(h.Payload) }

// DecodeFromBytes decodes the 8-byte DETH.
// DecodeFromBytes decodes one DETH. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (h *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := h.decode(data, df); err != nil {
		*h = DETH{}
		return err
	}
	return nil
}

func (h *DETH) decode(data []byte, df gopacket.DecodeFeedback) error {
	*h = DETH{}
	if len(data) < dethLen {
		df.SetTruncated()
		return Truncated("DETH", "", len(data), dethLen, len(data))
	}
	h.QKey = binary.BigEndian.Uint32(data[:4])
	h.SrcQP = u24(data[5:])
	h.Contents = data[:dethLen]
	h.Payload = data[dethLen:]
	return nil
}

// AppendFields adds roce.deth.qkey and roce.deth.srcqp.
func (h *DETH) AppendFields(r *Record) {
	r.AddUint(fDETHQKey, uint64(h.QKey))
	r.AddUint(fDETHSrcQP, uint64(h.SrcQP))
}

// AppendSummary continues the BTH line: " src QP 0x000001 qkey 0x80010000".
func (h *DETH) AppendSummary(dst []byte) []byte {
	dst = append(dst, " src QP 0x"...)
	dst = appendHexPad(dst, uint64(h.SrcQP), 6)
	dst = append(dst, " qkey 0x"...)
	return appendHexPad(dst, uint64(h.QKey), 8)
}

func payloadOrZero(p []byte) gopacket.LayerType {
	if len(p) == 0 {
		return gopacket.LayerTypeZero
	}
	return gopacket.LayerTypePayload
}

func decodeRETH(data []byte, p gopacket.PacketBuilder) error {
	h := &RETH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nextOrDone(p, h.NextLayerType(), h.Payload)
}

func decodeAETH(data []byte, p gopacket.PacketBuilder) error {
	h := &AETH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nextOrDone(p, h.NextLayerType(), h.Payload)
}

func decodeImmDt(data []byte, p gopacket.PacketBuilder) error {
	h := &ImmDt{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nextOrDone(p, h.NextLayerType(), h.Payload)
}

func decodeIETH(data []byte, p gopacket.PacketBuilder) error {
	h := &IETH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nextOrDone(p, h.NextLayerType(), h.Payload)
}

func decodeDETH(data []byte, p gopacket.PacketBuilder) error {
	h := &DETH{}
	if err := h.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(h)
	return nextOrDone(p, h.NextLayerType(), h.Payload)
}

// Extension header fields (IBTA vol. 1 §9.3), placed from the start of
// each header: RETH VA, R_Key, DMA length; the AETH syndrome byte (type in
// bits 0x60, code in 0x1f) then the 24-bit MSN; DETH Q_Key, a reserved
// byte, the 24-bit source QP. An ImmDt that the BTH reports from behind
// another header (see BTH.AppendFields) has no ImmDt layer to be placed in.
var (
	fRETHVA       = Field(OwnerRETH, "roce.reth.va", KindUint, "RETH virtual address", Hex(), At(0, 8), WiresharkName("infiniband.reth.va"))
	fRETHRKey     = Field(OwnerRETH, "roce.reth.rkey", KindUint, "RETH remote key", Hex(), At(8, 4), WiresharkName("infiniband.reth.r_key"))
	fRETHLen      = Field(OwnerRETH, "roce.reth.len", KindUint, "RETH DMA length (whole message)", At(12, 4), WiresharkName("infiniband.reth.dmalen"))
	fAETHSyndrome = Field(OwnerAETH, "roce.aeth.syndrome", KindUint, "AETH syndrome", Hex(), Enum(aethSyndromeName), At(0, 1), WiresharkName("infiniband.aeth.syndrome"))
	fAETHType     = Field(OwnerAETH, "roce.aeth.type", KindUint, "AETH syndrome type: 0 ACK, 1 RNR NAK, 3 NAK", Enum(aethTypeName), At(0, 1, Bits(0x60)), WiresharkName("infiniband.aeth.syndrome.opcode"))
	fAETHCode     = Field(OwnerAETH, "roce.aeth.code", KindUint, "AETH credit count (ACK), RNR timer or NAK code", At(0, 1, Bits(0x1f)))
	fAETHMSN      = Field(OwnerAETH, "roce.aeth.msn", KindUint, "AETH message sequence number", At(1, 3), WiresharkName("infiniband.aeth.msn"))
	fImmDt        = Field(OwnerImmDt, "roce.immdt", KindUint, "immediate data", Hex(), At(0, 4))
	fIETHRKey     = Field(OwnerIETH, "roce.ieth.rkey", KindUint, "IETH remote key to invalidate", Hex(), At(0, 4))
	fDETHQKey     = Field(OwnerDETH, "roce.deth.qkey", KindUint, "DETH queue key", Hex(), At(0, 4), WiresharkName("infiniband.deth.q_key"))
	fDETHSrcQP    = Field(OwnerDETH, "roce.deth.srcqp", KindUint, "DETH source queue pair number", Hex(), At(5, 3), WiresharkName("infiniband.deth.srcqp"))
)
