package decode

import "github.com/gopacket/gopacket"

// SMC-R message sizes (SMC_WR_TX_SIZE 44 and SMC_WR_BUF_V2_SIZE in net/smc/smc_wr.h; struct smc_cdc_msg).
const (
	smcMsgLen   = 44   // SMC_WR_TX_SIZE: every v1 LLC, every CDC
	llcV2MaxLen = 8192 // SMC_WR_BUF_V2_SIZE
	cdcType     = 0xFE // SMC_CDC_MSG_TYPE
)

// SMCPayloadType tells whether the payload of an RC SEND is an SMC-R
// message: LayerTypeCDC for a 44-byte CDC (type 0xFE, length byte 44),
// LayerTypeLLC for a 44-byte v1 LLC (types 0x01..0x09) or a v2 LLC (types
// 0x21..0x29) whose 16-bit length — in either byte order, since Linux
// writes it in host order (§3.2) — equals len(p) and lies in 44..8192;
// gopacket.LayerTypePayload for anything else. The undefined v2 codes
// 0x23 and 0x28 are claimed too, so that such a message shows up as the
// LLC protocol violation it is (LLC.DecodeFromBytes: ErrUnknownType).
//
// The test is deliberately strict (exact length, known type codes) so
// that other RDMA users on the same wire — perftest, NCCL, rdma_cm, rping —
// are not mistaken for SMC; Wireshark's heuristic is the v1 half of it
// (§5.8).
func SMCPayloadType(p []byte) gopacket.LayerType { return smcPayloadType(p, len(p)) }

// DecodeSMCSend decodes p, the payload of an RC SEND on a queue pair known
// to be an SMC-R link (wire bytes on the wire, as CDC.DecodeCut and
// LLC.DecodeCut read them), as the SMC message its first byte names,
// whether or not SMCPayloadType took it: into c (isCDC, type 0xFE) or
// else l. An error is the message's malformation, field and offset.
func DecodeSMCSend(p []byte, wire int, c *CDC, l *LLC) (isCDC bool, err error) {
	if len(p) > 0 && p[0] == cdcType {
		return true, c.DecodeCut(p, wire)
	}
	return false, l.DecodeCut(p, wire)
}

// smcPayloadType is SMCPayloadType for a payload of wire bytes on the
// wire of which p is what the capture holds: the type and length bytes
// must be among them.
func smcPayloadType(p []byte, wire int) gopacket.LayerType {
	if wire < smcMsgLen || len(p) < 3 {
		return gopacket.LayerTypePayload
	}
	t := p[0]
	switch {
	case t == cdcType:
		if wire == smcMsgLen && p[1] == smcMsgLen {
			return LayerTypeCDC
		}
	case t >= 0x01 && t <= 0x0A: // 0x0A: ANCK's ANNOUNCE_CREDITS
		if wire == smcMsgLen && p[1] == smcMsgLen {
			return LayerTypeLLC
		}
	case t >= 0x21 && t <= 0x29:
		if wire > llcV2MaxLen {
			return gopacket.LayerTypePayload
		}
		le := int(p[1]) | int(p[2])<<8
		be := int(p[1])<<8 | int(p[2])
		if le == wire || be == wire {
			return LayerTypeLLC
		}
	}
	return gopacket.LayerTypePayload
}
