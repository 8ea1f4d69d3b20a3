package decode

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/numfmt"
)

// LLCType is byte 0 of an LLC message: the v1 type code, or for v2 the
// version nibble 0x20 plus the v1 code (Linux enum
// smc_llc_msg_type).
type LLCType uint8

// LLC message types.
const (
	LLCConfirmLink     LLCType = 0x01 // SMC_LLC_CONFIRM_LINK
	LLCAddLink         LLCType = 0x02 // SMC_LLC_ADD_LINK
	LLCAddLinkCont     LLCType = 0x03 // SMC_LLC_ADD_LINK_CONT (v1 only)
	LLCDeleteLink      LLCType = 0x04 // SMC_LLC_DELETE_LINK
	LLCRequestAddLink  LLCType = 0x05 // SMC_LLC_REQ_ADD_LINK (sent only as v2)
	LLCConfirmRKey     LLCType = 0x06 // SMC_LLC_CONFIRM_RKEY
	LLCTestLink        LLCType = 0x07 // SMC_LLC_TEST_LINK
	LLCConfirmRKeyCont LLCType = 0x08 // SMC_LLC_CONFIRM_RKEY_CONT (v1 only, never sent by Linux)
	LLCDeleteRKey      LLCType = 0x09 // SMC_LLC_DELETE_RKEY
	// LLCAnnounceCredits is ANCK's SMC_LLC_ANNOUNCE_CREDITS (ANCK
	// net/smc/smc_llc.h; no upstream kernel sends 0x0A): always with the
	// v1 header, in v2 link groups too.
	LLCAnnounceCredits  LLCType = 0x0A
	LLCConfirmLinkV2    LLCType = 0x21 // SMC_LLC_CONFIRM_LINK_V2
	LLCAddLinkV2        LLCType = 0x22 // SMC_LLC_ADD_LINK_V2
	LLCDeleteLinkV2     LLCType = 0x24 // SMC_LLC_DELETE_LINK_V2
	LLCRequestAddLinkV2 LLCType = 0x25 // SMC_LLC_REQ_ADD_LINK_V2
	LLCConfirmRKeyV2    LLCType = 0x26 // SMC_LLC_CONFIRM_RKEY_V2
	LLCTestLinkV2       LLCType = 0x27 // SMC_LLC_TEST_LINK_V2
	LLCDeleteRKeyV2     LLCType = 0x29 // SMC_LLC_DELETE_RKEY_V2
)

var llcTypeNames = [11]string{
	1: "CONFIRM_LINK", 2: "ADD_LINK", 3: "ADD_LINK_CONT", 4: "DELETE_LINK",
	5: "REQUEST_ADD_LINK", 6: "CONFIRM_RKEY", 7: "TEST_LINK", 8: "CONFIRM_RKEY_CONT",
	9: "DELETE_RKEY", 10: "ANNOUNCE_CREDITS",
}

// Base returns the v1 code of t (0x22 -> 0x02).
func (t LLCType) Base() LLCType { return t & 0x0F }

// Version returns 1 or 2 from the high nibble, 0 when it is neither.
func (t LLCType) Version() uint8 {
	switch t >> 4 {
	case 0:
		return 1
	case 2:
		return 2
	}
	return 0
}

// Known reports whether Linux defines the code.
func (t LLCType) Known() bool {
	b := t.Base()
	switch t.Version() {
	case 1:
		return b >= 1 && b <= 9 || t == LLCAnnounceCredits
	case 2:
		return b >= 1 && b <= 9 && b != LLCAddLinkCont && b != LLCConfirmRKeyCont
	}
	return false
}

// String gives the kernel-style name, "ADD_LINK_V2" for 0x22, or
// "LLC(0x..)" for an unknown code.
func (t LLCType) String() string { return llcTypeStrings[t] }

// llcTypeStrings is every type's String, made once: -V names the type of
// every LLC message.
var llcTypeStrings = func() (s [256]string) {
	for t := range s {
		s[t] = string(LLCType(t).appendName(nil))
	}
	return s
}()

func (t LLCType) appendName(dst []byte) []byte {
	if !t.Known() {
		dst = append(dst, "LLC(0x"...)
		dst = appendHexPad(dst, uint64(t), 2)
		return append(dst, ')')
	}
	dst = append(dst, llcTypeNames[t.Base()]...)
	if t.Version() == 2 {
		dst = append(dst, "_V2"...)
	}
	return dst
}

func llcTypeName(v uint64) string {
	if v > 0xFF || !LLCType(v).Known() {
		return ""
	}
	return LLCType(v).String()
}

// LLC flag bits of byte 3 (§3.4; Linux SMC_LLC_FLAG_*).
const (
	LLCFlagResponse     = 0x80 // SMC_LLC_FLAG_RESP
	LLCFlagAddLinkRej   = 0x40 // SMC_LLC_FLAG_ADD_LNK_REJ
	LLCFlagDelLinkAll   = 0x40 // SMC_LLC_FLAG_DEL_LINK_ALL
	LLCFlagDelLinkOrd   = 0x20 // SMC_LLC_FLAG_DEL_LINK_ORDERLY
	LLCFlagRKeyNeg      = 0x20 // SMC_LLC_FLAG_RKEY_NEG
	LLCFlagRKeyRetry    = 0x10 // SMC_LLC_FLAG_RKEY_RETRY
	LLCFlagNoRMBEEyecat = 0x03 // SMC_LLC_FLAG_NO_RMBE_EYEC (CONFIRM LINK)
)

// LLC storage limits. Messages may announce more entries; the wire count
// is kept, and the stored entries are the first ones.
const (
	LLCMaxRKeys = 16 // ADD LINK v2 triplets and DELETE RKEY rkeys stored
	LLCMaxGIDs  = 8  // REQUEST ADD LINK GIDs stored
)

// LLC is an SMC-R Link Layer Control message, v1 (44 bytes) or v2 (44 to
// 8192 bytes), carried in RC SENDs on a link's QP (struct smc_llc_msg_* in net/smc/smc_llc.c).
// Exactly one of the per-type sub-structs is filled, chosen by Type.Base().
type LLC struct {
	layers.BaseLayer
	Type    LLCType // offset 0
	Version uint8   // 1 or 2 (high nibble of byte 0)
	// Length is byte 1 in v1, the 16-bit length_v2 at offset 1 in v2.
	Length uint16
	// LengthBigEndian is set when a v2 length matched the message only
	// when read big-endian. Linux writes it in host order (§3.2):
	// little-endian on x86 (every v2 LLC in testdata/reference), so
	// presumably big-endian on s390.
	LengthBigEndian bool
	Flags           uint8 // offset 3
	Response        bool  // Flags & 0x80

	ConfirmLink     LLCConfirmLinkBody
	AddLink         LLCAddLinkBody
	AddLinkCont     LLCAddLinkContBody
	DeleteLink      LLCDeleteLinkBody
	RequestAddLink  LLCRequestAddLinkBody
	ConfirmRKey     LLCConfirmRKeyBody
	ConfirmRKeyCont LLCConfirmRKeyContBody
	TestLink        LLCTestLinkBody
	DeleteRKey      LLCDeleteRKeyBody
	// AnnounceCredits is ANCK's struct smc_llc_msg_announce_credits.
	AnnounceCredits struct {
		Credits uint8 // offset 4: receive-queue credits returned to the peer
	}

	// ANCK is set by the capture reader (never by decoding) on a queue
	// pair an ANCK handshake with credits set up: only then is ADD_LINK's
	// byte 36 read as ANCK's init_credits.
	ANCK bool

	// Cut is how many bytes of the message the capture holds when its snap
	// length cut the message short (DecodeCut), 0 for a whole message:
	// only the fields within them are shown and summarised. The body's
	// values past the cut are zeros or partial: read them only where
	// Captured or StepCaptured says the capture holds them.
	Cut int
	// pad is DecodeCut's copy of a cut message, zeros past the cut.
	pad []byte
}

// LLCConfirmLinkBody is the body of CONFIRM LINK (0x01/0x21): the sender's own
// addresses on the link the message travels on.
type LLCConfirmLinkBody struct {
	MAC              [6]byte    // offset 4
	GID              netip.Addr // offset 10
	QPN              uint32     // offset 26, 24 bits
	LinkID           uint8      // offset 29
	LinkUID          uint32     // offset 30: opaque 4 bytes (Linux: lgr id + link id), read big-endian
	MaxLinks         uint8      // offset 34
	MaxConns         uint8      // offset 35, v2.1 only (reserved before)
	NoRMBEEyecatcher bool       // flags & 0x03, always set by Linux
}

// LLCRKeyTriplet is one RMB as ADD LINK (v2) and ADD LINK CONTINUATION
// carry it: its rkey on the existing link, and rkey and VA on the new one.
type LLCRKeyTriplet struct {
	RKey    uint32 // rkey on the link the message is sent on
	RKeyNew uint32 // rkey on the new link
	VANew   uint64 // virtual address on the new link
}

// LLCAddLinkBody is the body of ADD LINK (0x02/0x22), plus its v2 extension.
type LLCAddLinkBody struct {
	MAC          [6]byte    // offset 4: for the new link
	GID          netip.Addr // offset 12
	QPN          uint32     // offset 28, 24 bits: the sender's new QP
	LinkID       uint8      // offset 31
	MTU          uint8      // offset 32 & 0x0F: IB MTU enum (3 = 1024)
	PSN          uint32     // offset 33, 24 bits: initial PSN on the new link
	InitCredits  uint8      // offset 36: reserved upstream; ANCK's init_credits (LLC.ANCK)
	Rejected     bool       // flags & 0x40
	RejectReason uint8      // v1: offset 2 & 0x0F (1 = no alternate path); v2 carries none
	// V2Ext is set when a v2 message is longer than 44 bytes and so
	// carries the extension below (a v2 reject is 44 bytes).
	V2Ext     bool
	Direct    bool       // offset 44 & 0x80
	TargetGID netip.Addr // offset 46
	// NumRKeys is the triplet count at offset 70 (host order like the
	// length: `01 00` = 1 on x86, pingpong/multilink captures).
	NumRKeys uint16
	RKeys    [LLCMaxRKeys]LLCRKeyTriplet // offset 72, 16 bytes each
}

// Triplets returns the stored rkey triplets (at most LLCMaxRKeys).
func (a *LLCAddLinkBody) Triplets() []LLCRKeyTriplet {
	return a.RKeys[:min(int(a.NumRKeys), LLCMaxRKeys)]
}

// LLCAddLinkContBody is the body of ADD LINK CONTINUATION (0x03, v1 only).
type LLCAddLinkContBody struct {
	LinkID   uint8             // offset 4
	NumRKeys uint8             // offset 5: rkeys still to send, this message included
	RKeys    [2]LLCRKeyTriplet // offsets 8, 24 (Wireshark wrongly reads from 6, §3.5)
}

// Triplets returns the valid pairs of this message (at most 2).
func (a *LLCAddLinkContBody) Triplets() []LLCRKeyTriplet {
	return a.RKeys[:min(int(a.NumRKeys), 2)]
}

// DeleteLinkReason is the DELETE LINK reason code (§3.5; Linux
// SMC_LLC_DEL_*).
type DeleteLinkReason uint32

// DELETE LINK reasons.
const (
	DelLinkOK            DeleteLinkReason = 0          // response: success; request: no reason given (before 5.8)
	DelLinkLostPath      DeleteLinkReason = 0x00010000 // SMC_LLC_DEL_LOST_PATH
	DelLinkOpInitTerm    DeleteLinkReason = 0x00020000 // SMC_LLC_DEL_OP_INIT_TERM
	DelLinkProgInitTerm  DeleteLinkReason = 0x00030000 // SMC_LLC_DEL_PROG_INIT_TERM
	DelLinkProtViol      DeleteLinkReason = 0x00040000 // SMC_LLC_DEL_PROT_VIOL
	DelLinkNoAsymNeeded  DeleteLinkReason = 0x00050000 // SMC_LLC_DEL_NO_ASYM_NEEDED
	DelLinkUnknownLink   DeleteLinkReason = 0x00100000 // SMC_LLC_DEL_NOLNK
	DelLinkUnknownLGroup DeleteLinkReason = 0x00200000 // SMC_LLC_DEL_NOLGR
)

// String gives a short name: "lost-path", "operator-initiated", ...
func (r DeleteLinkReason) String() string {
	switch r {
	case DelLinkOK:
		return "ok"
	case DelLinkLostPath:
		return "lost-path"
	case DelLinkOpInitTerm:
		return "operator-initiated"
	case DelLinkProgInitTerm:
		return "program-initiated"
	case DelLinkProtViol:
		return "protocol-violation"
	case DelLinkNoAsymNeeded:
		return "asym-link-not-needed"
	case DelLinkUnknownLink:
		return "unknown-link"
	case DelLinkUnknownLGroup:
		return "unknown-link-group"
	}
	return "unknown-reason"
}

// Meaning explains the code in a sentence fragment.
func (r DeleteLinkReason) Meaning() string {
	switch r {
	case DelLinkOK:
		return "response: link deleted"
	case DelLinkLostPath:
		return "lost path (link failure)"
	case DelLinkOpInitTerm:
		return "operator-initiated termination (e.g. device or module going away)"
	case DelLinkProgInitTerm:
		return "program-initiated termination (link group idle timeout)"
	case DelLinkProtViol:
		return "LLC protocol violation"
	case DelLinkNoAsymNeeded:
		return "asymmetric link no longer needed"
	case DelLinkUnknownLink:
		return "response: unknown link ID"
	case DelLinkUnknownLGroup:
		return "response: unknown link group"
	}
	return "reason code not defined by Linux"
}

// StringIn is String for a request or a response. A request with reason 0
// carries no reason, not "ok": before 5.8, smc_llc_prep_delete_link
// (net/smc/smc_llc.c) zeroed the message and never set a reason, and
// smc_llc_send_delete_link took none; 5.8's multi-link rework added the
// SMC_LLC_DEL_* reason to requests.
func (r DeleteLinkReason) StringIn(response bool) string {
	if r == DelLinkOK && !response {
		return "none"
	}
	return r.String()
}

// MeaningIn is Meaning for a request or a response; see StringIn.
func (r DeleteLinkReason) MeaningIn(response bool) string {
	if r == DelLinkOK && !response {
		return "no reason given (kernels before 5.8 send 0)"
	}
	return r.Meaning()
}

// deleteReasonOK reads "ok", the name 0 had before it became "none", so
// that filters written then (smc.llc.delete.reason == ok) still work.
func deleteReasonOK(s string) (uint64, bool) {
	if strings.EqualFold(s, "ok") {
		return 0, true
	}
	return 0, false
}

// deleteReasonName names the field's value without the message's
// direction, so 0 is "none": "ok" only fits a response (see StringIn).
func deleteReasonName(v uint64) string {
	if v > 0xFFFFFFFF {
		return ""
	}
	if v == 0 {
		return "none"
	}
	return DeleteLinkReason(v).String()
}

// LLCDeleteLinkBody is the body of DELETE LINK (0x04/0x24).
type LLCDeleteLinkBody struct {
	LinkID  uint8            // offset 4: 0 with All
	Reason  DeleteLinkReason // offset 5, BE32
	All     bool             // flags & 0x40: terminate the link group
	Orderly bool             // flags & 0x20
}

// LLCRequestAddLinkBody is the body of REQUEST ADD LINK (0x25): the client's
// GIDs, asking the server to start ADD LINK.
type LLCRequestAddLinkBody struct {
	NumGIDs uint8                  // offset 24
	GIDs    [LLCMaxGIDs]netip.Addr // offset 28, 16 bytes each
}

// GIDList returns the stored GIDs.
func (q *LLCRequestAddLinkBody) GIDList() []netip.Addr {
	return q.GIDs[:min(int(q.NumGIDs), LLCMaxGIDs)]
}

// LLCRToken is an rkey and VA of one RMB on one link.
type LLCRToken struct {
	LinkID uint8
	RKey   uint32
	VA     uint64
}

// LLCConfirmRKeyBody is the body of CONFIRM RKEY (0x06/0x26): a new RMB on
// every link of the group.
type LLCConfirmRKeyBody struct {
	NumOtherLinks uint8        // offset 4
	RKey          uint32       // offset 5: on the link the message is sent on
	VA            uint64       // offset 9
	Others        [2]LLCRToken // offsets 17, 30
	Negative      bool         // flags & 0x20
	Retry         bool         // flags & 0x10
}

// OtherLinks returns the valid entries of Others.
func (c *LLCConfirmRKeyBody) OtherLinks() []LLCRToken {
	return c.Others[:min(int(c.NumOtherLinks), 2)]
}

// LLCConfirmRKeyContBody is the body of CONFIRM RKEY CONTINUATION (0x08),
// laid out as Wireshark reads it (§3.5, UNSURE there; Linux never sends it).
type LLCConfirmRKeyContBody struct {
	NumRKeys uint8        // offset 4
	RTokens  [3]LLCRToken // offsets 5, 18, 31
	// flags & 0x20: the continuation of a negative response, as in
	// CONFIRM RKEY (SMC_LLC_FLAG_RKEY_NEG; RFC 7609 gives both messages
	// the same flags).
	Negative bool
}

// Tokens returns the valid entries.
func (c *LLCConfirmRKeyContBody) Tokens() []LLCRToken {
	return c.RTokens[:min(int(c.NumRKeys), 3)]
}

// LLCTestLinkBody is the body of TEST LINK (0x07/0x27), a keepalive.
type LLCTestLinkBody struct {
	UserData [16]byte // offset 4, echoed in the response
}

// LLCDeleteRKeyBody is the body of DELETE RKEY (0x09/0x29), kernel layout
// (Wireshark reads it shifted, §9).
type LLCDeleteRKeyBody struct {
	NumRKeys uint8               // offset 4 (v1: 1..8)
	ErrMask  uint8               // offset 5: v1 bit 0x80>>i = rkey i unknown; v2 count of unknown rkeys
	RKeys    [LLCMaxRKeys]uint32 // offset 8, 4 bytes each
	Negative bool                // flags & 0x20
}

// RKeyList returns the stored rkeys.
func (d *LLCDeleteRKeyBody) RKeyList() []uint32 {
	return d.RKeys[:min(int(d.NumRKeys), LLCMaxRKeys)]
}

// LayerType returns LayerTypeLLC.
func (l *LLC) LayerType() gopacket.LayerType { return LayerTypeLLC }

// CanDecode returns LayerTypeLLC.
func (l *LLC) CanDecode() gopacket.LayerClass { return LayerTypeLLC }

// NextLayerType returns LayerTypeZero: an LLC fills its SEND.
func (l *LLC) NextLayerType() gopacket.LayerType { return payloadOrZero(l.Payload) }

// DecodeFromBytes decodes an LLC message from the payload of an RC SEND
// (the whole message: a v2 message split into SEND First/Middle/Last must
// be put together first). A length byte that disagrees with the bytes is
// an ErrBadLength (or ErrTruncated when the message is cut short).
// DecodeFromBytes decodes one LLC. On error the layer is left as a new
// one (gopacket's contract), never half-filled.
func (l *LLC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	if err := l.decode(data, df); err != nil {
		*l = LLC{}
		return err
	}
	return nil
}

// DecodeCut decodes data, the start of a message of wire bytes that the
// capture's snap length cut short, as far as it goes: the header (4 bytes,
// required), and each field that lies wholly in data; what the capture
// did not keep is neither checked nor shown (a field absent is not a
// zero). The length field must be the wire's. A message held whole is
// decoded as by DecodeFromBytes.
func (l *LLC) DecodeCut(data []byte, wire int) error {
	if wire <= len(data) {
		return l.DecodeFromBytes(data, gopacket.NilDecodeFeedback)
	}
	if len(data) < 4 {
		*l = LLC{}
		return Truncated("LLC", "header", len(data), 4, len(data))
	}
	pad := append(append(l.pad[:0], data...), make([]byte, wire-len(data))...)
	if err := l.DecodeFromBytes(pad, gopacket.NilDecodeFeedback); err != nil {
		l.pad = pad
		if errors.Is(err, ErrTruncated) {
			// The length field claims more than the SEND carried on
			// the wire: the sender's doing, not the snap length's.
			err = BadLength(l.layerName(), "length", 1, "message longer than the "+strconv.Itoa(wire)+
				"-byte SEND that carried it")
		}
		return err
	}
	l.pad = pad
	if n := int(l.Length); n <= len(data) {
		// The message is whole; what the capture cut lay after it.
		l.Contents, l.Payload = data[:n], data[n:]
		return nil
	}
	l.Contents, l.Payload, l.Cut = data, nil, len(data)
	return nil
}

// Captured reports whether the message holds its bytes up to offset end:
// always for a whole message, up to where the capture cut it for one it
// cut.
func (l *LLC) Captured(end int) bool { return l.Cut == 0 || end <= l.Cut }

// SentZero appends to dst the bytes of the message its sender sends as
// zeros and returns it, each span as offsets from the message's first
// byte, from its first to before its second: the reserved fields of its
// type's struct, which Linux's senders memset to zero before filling the
// rest (net/smc/smc_llc.c: struct smc_llc_msg_confirm_link reserved,
// smc_llc_msg_add_link reserved2 and reserved, smc_llc_msg_add_link_cont
// reserved2 and reserved, smc_llc_msg_del_link reserved,
// smc_llc_msg_req_add_link_v2 reserved and reserved2,
// smc_llc_msg_confirm_rkey reserved, smc_llc_msg_test_link reserved,
// smc_llc_msg_delete_rkey reserved and reserved2, the v2 ADD_LINK's
// smc_llc_msg_add_link_v2_ext reserved2 and reserved3; a v1 header's
// byte 2, struct smc_llc_hdr reserved, but for ADD_LINK's reject reason),
// and ANCK's struct smc_llc_msg_announce_credits reserved (ANCK
// net/smc/smc_llc.c). On an ANCK queue pair ADD_LINK's byte 36 is
// init_credits. Responses echo their request's reserved bytes. Partly
// reserved bytes (ADD_LINK's MTU byte, the v2 extension's direct flag)
// and entries past a count are left out: a count may lie.
func (l *LLC) SentZero(dst [][2]int) [][2]int {
	n := int(l.Length)
	if l.Version == 1 && l.Type.Base() != LLCAddLink {
		dst = append(dst, [2]int{2, 3})
	}
	switch l.Type.Base() {
	case LLCConfirmLink:
		dst = append(dst, [2]int{36, smcMsgLen})
	case LLCAddLink:
		from := llcAddLinkInitCreditsOff
		if l.ANCK {
			from++
		}
		dst = append(dst, [2]int{10, 12}, [2]int{from, smcMsgLen})
		if l.Version == 2 && n >= 72 {
			dst = append(dst, [2]int{45, 46}, [2]int{62, 70})
		}
	case LLCAddLinkCont:
		dst = append(dst, [2]int{6, 8}, [2]int{40, smcMsgLen})
	case LLCDeleteLink:
		dst = append(dst, [2]int{9, smcMsgLen})
	case LLCRequestAddLink:
		dst = append(dst, [2]int{4, 24}, [2]int{25, 28})
	case LLCConfirmRKey:
		dst = append(dst, [2]int{43, smcMsgLen})
	case LLCTestLink:
		dst = append(dst, [2]int{20, smcMsgLen})
	case LLCDeleteRKey:
		dst = append(dst, [2]int{6, 8})
		if l.Version == 1 {
			dst = append(dst, [2]int{40, smcMsgLen})
		}
	case LLCAnnounceCredits:
		dst = append(dst, [2]int{5, smcMsgLen})
	}
	return dst
}

// StepCaptured reports whether the capture holds what a link's tracker
// takes from the message: the fixed fields of its type (an rkey list
// behind them may be cut: Captured says which entries are there). Of
// CONFIRM_LINK (struct smc_llc_msg_confirm_link) and ADD_LINK (struct
// smc_llc_msg_add_link) the sender's QP and the link number make the
// step; what comes after them may be cut, and is then absent: a
// CONFIRM_LINK's link UID and limits (Captured(34), Captured(35)), an
// ADD_LINK's MTU and initial PSN (Captured(36)), not ANCK's init_credits,
// which its credits follow from.
func (l *LLC) StepCaptured() bool {
	need := 4
	switch l.Type.Base() {
	case LLCConfirmLink:
		need = 30
	case LLCAddLink:
		need = 32
		if l.ANCK {
			need = llcAddLinkInitCreditsOff + 1
		}
	case LLCAddLinkCont, LLCDeleteRKey:
		need = 8
	case LLCDeleteLink:
		need = 9
	case LLCRequestAddLink:
		need = 25
	case LLCConfirmRKey:
		need = 17
	case LLCAnnounceCredits:
		need = 5
	}
	return l.Captured(need)
}

func (l *LLC) decode(data []byte, df gopacket.DecodeFeedback) error {
	*l = LLC{}
	if len(data) < 4 {
		df.SetTruncated()
		return Truncated("LLC", "header", len(data), 4, len(data))
	}
	l.Type = LLCType(data[0])
	l.Version = l.Type.Version()
	l.Flags = data[3]
	l.Response = l.Flags&LLCFlagResponse != 0
	if !l.Type.Known() {
		return &Error{Layer: "LLC", Field: "type", Offset: 0, Err: ErrUnknownType,
			Detail: "type 0x" + string(appendHexPad(nil, uint64(l.Type), 2))}
	}
	if l.Version == 1 {
		l.Length = uint16(data[1])
		if l.Length != smcMsgLen {
			return BadLength(l.layerName(), "length", 1, "v1 length "+strconv.Itoa(int(l.Length))+", want 44")
		}
		if len(data) < smcMsgLen {
			df.SetTruncated()
			return Truncated(l.layerName(), "", len(data), smcMsgLen, len(data))
		}
	} else if err := l.decodeV2Length(data, df); err != nil {
		return err
	}
	msg := data[:l.Length]
	l.Contents = msg
	l.Payload = data[l.Length:]
	switch l.Type.Base() {
	case LLCConfirmLink:
		l.decodeConfirmLink(msg)
	case LLCAddLink:
		return l.decodeAddLink(msg)
	case LLCAddLinkCont:
		l.decodeAddLinkCont(msg)
	case LLCDeleteLink:
		l.DeleteLink = LLCDeleteLinkBody{
			LinkID:  msg[4],
			Reason:  DeleteLinkReason(binary.BigEndian.Uint32(msg[5:9])),
			All:     l.Flags&LLCFlagDelLinkAll != 0,
			Orderly: l.Flags&LLCFlagDelLinkOrd != 0,
		}
	case LLCRequestAddLink:
		return l.decodeRequestAddLink(msg)
	case LLCConfirmRKey:
		l.decodeConfirmRKey(msg)
	case LLCConfirmRKeyCont:
		c := &l.ConfirmRKeyCont
		c.NumRKeys = msg[4]
		c.Negative = l.Flags&LLCFlagRKeyNeg != 0
		for i := range c.RTokens {
			c.RTokens[i] = readRToken(msg[5+13*i:])
		}
	case LLCTestLink:
		copy(l.TestLink.UserData[:], msg[4:20])
	case LLCDeleteRKey:
		return l.decodeDeleteRKey(msg)
	case LLCAnnounceCredits:
		l.AnnounceCredits.Credits = msg[4]
	}
	return nil
}

func (l *LLC) decodeConfirmLink(msg []byte) {
	c := &l.ConfirmLink
	copy(c.MAC[:], msg[4:10])
	c.GID = netip.AddrFrom16([16]byte(msg[10:26]))
	c.QPN = u24(msg[26:29])
	c.LinkID = msg[29]
	c.LinkUID = binary.BigEndian.Uint32(msg[30:34])
	c.MaxLinks = msg[34]
	c.MaxConns = msg[35]
	c.NoRMBEEyecatcher = l.Flags&LLCFlagNoRMBEEyecat == LLCFlagNoRMBEEyecat
}

func (l *LLC) decodeAddLink(msg []byte) error {
	a := &l.AddLink
	copy(a.MAC[:], msg[4:10])
	a.GID = netip.AddrFrom16([16]byte(msg[12:28]))
	a.QPN = u24(msg[28:31])
	a.LinkID = msg[31]
	a.MTU = msg[32] & 0x0F
	a.PSN = u24(msg[33:36])
	a.InitCredits = msg[llcAddLinkInitCreditsOff]
	a.Rejected = l.Flags&LLCFlagAddLinkRej != 0
	if l.Version == 1 {
		a.RejectReason = msg[2] & 0x0F
		return nil
	}
	return l.decodeAddLinkV2Ext(msg)
}

func (l *LLC) decodeAddLinkCont(msg []byte) {
	a := &l.AddLinkCont
	a.LinkID = msg[4]
	a.NumRKeys = msg[5]
	for i := range a.RKeys {
		a.RKeys[i] = readTriplet(msg[8+16*i:])
	}
}

func (l *LLC) decodeConfirmRKey(msg []byte) {
	c := &l.ConfirmRKey
	c.NumOtherLinks = msg[4]
	c.RKey = binary.BigEndian.Uint32(msg[5:9])
	c.VA = binary.BigEndian.Uint64(msg[9:17])
	for i := range c.Others {
		c.Others[i] = readRToken(msg[17+13*i:])
	}
	c.Negative = l.Flags&LLCFlagRKeyNeg != 0
	c.Retry = l.Flags&LLCFlagRKeyRetry != 0
}

func (l *LLC) decodeDeleteRKey(msg []byte) error {
	d := &l.DeleteRKey
	d.NumRKeys = msg[4]
	d.ErrMask = msg[5]
	d.Negative = l.Flags&LLCFlagRKeyNeg != 0
	// v1 has 8 slots in 8..39; v2 may extend the message for up to 255.
	slots := 8
	if l.Version == 2 {
		slots = max(8, (len(msg)-8)/4)
	}
	if int(d.NumRKeys) > slots {
		return BadLength(l.layerName(), "count", 4, "count "+strconv.Itoa(int(d.NumRKeys))+
			" but room for "+strconv.Itoa(slots)+" rkeys")
	}
	for i := range min(int(d.NumRKeys), LLCMaxRKeys) {
		d.RKeys[i] = binary.BigEndian.Uint32(msg[8+4*i:])
	}
	return nil
}

func readTriplet(b []byte) LLCRKeyTriplet {
	_ = b[15]
	return LLCRKeyTriplet{
		RKey:    binary.BigEndian.Uint32(b[0:4]),
		RKeyNew: binary.BigEndian.Uint32(b[4:8]),
		VANew:   binary.BigEndian.Uint64(b[8:16]),
	}
}

func readRToken(b []byte) LLCRToken {
	_ = b[12]
	return LLCRToken{LinkID: b[0], RKey: binary.BigEndian.Uint32(b[1:5]), VA: binary.BigEndian.Uint64(b[5:13])}
}

// layerName names the message in errors: "LLC ADD_LINK_V2".
func (l *LLC) layerName() string { return "LLC " + l.Type.String() }

// IBMTU converts the IB MTU enum of CLC and ADD LINK (1..5) to bytes, 0
// for other values.
func IBMTU(enum uint8) int {
	if enum < 1 || enum > 5 {
		return 0
	}
	return 128 << enum
}

func ibMTUName(v uint64) string {
	if v > 0xFF {
		return ""
	}
	return ibMTUNames[v]
}

// ibMTUNames is ibMTUName's, made once: strconv.Itoa allocates for 256
// and up, and -V names the MTU of every CONFIRM_LINK and ADD_LINK.
var ibMTUNames = func() (s [256]string) {
	for v := range s {
		if n := IBMTU(uint8(v)); n != 0 {
			s[v] = strconv.Itoa(n)
		}
	}
	return s
}()

// AppendFields adds smc.llc.type, .version, .length, .flags, .response
// and the fields of the message type.
func (l *LLC) AppendFields(r *Record) {
	r.addCaptured(l.Cut > 0, l.Contents, l.appendFields)
}

func (l *LLC) appendFields(r *Record) {
	r.AddUint(fLLCType, uint64(l.Type))
	r.AddUint(fLLCVersion, uint64(l.Version))
	r.AddUint(fLLCLength, uint64(l.Length))
	if l.Version == 2 {
		r.AddBool(fLLCLengthBE, l.LengthBigEndian)
	}
	r.AddUint(fLLCFlags, uint64(l.Flags))
	r.AddBool(fLLCResponse, l.Response)
	m := l.Contents
	if l.Cut > 0 {
		m = l.pad
	}
	if len(m) < smcMsgLen {
		return
	}
	switch l.Type.Base() {
	case LLCConfirmLink:
		c := &l.ConfirmLink
		r.AddBytes(fLLCMAC, m[4:10])
		r.AddAddr(fLLCGID, c.GID)
		r.AddUint(fLLCQPN, uint64(c.QPN))
		r.AddUint(fLLCLinkID, uint64(c.LinkID))
		r.AddUint(fLLCLinkUID, uint64(c.LinkUID))
		r.AddUint(fLLCMaxLinks, uint64(c.MaxLinks))
		if l.Version == 2 {
			r.AddUint(fLLCMaxConns, uint64(c.MaxConns))
		}
		r.AddBool(fLLCNoRMBEEyec, c.NoRMBEEyecatcher)
	case LLCAddLink:
		a := &l.AddLink
		r.AddBool(fLLCReject, a.Rejected)
		if l.Version == 1 {
			r.AddUint(fLLCRejectReason, uint64(a.RejectReason))
		}
		r.AddBytes(fLLCMAC, m[4:10])
		r.AddAddr(fLLCGID, a.GID)
		r.AddUint(fLLCQPN, uint64(a.QPN))
		r.AddUint(fLLCLinkID, uint64(a.LinkID))
		r.AddUint(fLLCMTU, uint64(a.MTU))
		r.AddUint(fLLCPSN, uint64(a.PSN))
		if l.ANCK {
			r.AddUint(fLLCInitCredits, uint64(a.InitCredits))
		}
		if a.V2Ext {
			r.AddBool(fLLCDirect, a.Direct)
			r.AddAddr(fLLCTargetGID, a.TargetGID)
			r.AddUint(fLLCRKeyCount, uint64(a.NumRKeys))
			appendTriplets(r, a.Triplets())
		}
	case LLCAnnounceCredits:
		r.AddUint(fLLCCredits, uint64(l.AnnounceCredits.Credits))
	case LLCAddLinkCont:
		a := &l.AddLinkCont
		r.AddUint(fLLCLinkID, uint64(a.LinkID))
		r.AddUint(fLLCRKeyCount, uint64(a.NumRKeys))
		appendTriplets(r, a.Triplets())
	case LLCDeleteLink:
		d := &l.DeleteLink
		r.AddUint(fLLCLinkID, uint64(d.LinkID))
		r.AddUint(fLLCDelReason, uint64(d.Reason))
		r.AddBool(fLLCDelAll, d.All)
		r.AddBool(fLLCDelOrderly, d.Orderly)
	case LLCRequestAddLink:
		q := &l.RequestAddLink
		r.AddUint(fLLCGIDCount, uint64(q.NumGIDs))
		for _, g := range q.GIDList() {
			r.AddAddr(fLLCGID, g)
		}
	case LLCConfirmRKey:
		c := &l.ConfirmRKey
		r.AddBool(fLLCNegative, c.Negative)
		r.AddBool(fLLCRetry, c.Retry)
		r.AddUint(fLLCRKeyCount, uint64(c.NumOtherLinks))
		r.AddUint(fLLCRKey, uint64(c.RKey))
		r.AddUint(fLLCVA, c.VA)
		for _, o := range c.OtherLinks() {
			r.AddUint(fLLCRKeyLink, uint64(o.LinkID))
			r.AddUint(fLLCRKey, uint64(o.RKey))
			r.AddUint(fLLCVA, o.VA)
		}
	case LLCConfirmRKeyCont:
		c := &l.ConfirmRKeyCont
		r.AddBool(fLLCNegative, c.Negative)
		r.AddUint(fLLCRKeyCount, uint64(c.NumRKeys))
		for _, o := range c.Tokens() {
			r.AddUint(fLLCRKeyLink, uint64(o.LinkID))
			r.AddUint(fLLCRKey, uint64(o.RKey))
			r.AddUint(fLLCVA, o.VA)
		}
	case LLCTestLink:
		r.AddBytes(fLLCTestData, m[4:20])
	case LLCDeleteRKey:
		d := &l.DeleteRKey
		r.AddBool(fLLCNegative, d.Negative)
		r.AddUint(fLLCRKeyCount, uint64(d.NumRKeys))
		r.AddUint(fLLCRKeyMask, uint64(d.ErrMask))
		for _, k := range d.RKeyList() {
			r.AddUint(fLLCRKey, uint64(k))
		}
	}
}

func appendTriplets(r *Record, ts []LLCRKeyTriplet) {
	for _, t := range ts {
		r.AddUint(fLLCRKey, uint64(t.RKey))
		r.AddUint(fLLCRKeyNew, uint64(t.RKeyNew))
		r.AddUint(fLLCVA, t.VANew)
	}
}

// AppendSummary appends the one-line meaning, e.g.
// "LLC ADD_LINK_V2 resp REJECT link 2" or
// "LLC DELETE_LINK_V2 req ALL ORDERLY link 0 reason 0x00020000 operator-initiated".
func (l *LLC) AppendSummary(dst []byte) []byte {
	dst = append(dst, "LLC "...)
	dst = l.Type.appendName(dst)
	if l.Response {
		dst = append(dst, " resp"...)
	} else {
		dst = append(dst, " req"...)
	}
	dst = l.appendBody(dst)
	return appendCaptured(dst, l.Cut, int(l.Length))
}

// appendBody appends what the message's type says, each value only where
// the capture holds it (Captured: the offset each value ends at).
func (l *LLC) appendBody(dst []byte) []byte {
	has := l.Captured
	switch l.Type.Base() {
	case LLCConfirmLink:
		c := &l.ConfirmLink
		if has(30) {
			dst = appendLink(dst, c.LinkID)
		}
		if has(34) {
			dst = append(dst, " uid 0x"...)
			dst = appendHexPad(dst, uint64(c.LinkUID), 8)
		}
		if has(29) {
			dst = appendQPN(dst, c.QPN)
		}
		if has(26) {
			dst = append(dst, " GID "...)
			dst = c.GID.AppendTo(dst)
		}
	case LLCAddLink:
		a := &l.AddLink
		if a.Rejected {
			dst = append(dst, " REJECT"...)
			if a.RejectReason != 0 {
				dst = append(dst, " reason "...)
				dst = numfmt.AppendUint(dst, uint64(a.RejectReason))
			}
			if has(32) {
				dst = appendLink(dst, a.LinkID)
			}
			return dst
		}
		if has(32) {
			dst = appendLink(dst, a.LinkID)
		}
		if has(31) {
			dst = appendQPN(dst, a.QPN)
		}
		if has(36) {
			dst = append(dst, " PSN 0x"...)
			dst = appendHexPad(dst, uint64(a.PSN), 6)
		}
		if n := IBMTU(a.MTU); n != 0 && has(33) {
			dst = append(dst, " MTU "...)
			dst = numfmt.AppendInt(dst, int64(n))
		}
		if has(28) {
			dst = append(dst, " GID "...)
			dst = a.GID.AppendTo(dst)
		}
		if a.V2Ext && has(72) {
			dst = append(dst, " rkeys "...)
			dst = numfmt.AppendUint(dst, uint64(a.NumRKeys))
		}
		if l.ANCK && has(llcAddLinkInitCreditsOff+1) {
			dst = append(dst, " init credits "...)
			dst = numfmt.AppendUint(dst, uint64(a.InitCredits))
		}
	case LLCAnnounceCredits:
		if has(5) {
			dst = append(dst, " credits "...)
			dst = numfmt.AppendUint(dst, uint64(l.AnnounceCredits.Credits))
		}
		dst = append(dst, " (ANCK)"...)
	case LLCAddLinkCont:
		if has(5) {
			dst = appendLink(dst, l.AddLinkCont.LinkID)
		}
		if has(6) {
			dst = append(dst, " rkeys "...)
			dst = numfmt.AppendUint(dst, uint64(l.AddLinkCont.NumRKeys))
		}
	case LLCDeleteLink:
		d := &l.DeleteLink
		if d.All {
			dst = append(dst, " ALL"...)
		}
		if d.Orderly {
			dst = append(dst, " ORDERLY"...)
		}
		if has(5) {
			dst = appendLink(dst, d.LinkID)
		}
		if has(9) {
			dst = append(dst, " reason 0x"...)
			dst = appendHexPad(dst, uint64(d.Reason), 8)
			dst = append(dst, ' ')
			dst = append(dst, d.Reason.StringIn(l.Response)...)
		}
	case LLCRequestAddLink:
		if has(25) {
			dst = append(dst, " gids "...)
			dst = numfmt.AppendUint(dst, uint64(l.RequestAddLink.NumGIDs))
		}
	case LLCConfirmRKey:
		c := &l.ConfirmRKey
		dst = appendNegRetry(dst, c.Negative, c.Retry)
		if has(9) {
			dst = append(dst, " rkey 0x"...)
			dst = numfmt.AppendHex(dst, uint64(c.RKey))
		}
		if has(17) {
			dst = append(dst, " VA 0x"...)
			dst = numfmt.AppendHex(dst, c.VA)
		}
		if has(5) {
			dst = append(dst, " other links "...)
			dst = numfmt.AppendUint(dst, uint64(c.NumOtherLinks))
		}
	case LLCConfirmRKeyCont:
		dst = appendNegRetry(dst, l.ConfirmRKeyCont.Negative, false)
		if has(5) {
			dst = append(dst, " rkeys "...)
			dst = numfmt.AppendUint(dst, uint64(l.ConfirmRKeyCont.NumRKeys))
		}
	case LLCDeleteRKey:
		d := &l.DeleteRKey
		dst = appendNegRetry(dst, d.Negative, false)
		if has(5) {
			dst = append(dst, " count "...)
			dst = numfmt.AppendUint(dst, uint64(d.NumRKeys))
		}
		if d.ErrMask != 0 && has(6) {
			dst = append(dst, " errmask 0x"...)
			dst = appendHexPad(dst, uint64(d.ErrMask), 2)
		}
		for i, k := range d.RKeyList() {
			if k != 0 && has(12+4*i) {
				dst = append(dst, " rkey 0x"...)
				dst = numfmt.AppendHex(dst, uint64(k))
			}
		}
	}
	return dst
}

func appendLink(dst []byte, id uint8) []byte {
	dst = append(dst, " link "...)
	return numfmt.AppendUint(dst, uint64(id))
}

func appendQPN(dst []byte, qpn uint32) []byte {
	dst = append(dst, " QP 0x"...)
	return appendHexPad(dst, uint64(qpn), 6)
}

func appendNegRetry(dst []byte, neg, retry bool) []byte {
	if neg {
		dst = append(dst, " NEGATIVE"...)
	}
	if retry {
		dst = append(dst, " RETRY"...)
	}
	return dst
}

func decodeLLC(data []byte, p gopacket.PacketBuilder) error {
	l := &LLC{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	return nextOrDone(p, l.NextLayerType(), l.Payload)
}

// LLC fields (struct smc_llc_msg_* in net/smc/smc_llc.c). Names are shared by the message types
// that carry the same thing (a link ID is smc.llc.link_id in CONFIRM LINK,
// ADD LINK and DELETE LINK); smc.llc.type tells them apart.
//
// Places, from the start of the message: struct smc_llc_hdr (type, the v1
// length byte whose low nibble is add_link_rej_rsn or the v2 length_v2 in
// host order, flags at 3), then per type smc_llc_msg_confirm_link,
// smc_llc_msg_add_link (+ smc_llc_msg_add_link_v2_ext at 44, its rt[] at
// 72), smc_llc_msg_add_link_cont (rt[] at 8), smc_llc_msg_del_link,
// smc_llc_msg_req_add_link_v2 (gid[] at 28), smc_llc_msg_confirm_rkey
// (13-byte struct smc_rmb_rtoken from 4, the first one's link byte being
// the count), smc_llc_msg_delete_rkey(_v2) (rkey[] at 8),
// smc_llc_msg_test_link. The place of a field the types share depends on
// the type (In, with llcIn); smc.llc.length_be is computed.
var (
	fLLCType     = Field(OwnerLLC, "smc.llc.type", KindUint, "LLC message type", Hex(), Enum(llcTypeName), At(0, 1))
	fLLCVersion  = Field(OwnerLLC, "smc.llc.version", KindUint, "LLC version (1 or 2)", At(0, 1, Via(llcVersionOf)))
	fLLCLength   = Field(OwnerLLC, "smc.llc.length", KindUint, "LLC message length", At(1, 1, llcV1()), At(1, 2, HostOrder(), llcV2()))
	fLLCLengthBE = Field(OwnerLLC, "smc.llc.length_be", KindBool, "LLC v2 length was big-endian (Linux writes host order; x86 = little-endian)")
	fLLCFlags    = Field(OwnerLLC, "smc.llc.flags", KindUint, "LLC flags byte", Hex(), At(3, 1))
	fLLCResponse = Field(OwnerLLC, "smc.llc.response", KindBool, "LLC response flag", At(3, 1, Bits(LLCFlagResponse)))
	fLLCLinkID   = Field(OwnerLLC, "smc.llc.link_id", KindUint, "LLC link ID", At(29, 1, llcIn(LLCConfirmLink)), At(31, 1, llcIn(LLCAddLink)), At(4, 1, llcIn(LLCAddLinkCont, LLCDeleteLink)))
	fLLCMAC      = Field(OwnerLLC, "smc.llc.mac", KindMAC, "LLC sender MAC", At(4, 6))
	fLLCGID      = Field(OwnerLLC, "smc.llc.gid", KindAddr, "LLC sender GID (REQUEST ADD LINK: each client GID)",
		At(10, 16, llcIn(LLCConfirmLink)), At(12, 16, llcIn(LLCAddLink)), At(28, 16, Every(16), llcIn(LLCRequestAddLink)))
	fLLCQPN          = Field(OwnerLLC, "smc.llc.qpn", KindUint, "LLC sender QP number", Hex(), At(26, 3, llcIn(LLCConfirmLink)), At(28, 3, llcIn(LLCAddLink)))
	fLLCPSN          = Field(OwnerLLC, "smc.llc.psn", KindUint, "LLC ADD LINK initial PSN", Hex(), At(33, 3))
	fLLCMTU          = Field(OwnerLLC, "smc.llc.mtu", KindUint, "LLC ADD LINK IB MTU enum", Enum(ibMTUName), At(32, 1, Bits(0x0f)))
	fLLCLinkUID      = Field(OwnerLLC, "smc.llc.link_uid", KindUint, "LLC CONFIRM LINK link user ID", Hex(), At(30, 4))
	fLLCMaxLinks     = Field(OwnerLLC, "smc.llc.max_links", KindUint, "LLC CONFIRM LINK max links", At(34, 1))
	fLLCMaxConns     = Field(OwnerLLC, "smc.llc.max_conns", KindUint, "LLC CONFIRM LINK max connections (v2.1)", At(35, 1))
	fLLCNoRMBEEyec   = Field(OwnerLLC, "smc.llc.no_rmbe_eyec", KindBool, "LLC CONFIRM LINK no RMBE eyecatchers flag", At(3, 1, Bits(LLCFlagNoRMBEEyecat), Via(llcBothBits)))
	fLLCReject       = Field(OwnerLLC, "smc.llc.reject", KindBool, "LLC ADD LINK rejected", At(3, 1, Bits(LLCFlagAddLinkRej)))
	fLLCRejectReason = Field(OwnerLLC, "smc.llc.reject_reason", KindUint, "LLC v1 ADD LINK reject reason (1 = no alternate path)", At(2, 1, Bits(0x0f)))
	fLLCDirect       = Field(OwnerLLC, "smc.llc.direct", KindBool, "LLC ADD LINK v2 direct flag", At(44, 1, Bits(0x80)))
	fLLCTargetGID    = Field(OwnerLLC, "smc.llc.target_gid", KindAddr, "LLC ADD LINK v2 client target GID", At(46, 16))
	fLLCRKeyCount    = Field(OwnerLLC, "smc.llc.rkey_count", KindUint, "LLC number of rkeys (ADD LINK v2, ADD LINK CONT, DELETE RKEY, CONFIRM RKEY CONT) or other links (CONFIRM RKEY)",
		At(70, 2, HostOrder(), llcIn(LLCAddLink)), At(5, 1, llcIn(LLCAddLinkCont)), At(4, 1, llcIn(LLCConfirmRKey, LLCConfirmRKeyCont, LLCDeleteRKey)))
	fLLCRKey = Field(OwnerLLC, "smc.llc.rkey", KindUint, "LLC rkey (on the link the message is sent on, or of the named link)", Hex(),
		At(72, 4, Every(16), llcIn(LLCAddLink)), At(8, 4, Every(16), llcIn(LLCAddLinkCont)),
		At(5, 4, llcIn(LLCConfirmRKey)), At(18, 4, Every(13), llcIn(LLCConfirmRKey)),
		At(6, 4, Every(13), llcIn(LLCConfirmRKeyCont)), At(8, 4, Every(4), llcIn(LLCDeleteRKey)))
	fLLCRKeyNew = Field(OwnerLLC, "smc.llc.rkey_new", KindUint, "LLC rkey on the new link (ADD LINK)", Hex(), At(76, 4, Every(16), llcIn(LLCAddLink)), At(12, 4, Every(16), llcIn(LLCAddLinkCont)))
	fLLCVA      = Field(OwnerLLC, "smc.llc.va", KindUint, "LLC RMB virtual address", Hex(),
		At(80, 8, Every(16), llcIn(LLCAddLink)), At(16, 8, Every(16), llcIn(LLCAddLinkCont)),
		At(9, 8, llcIn(LLCConfirmRKey)), At(22, 8, Every(13), llcIn(LLCConfirmRKey)), At(10, 8, Every(13), llcIn(LLCConfirmRKeyCont)))
	fLLCRKeyLink = Field(OwnerLLC, "smc.llc.rkey_link", KindUint, "LLC link ID of the next rkey/VA (CONFIRM RKEY)",
		At(17, 1, Every(13), llcIn(LLCConfirmRKey)), At(5, 1, Every(13), llcIn(LLCConfirmRKeyCont)))
	fLLCDelReason  = Field(OwnerLLC, "smc.llc.delete.reason", KindUint, "LLC DELETE LINK reason", Hex(), Enum(deleteReasonName), ParseNames(deleteReasonOK), At(5, 4))
	fLLCDelAll     = Field(OwnerLLC, "smc.llc.delete.all", KindBool, "LLC DELETE LINK all links (terminate link group)", At(3, 1, Bits(LLCFlagDelLinkAll)))
	fLLCDelOrderly = Field(OwnerLLC, "smc.llc.delete.orderly", KindBool, "LLC DELETE LINK orderly", At(3, 1, Bits(LLCFlagDelLinkOrd)))
	fLLCNegative   = Field(OwnerLLC, "smc.llc.negative", KindBool, "LLC CONFIRM/DELETE RKEY negative response", At(3, 1, Bits(LLCFlagRKeyNeg)))
	fLLCRetry      = Field(OwnerLLC, "smc.llc.retry", KindBool, "LLC CONFIRM RKEY retry rkey set", At(3, 1, Bits(LLCFlagRKeyRetry)))
	fLLCRKeyMask   = Field(OwnerLLC, "smc.llc.rkey_mask", KindUint, "LLC DELETE RKEY error mask (v2: number of invalid rkeys)", Hex(), At(5, 1))
	fLLCGIDCount   = Field(OwnerLLC, "smc.llc.gid_count", KindUint, "LLC REQUEST ADD LINK number of GIDs", At(24, 1))
	fLLCTestData   = Field(OwnerLLC, "smc.llc.test_data", KindBytes, "LLC TEST LINK user data", At(4, 16))
)

// llcIn places a field in the given LLC types, v1 and v2 alike: their
// layouts differ only in the header's length field.
func llcIn(ts ...LLCType) PlaceOpt {
	var v []int
	for _, t := range ts {
		v = append(v, int(t.Base()), int(t.Base()|0x20))
	}
	return In(v...)
}

// llcV1 and llcV2 place a field in every v1 or every v2 type.
func llcV1() PlaceOpt { return llcVersionIn(0x00) }
func llcV2() PlaceOpt { return llcVersionIn(0x20) }

func llcVersionIn(version LLCType) PlaceOpt {
	var v []int
	for t := LLCConfirmLink; t <= LLCDeleteRKey; t++ {
		v = append(v, int(version|t))
	}
	if version == 0 {
		v = append(v, int(LLCAnnounceCredits)) // ANCK's, v1 only
	}
	return In(v...)
}

// llcVersionOf is smc.llc.version from the type byte.
func llcVersionOf(t uint64) uint64 { return uint64(LLCType(t).Version()) }

// llcBothBits is 1 when both bits of SMC_LLC_FLAG_NO_RMBE_EYEC are set, as
// LLCConfirmLinkBody.NoRMBEEyecatcher reads them.
func llcBothBits(b uint64) uint64 {
	if b == LLCFlagNoRMBEEyecat {
		return 1
	}
	return 0
}
