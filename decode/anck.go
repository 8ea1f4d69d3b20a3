package decode

import "github.com/smcscope/smcscope/internal/numfmt"

// Alibaba's kernel (ANCK, the Anolis Cloud Kernel of Alibaba Cloud Linux 3
// and Anolis OS 8) changes SMC-R on the wire in ways upstream Linux does
// not define. Each is decoded only where the wire says it is ANCK's: the
// Alibaba vendor OUI in a Proposal (and then the rest of that handshake,
// which the capture reader marks with CLC.ANCK), the queue pairs such a
// handshake set up (CDC.ANCK, LLC.ANCK), or a code or magic no upstream
// kernel sends (the "SMCO" SYN-ACK option, LLC type 0x0A, the dump
// device's header). Upstream captures decode exactly as before.

// AlibabaOUI is SMC_VENDOR_OUI_ALIBABA (ANCK net/smc/smc_clc.h): the
// vendor_oui of a Proposal's struct smc_clc_msg_smcd that makes its vendor
// experimental options Alibaba's.
var AlibabaOUI = [3]byte{0xFC, 0xA6, 0x4C}

// AliOptions is byte 0 of struct smc_clc_vendor_opt_ali (ANCK
// net/smc/smc_clc.h): which ANCK features a side offers (Proposal) or the
// handshake agreed (the first-contact extension of Accept and Confirm).
type AliOptions uint8

// Alibaba vendor option bits (bit fields valid, credits_en, rwwi_en from
// the most significant bit).
const (
	AliValid   AliOptions = 0x80 // valid: the options are set at all
	AliCredits AliOptions = 0x40 // credits_en: receive-queue credits flow control
	AliRWWI    AliOptions = 0x20 // rwwi_en: data by RDMA WRITE with Immediate, no CDC SENDs
)

// Credits reports whether credit-based flow control is on (valid and
// credits_en).
func (o AliOptions) Credits() bool { return o&(AliValid|AliCredits) == AliValid|AliCredits }

// RWWI reports whether write-with-immediate is on (valid and rwwi_en).
func (o AliOptions) RWWI() bool { return o&(AliValid|AliRWWI) == AliValid|AliRWWI }

// AppendTo appends the set bits' names, "valid credits rwwi", or "none".
func (o AliOptions) AppendTo(dst []byte) []byte {
	n := len(dst)
	for _, b := range [...]struct {
		bit  AliOptions
		name string
	}{{AliValid, "valid"}, {AliCredits, "credits"}, {AliRWWI, "rwwi"}} {
		if o&b.bit != 0 {
			if len(dst) > n {
				dst = append(dst, ' ')
			}
			dst = append(dst, b.name...)
		}
	}
	if len(dst) == n {
		dst = append(dst, "none"...)
	}
	return dst
}

func (o AliOptions) String() string { return string(o.AppendTo(nil)) }

// Alibaba returns the vendor options a Proposal offers when its OUI is
// Alibaba's: vendor_exp_options (ANCK's struct smc_clc_msg_smcd puts a
// reserved byte after the OUI, then the 4-byte options at message offset
// 56).
func (p *CLCProposal) Alibaba() (AliOptions, bool) {
	if !p.HasSMCDArea || !p.has(57) || p.VendorOUI != AlibabaOUI {
		return 0, false
	}
	return AliOptions(p.VendorOptions[1]), true
}

// Alibaba returns the vendor options a first-contact Accept or Confirm
// agrees to when its handshake is ANCK's (CLC.ANCK): the first byte of
// the v2x extension's vendor_exp_options, which ANCK reads as struct
// smc_clc_vendor_opt_ali.
func (a *CLCAccept) Alibaba(c *CLC) (AliOptions, bool) {
	if !c.ANCK || !a.HasFCE || a.FCE.Len != fceV2xLen || !a.has(a.FCE.Offset+41) {
		return 0, false
	}
	return AliOptions(a.FCE.VendorOptions >> 24), true
}

// Reads ANCK's init_credits: the byte after rmbe_size/qp_mtu in struct
// smcr_clc_msg_accept_confirm (reserved upstream), the sender's receive
// WQEs (link->wr_rx_cnt) when credits are on, else 0.
const acceptInitCreditsOff = 51

// ANCK fields. The CLC ones are added only to a handshake whose Proposal
// carried the Alibaba OUI, the CDC and LLC ones only on queue pairs such a
// handshake set up.
var (
	fANCKPropOptions = Field(OwnerCLC, "smc.clc.anck.offered", KindUint, "ANCK vendor options offered (Alibaba OUI FC:A6:4C; 0x80 valid, 0x40 credits, 0x20 rwwi)",
		Hex(), Enum(aliName), At(56, 1))
	fANCKAgreed = Field(OwnerCLC, "smc.clc.anck.agreed", KindUint, "ANCK vendor options agreed (first-contact extension; 0x80 valid, 0x40 credits, 0x20 rwwi)",
		Hex(), Enum(aliName), fceAt(40, 1))
	fANCKCredits     = Field(OwnerCLC, "smc.clc.anck.credits", KindBool, "ANCK receive-queue credits flow control on (valid and credits_en)")
	fANCKRWWI        = Field(OwnerCLC, "smc.clc.anck.rwwi", KindBool, "ANCK RDMA WRITE with Immediate instead of CDC SENDs (valid and rwwi_en)")
	fANCKInitCredits = Field(OwnerCLC, "smc.clc.anck.init_credits", KindUint, "ANCK initial receive-queue credits the sender grants (its receive WQEs; 0: credits off)", At(acceptInitCreditsOff, 1))
	fCDCCredits      = Field(OwnerCDC, "smc.cdc.credits", KindUint, "ANCK receive-queue credits returned to the peer (CDC byte 26)")
	fLLCCredits      = Field(OwnerLLC, "smc.llc.credits", KindUint, "ANCK ANNOUNCE_CREDITS: receive-queue credits returned to the peer", At(4, 1, llcIn(LLCAnnounceCredits)))
	fLLCInitCredits  = Field(OwnerLLC, "smc.llc.init_credits", KindUint, "ANCK ADD_LINK initial receive-queue credits of the new link (byte 36)", At(llcAddLinkInitCreditsOff, 1, llcIn(LLCAddLink)))
)

func aliName(u uint64) string {
	if u > 0xFF {
		return ""
	}
	return AliOptions(u).String()
}

func appendAliFields(r *Record, id FieldID, o AliOptions) {
	r.AddUint(id, uint64(o))
	r.AddBool(fANCKCredits, o.Credits())
	r.AddBool(fANCKRWWI, o.RWWI())
}

// appendAli appends " [ANCK offers credits rwwi]" for a Proposal or
// " [ANCK: valid credits, init credits 64]" for an Accept/Confirm.
func appendAli(dst []byte, verb string, o AliOptions) []byte {
	dst = append(dst, " [ANCK "...)
	dst = append(dst, verb...)
	dst = append(dst, ' ')
	return o.AppendTo(dst)
}

// RWWIOp is the 3-bit opcode of an ANCK write-with-immediate's immediate
// data (SMC_WR_OP_*, ANCK net/smc/smc_wr.h).
type RWWIOp uint8

// Write-with-immediate opcodes.
const (
	RWWIData           RWWIOp = 0 // SMC_WR_OP_DATA: data, diff_cons in 21 bits
	RWWIDataFlags      RWWIOp = 1 // SMC_WR_OP_DATA_WITH_FLAGS: 3 producer flags, diff_cons in 17 bits
	RWWICtrl           RWWIOp = 2 // SMC_WR_OP_CTRL: producer and connection-state flag bytes
	RWWIRsvd           RWWIOp = 3 // SMC_WR_OP_RSVD
	RWWIDataCredits    RWWIOp = 6 // SMC_WR_OP_DATA_CR: credits, diff_cons in 13 bits
	RWWIDataFlagsCreds RWWIOp = 7 // SMC_WR_OP_DATA_WITH_FLAGS_CR: 3 flags, credits, diff_cons in 10 bits
)

var rwwiOpNames = [8]string{"DATA", "DATA_WITH_FLAGS", "CTRL", "RSVD", "", "", "DATA_CR", "DATA_WITH_FLAGS_CR"}

// Known reports whether ANCK defines the opcode.
func (o RWWIOp) Known() bool { return o < 8 && rwwiOpNames[o] != "" && o != RWWIRsvd }

func (o RWWIOp) String() string {
	if o < 8 && rwwiOpNames[o] != "" {
		return rwwiOpNames[o]
	}
	return "OP(" + string(numfmt.AppendUint(nil, uint64(o))) + ")"
}

func rwwiOpName(u uint64) string {
	if u > 7 {
		return ""
	}
	return rwwiOpStrings[u]
}

// rwwiOpStrings is every op's String, made once (a reserved one's is
// built): -V names the op of every write with immediate.
var rwwiOpStrings = func() (s [8]string) {
	for o := range s {
		s[o] = RWWIOp(o).String()
	}
	return s
}()

// RWWI is the immediate data of an ANCK RDMA WRITE with Immediate on an
// SMC-R link (union smc_wr_imm_msg, ANCK net/smc/smc_wr.h), sent by
// __smcr_tx_rdma_writes_rwwi and smc_tx_rdma_write_with_no_data_rwwi
// (ANCK net/smc/smc_tx.c) in link groups that agreed rwwi_en: it replaces
// the CDC. The write's own length is the producer cursor's advance.
type RWWI struct {
	Imm   uint32 // the 32-bit immediate, as on the wire
	Token uint8  // b31..b24: the receiver's RMBE alert token (1..255 in such link groups)
	Op    RWWIOp // b23..b21
	// DiffCons: how far the sender's consumer cursor moved (the data
	// opcodes; 21, 17, 13 or 10 bits by opcode).
	DiffCons uint32
	// Credits returned to the peer (DATA_CR, DATA_WITH_FLAGS_CR); HasCredits
	// says the opcode carries them.
	Credits    uint8
	HasCredits bool
	// ProdFlags: write_blocked, urg_data_pending and urg_data_present (the
	// WITH_FLAGS opcodes), or CTRL's whole producer flags byte; ConnFlags
	// is CTRL's connection-state flags byte. Both use the CDC's bits.
	ProdFlags CDCProdFlags
	ConnFlags CDCConnFlags
}

// ParseRWWI decodes an immediate by the layouts of union smc_wr_imm_msg:
// token b31..b24 and opcode b23..b21 in every one; the rest by opcode.
// CTRL's struct smc_wr_imm_ctrl_msg is declared in memory order
// (csflags, pflags, opcode, token) and sent with cpu_to_be32, so on the
// little-endian hosts ANCK runs on its bytes on the wire are token,
// opcode, producer flags, connection-state flags.
func ParseRWWI(imm uint32) RWWI {
	w := RWWI{Imm: imm, Token: uint8(imm >> 24), Op: RWWIOp(imm>>21) & 7}
	flags := func() CDCProdFlags { return CDCProdFlags(imm>>18&7) << 5 }
	switch w.Op {
	case RWWIData:
		w.DiffCons = imm & (1<<21 - 1)
	case RWWIDataFlags:
		w.ProdFlags = flags()
		w.DiffCons = imm & (1<<17 - 1)
	case RWWICtrl:
		w.ProdFlags = CDCProdFlags(imm >> 8)
		w.ConnFlags = CDCConnFlags(imm)
	case RWWIDataCredits:
		w.Credits, w.HasCredits = uint8(imm>>13), true
		w.DiffCons = imm & (1<<13 - 1)
	case RWWIDataFlagsCreds:
		w.ProdFlags = flags()
		w.Credits, w.HasCredits = uint8(imm>>10), true
		w.DiffCons = imm & (1<<10 - 1)
	}
	return w
}

// Data reports whether the opcode carries a consumer-cursor delta.
func (w *RWWI) Data() bool { return w.Op != RWWICtrl && w.Op.Known() }

// RWWI fields: the immediate is the 4-byte ImmDt header after the RETH
// (WRITE Only with Immediate) or the BTH (WRITE Last with Immediate).
var (
	fRWWIToken    = Field(OwnerRWWI, "smc.rwwi.token", KindUint, "ANCK write-with-immediate: receiver's RMBE alert token (8 bits)", At(0, 1))
	fRWWIOp       = Field(OwnerRWWI, "smc.rwwi.op", KindUint, "ANCK write-with-immediate opcode (0 DATA, 1 DATA_WITH_FLAGS, 2 CTRL, 6 DATA_CR, 7 DATA_WITH_FLAGS_CR)", Enum(rwwiOpName), At(1, 1, Bits(0xe0)))
	fRWWIDiffCons = Field(OwnerRWWI, "smc.rwwi.diff_cons", KindUint, "ANCK write-with-immediate: advance of the sender's consumer cursor (bytes)")
	fRWWICredits  = Field(OwnerRWWI, "smc.rwwi.credits", KindUint, "ANCK write-with-immediate: receive-queue credits returned to the peer")
	fRWWIProd     = Field(OwnerRWWI, "smc.rwwi.prod_flags", KindUint, "ANCK write-with-immediate: producer flags (CDC byte 24 bits)", Hex())
	fRWWIConn     = Field(OwnerRWWI, "smc.rwwi.conn_flags", KindUint, "ANCK write-with-immediate CTRL: connection-state flags (CDC byte 25 bits)", Hex(), At(3, 1))
	fRWWIBlocked  = Field(OwnerRWWI, "smc.rwwi.flags.write_blocked", KindBool, "ANCK write-with-immediate: sender blocked, peer RMBE full")
	fRWWIClosed   = Field(OwnerRWWI, "smc.rwwi.flags.peer_conn_closed", KindBool, "ANCK write-with-immediate CTRL: peer connection closed", At(3, 1, Bits(uint64(CDCPeerConnClosed))))
	fRWWIAbort    = Field(OwnerRWWI, "smc.rwwi.flags.peer_conn_abort", KindBool, "ANCK write-with-immediate CTRL: peer connection aborted", At(3, 1, Bits(uint64(CDCPeerConnAbort))))
	fRWWIDone     = Field(OwnerRWWI, "smc.rwwi.flags.peer_done_writing", KindBool, "ANCK write-with-immediate CTRL: peer done writing", At(3, 1, Bits(uint64(CDCPeerDoneWriting))))
)

// AppendFields adds the smc.rwwi.* fields.
func (w *RWWI) AppendFields(r *Record) {
	r.AddUint(fRWWIToken, uint64(w.Token))
	r.AddUint(fRWWIOp, uint64(w.Op))
	if w.Data() {
		r.AddUint(fRWWIDiffCons, uint64(w.DiffCons))
	}
	if w.HasCredits {
		r.AddUint(fRWWICredits, uint64(w.Credits))
	}
	if w.Op == RWWIDataFlags || w.Op == RWWIDataFlagsCreds || w.Op == RWWICtrl {
		r.AddUint(fRWWIProd, uint64(w.ProdFlags))
		r.AddBool(fRWWIBlocked, w.ProdFlags&CDCWriteBlocked != 0)
	}
	if w.Op == RWWICtrl {
		r.AddUint(fRWWIConn, uint64(w.ConnFlags))
		r.AddBool(fRWWIDone, w.ConnFlags&CDCPeerDoneWriting != 0)
		r.AddBool(fRWWIClosed, w.ConnFlags&CDCPeerConnClosed != 0)
		r.AddBool(fRWWIAbort, w.ConnFlags&CDCPeerConnAbort != 0)
	}
}

// AppendSummary appends e.g. "RWWI DATA_CR token 3 diff_cons 4096
// credits 12 [write-blocked]".
func (w *RWWI) AppendSummary(dst []byte) []byte {
	dst = append(dst, "RWWI "...)
	dst = append(dst, w.Op.String()...)
	dst = append(dst, " token "...)
	dst = numfmt.AppendUint(dst, uint64(w.Token))
	if w.Data() {
		dst = append(dst, " diff_cons "...)
		dst = numfmt.AppendUint(dst, uint64(w.DiffCons))
	}
	if w.HasCredits {
		dst = append(dst, " credits "...)
		dst = numfmt.AppendUint(dst, uint64(w.Credits))
	}
	c := CDC{ProdFlags: w.ProdFlags, ConnFlags: w.ConnFlags}
	return c.appendFlags(dst)
}

// MakeRWWI builds the immediate ANCK sends; the inverse of ParseRWWI for
// the fields the opcode carries (test vectors are made with it).
func MakeRWWI(w RWWI) uint32 {
	v := uint32(w.Token)<<24 | uint32(w.Op&7)<<21
	fl := uint32(w.ProdFlags>>5) & 7
	switch w.Op {
	case RWWIData:
		v |= w.DiffCons & (1<<21 - 1)
	case RWWIDataFlags:
		v |= fl<<18 | w.DiffCons&(1<<17-1)
	case RWWICtrl:
		v |= uint32(w.ProdFlags)<<8 | uint32(w.ConnFlags)
	case RWWIDataCredits:
		v |= uint32(w.Credits)<<13 | w.DiffCons&(1<<13-1)
	case RWWIDataFlagsCreds:
		v |= fl<<18 | uint32(w.Credits)<<10 | w.DiffCons&(1<<10-1)
	}
	return v
}

// cdcCreditsOff is ANCK's credits byte in struct smc_cdc_msg (ANCK
// net/smc/smc_cdc.h), reserved upstream.
const cdcCreditsOff = 26

// llcAddLinkInitCreditsOff is ANCK's init_credits in struct
// smc_llc_msg_add_link (after initial_psn), reserved upstream.
const llcAddLinkInitCreditsOff = 36

// ProposalOffersAlibaba reports whether msg, a whole CLC message, is a v2
// Proposal whose vendor OUI is Alibaba's: the mark of an ANCK handshake,
// for a reader that must know it before decoding the messages after it.
func ProposalOffersAlibaba(msg []byte) bool {
	return len(msg) >= 60 && CLCType(msg[4]) == CLCTypeProposal && msg[7]>>4 >= 2 &&
		[3]byte(msg[52:55]) == AlibabaOUI
}
