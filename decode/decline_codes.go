package decode

import "strconv"

// DeclineCode is an SMC decline / fallback reason: the peer diagnosis of a
// CLC Decline (SMC_CLC_DECL_* in net/smc/smc_clc.h), and the same 32-bit values as the local
// fallback reason in sock_diag and in the SMC netlink statistics. Local
// reasons may also be negative errno values stored as uint32.
//
// The top byte is the class: 0x01 resource, 0x02 timeout, 0x03
// configuration, 0x04 synchronisation, 0x05 peer, 0x09 internal.
type DeclineCode uint32

// Decline codes of current Linux, net/smc/smc_clc.h (SMC_CLC_DECL_*).
const (
	DeclineMem        DeclineCode = 0x01010000 // SMC_CLC_DECL_MEM
	DeclineTimeoutCL  DeclineCode = 0x02010000 // SMC_CLC_DECL_TIMEOUT_CL
	DeclineTimeoutAL  DeclineCode = 0x02020000 // SMC_CLC_DECL_TIMEOUT_AL
	DeclineCnfErr     DeclineCode = 0x03000000 // SMC_CLC_DECL_CNFERR
	DeclinePeerNoSMC  DeclineCode = 0x03010000 // SMC_CLC_DECL_PEERNOSMC
	DeclineIPsec      DeclineCode = 0x03020000 // SMC_CLC_DECL_IPSEC
	DeclineNoSMCDev   DeclineCode = 0x03030000 // SMC_CLC_DECL_NOSMCDEV
	DeclineNoSMCDDev  DeclineCode = 0x03030001 // SMC_CLC_DECL_NOSMCDDEV
	DeclineNoSMCRDev  DeclineCode = 0x03030002 // SMC_CLC_DECL_NOSMCRDEV
	DeclineNoISM2Supp DeclineCode = 0x03030003 // SMC_CLC_DECL_NOISM2SUPP
	DeclineNoV2Ext    DeclineCode = 0x03030004 // SMC_CLC_DECL_NOV2EXT
	DeclineNoV2DExt   DeclineCode = 0x03030005 // SMC_CLC_DECL_NOV2DEXT
	DeclineNoSEID     DeclineCode = 0x03030006 // SMC_CLC_DECL_NOSEID
	DeclineNoSMCD2Dev DeclineCode = 0x03030007 // SMC_CLC_DECL_NOSMCD2DEV
	DeclineNoUEID     DeclineCode = 0x03030008 // SMC_CLC_DECL_NOUEID
	DeclineReleaseErr DeclineCode = 0x03030009 // SMC_CLC_DECL_RELEASEERR
	DeclineMaxConnErr DeclineCode = 0x0303000a // SMC_CLC_DECL_MAXCONNERR
	DeclineMaxLinkErr DeclineCode = 0x0303000b // SMC_CLC_DECL_MAXLINKERR
	DeclineFeatUnsupp DeclineCode = 0x0303000c // SMC_CLC_DECL_FEATUNSUPP
	DeclineModeUnsupp DeclineCode = 0x03040000 // SMC_CLC_DECL_MODEUNSUPP
	DeclineRMBEEC     DeclineCode = 0x03050000 // SMC_CLC_DECL_RMBE_EC
	DeclineOptUnsupp  DeclineCode = 0x03060000 // SMC_CLC_DECL_OPTUNSUPP
	DeclineDiffPrefix DeclineCode = 0x03070000 // SMC_CLC_DECL_DIFFPREFIX
	DeclineGetVLANErr DeclineCode = 0x03080000 // SMC_CLC_DECL_GETVLANERR
	DeclineISMVLANErr DeclineCode = 0x03090000 // SMC_CLC_DECL_ISMVLANERR
	DeclineNoActLink  DeclineCode = 0x030a0000 // SMC_CLC_DECL_NOACTLINK
	DeclineNoSrvLink  DeclineCode = 0x030b0000 // SMC_CLC_DECL_NOSRVLINK
	DeclineVersMismat DeclineCode = 0x030c0000 // SMC_CLC_DECL_VERSMISMAT
	DeclineMaxDMB     DeclineCode = 0x030d0000 // SMC_CLC_DECL_MAX_DMB
	DeclineNoRoute    DeclineCode = 0x030e0000 // SMC_CLC_DECL_NOROUTE
	DeclineNoIndirect DeclineCode = 0x030f0000 // SMC_CLC_DECL_NOINDIRECT
	DeclineSyncErr    DeclineCode = 0x04000000 // SMC_CLC_DECL_SYNCERR
	DeclinePeerDecl   DeclineCode = 0x05000000 // SMC_CLC_DECL_PEERDECL
	DeclineIntErr     DeclineCode = 0x09990000 // SMC_CLC_DECL_INTERR
	DeclineErrRTok    DeclineCode = 0x09990001 // SMC_CLC_DECL_ERR_RTOK
	DeclineErrRdyLnk  DeclineCode = 0x09990002 // SMC_CLC_DECL_ERR_RDYLNK
	DeclineErrRegBuf  DeclineCode = 0x09990003 // SMC_CLC_DECL_ERR_REGBUF (ERR_REGRMB before 5.x)
	DeclineCreditsErr DeclineCode = 0x09990004 // SMC_CLC_DECL_CREDITSERR (ANCK net/smc/smc_clc.h only)
	// DeclineVendorErr is ANCK's SMC_CLC_DECL_VENDORERR, the value of
	// DeclineFeatUnsupp: which one a Decline means depends on its
	// handshake (CLC.ANCK).
	DeclineVendorErr              = DeclineFeatUnsupp
	DeclineTimeoutOld DeclineCode = 0x02000000 // SMC_CLC_DECL_TIMEOUT (Linux 4.11..4.x, historic)
	DeclineTCLOld     DeclineCode = 0x02040000 // SMC_CLC_DECL_TCL (Linux 4.11..4.x, historic)
	DeclineReplyOld   DeclineCode = 0x06000000 // SMC_CLC_DECL_REPLY (Linux 4.11..4.x, historic)
	DeclineSendOld    DeclineCode = 0x07000000 // SMC_CLC_DECL_SEND (Linux 4.11..4.x, historic)
	DeclineIntErrOld  DeclineCode = 0x99990000 // SMC_CLC_DECL_INTERR (Linux 4.11..4.x, historic)
)

// declineInfo pairs the kernel name with a one-line meaning. The meanings
// are phrased so that they read right both for a Decline on the wire (the
// sender's reason) and for a local fallback reason in sock_diag.
type declineInfo struct {
	name, meaning string
}

var declineTable = map[DeclineCode]declineInfo{
	DeclineMem:        {"MEM", "insufficient memory for SMC buffers or link group"},
	DeclineTimeoutCL:  {"TIMEOUT_CL", "timeout waiting for LLC CONFIRM LINK on the first link"},
	DeclineTimeoutAL:  {"TIMEOUT_AL", "timeout waiting for LLC ADD LINK"},
	DeclineCnfErr:     {"CNFERR", "configuration error"},
	DeclinePeerNoSMC:  {"PEERNOSMC", "peer did not offer SMC (no SMC TCP option in SYN/SYN-ACK)"},
	DeclineIPsec:      {"IPSEC", "IPsec in use on the TCP connection"},
	DeclineNoSMCDev:   {"NOSMCDEV", "no usable SMC device (R or D), or no matching UEID / SMC-Rv2 path"},
	DeclineNoSMCDDev:  {"NOSMCDDEV", "no usable SMC-D (ISM) device"},
	DeclineNoSMCRDev:  {"NOSMCRDEV", "no usable SMC-R (RoCE) device"},
	DeclineNoISM2Supp: {"NOISM2SUPP", "ISM device has no SMC-Dv2 support"},
	DeclineNoV2Ext:    {"NOV2EXT", "peer sent no CLC v2 extension"},
	DeclineNoV2DExt:   {"NOV2DEXT", "peer sent no SMC-Dv2 extension"},
	DeclineNoSEID:     {"NOSEID", "peer sent no system EID (SEID)"},
	DeclineNoSMCD2Dev: {"NOSMCD2DEV", "no usable SMC-Dv2 device"},
	DeclineNoUEID:     {"NOUEID", "peer sent no user EID (UEID)"},
	DeclineReleaseErr: {"RELEASEERR", "SMC v2 release negotiation failed (v2.1)"},
	DeclineMaxConnErr: {"MAXCONNERR", "max connections per link group negotiation failed (v2.1)"},
	DeclineMaxLinkErr: {"MAXLINKERR", "max links per link group negotiation failed (v2.1)"},
	DeclineFeatUnsupp: {"FEATUNSUPP", "supplemental feature (v2.1 feature mask) not supported (2023 RFC code, not in merged Linux; ANCK sends it as VENDORERR)"},
	DeclineModeUnsupp: {"MODEUNSUPP", "SMC modes do not match (R vs D)"},
	DeclineRMBEEC:     {"RMBE_EC", "peer uses RMBE eyecatchers (not supported by Linux)"},
	DeclineOptUnsupp:  {"OPTUNSUPP", "socket option unsupported with SMC (e.g. TCP Fast Open)"},
	DeclineDiffPrefix: {"DIFFPREFIX", "IP subnet/prefix mismatch (SMC v1 needs the same subnet)"},
	DeclineGetVLANErr: {"GETVLANERR", "cannot get the VLAN ID of the IP device"},
	DeclineISMVLANErr: {"ISMVLANERR", "cannot register the VLAN ID on the ISM device"},
	DeclineNoActLink:  {"NOACTLINK", "no active SMC-R link in the link group"},
	DeclineNoSrvLink:  {"NOSRVLINK", "SMC-R link announced by the server not found"},
	DeclineVersMismat: {"VERSMISMAT", "SMC version mismatch"},
	DeclineMaxDMB:     {"MAX_DMB", "SMC-D DMB limit exceeded"},
	DeclineNoRoute:    {"NOROUTE", "SMC-Rv2: no route to the peer over the RoCE device"},
	DeclineNoIndirect: {"NOINDIRECT", "SMC-Rv2: direct/indirect (gateway) path mismatch"},
	DeclineSyncErr:    {"SYNCERR", "link group out of sync; receiver must drop it"},
	DeclinePeerDecl:   {"PEERDECL", "peer declined (local reason; the peer's code is the peer diagnosis)"},
	DeclineIntErr:     {"INTERR", "internal error"},
	DeclineErrRTok:    {"ERR_RTOK", "internal error: rkey token handling failed"},
	DeclineErrRdyLnk:  {"ERR_RDYLNK", "internal error: QP/link ready failed"},
	DeclineErrRegBuf:  {"ERR_REGBUF", "internal error: RDMA buffer registration failed"},
	DeclineCreditsErr: {"CREDITSERR", "ANCK (Alibaba Cloud Linux): announcing receive-queue credits on the new connection's link failed"},
	DeclineTimeoutOld: {"TIMEOUT", "timeout (historic Linux 4.x code)"},
	DeclineTCLOld:     {"TCL", "timeout waiting for QP confirm (historic Linux 4.x code)"},
	DeclineReplyOld:   {"REPLY", "reply to a received decline (historic Linux 4.x code)"},
	DeclineSendOld:    {"SEND", "sending problem (historic Linux 4.x code)"},
	DeclineIntErrOld:  {"INTERR", "internal error (historic Linux 4.x code)"},
}

// Linux errno names for the negative values sock_diag can report as a local
// fallback reason (generic Linux numbering, as on x86 and arm64).
var errnoNames = map[int32][2]string{
	1:   {"EPERM", "operation not permitted"},
	2:   {"ENOENT", "no such file or directory"},
	4:   {"EINTR", "interrupted system call"},
	11:  {"EAGAIN", "resource temporarily unavailable"},
	12:  {"ENOMEM", "out of memory"},
	13:  {"EACCES", "permission denied"},
	14:  {"EFAULT", "bad address"},
	16:  {"EBUSY", "device or resource busy"},
	19:  {"ENODEV", "no such device"},
	22:  {"EINVAL", "invalid argument"},
	32:  {"EPIPE", "broken pipe"},
	61:  {"ENODATA", "no data available"},
	67:  {"ENOLINK", "link has been severed"},
	71:  {"EPROTO", "protocol error (malformed CLC message)"},
	90:  {"EMSGSIZE", "message too long"},
	95:  {"EOPNOTSUPP", "operation not supported"},
	101: {"ENETUNREACH", "network is unreachable"},
	103: {"ECONNABORTED", "connection aborted"},
	104: {"ECONNRESET", "connection reset by peer"},
	105: {"ENOBUFS", "no buffer space available"},
	107: {"ENOTCONN", "transport endpoint is not connected"},
	108: {"ESHUTDOWN", "cannot send after transport endpoint shutdown"},
	110: {"ETIMEDOUT", "connection timed out (CLC wait)"},
	111: {"ECONNREFUSED", "connection refused"},
	113: {"EHOSTUNREACH", "no route to host"},
}

var declineClasses = map[uint8]string{
	0x01: "resource",
	0x02: "timeout",
	0x03: "configuration",
	0x04: "synchronisation",
	0x05: "peer",
	0x09: "internal",
}

// Errno reports whether c is a negative errno (a local fallback reason, never
// on the wire) and returns its positive value.
func (c DeclineCode) Errno() (int32, bool) {
	v := int32(c)
	// Real codes have their class in the top byte, so they are positive as
	// int32 except the historic 0x99990000; errno values are small.
	if v < 0 && v > -4096 {
		return -v, true
	}
	return 0, false
}

// Known reports whether c is a code this package has a name for.
func (c DeclineCode) Known() bool {
	if _, ok := declineTable[c]; ok {
		return true
	}
	if e, ok := c.Errno(); ok {
		_, ok = errnoNames[e]
		return ok
	}
	return false
}

// Named reports whether String gives c a name (a kernel code's, or a
// negative errno's), not its hex.
func (c DeclineCode) Named() bool {
	if _, ok := declineTable[c]; ok {
		return true
	}
	_, ok := c.Errno()
	return ok
}

// String returns the kernel name without the SMC_CLC_DECL_ prefix
// ("NOSMCRDEV"), "-ETIMEDOUT" for a negative errno, and the code in hex for
// an unknown value.
func (c DeclineCode) String() string {
	if d, ok := declineTable[c]; ok {
		return d.name
	}
	if e, ok := c.Errno(); ok {
		if n, ok := errnoNames[e]; ok {
			return "-" + n[0]
		}
		return "-" + strconv.Itoa(int(e))
	}
	return c.hex()
}

// Meaning returns one line a user can act on, for known and unknown codes.
func (c DeclineCode) Meaning() string {
	if d, ok := declineTable[c]; ok {
		return d.meaning
	}
	if e, ok := c.Errno(); ok {
		if n, ok := errnoNames[e]; ok {
			return "local error: " + n[1]
		}
		return "local error: errno " + strconv.Itoa(int(e))
	}
	if c == 0 {
		return "no reason given"
	}
	if cl, ok := declineClasses[uint8(c>>24)]; ok {
		return "unknown " + cl + " reason (newer or non-Linux peer?)"
	}
	return "unknown reason (newer or non-Linux peer?)"
}

// vendorErr names DeclineVendorErr in an ANCK handshake.
var vendorErr = declineInfo{"VENDORERR", "ANCK (Alibaba Cloud Linux): the client's vendor options (Confirm) differ from the server's (Accept)"}

// StringIn is String for a Decline of an ANCK handshake (anck) or not:
// 0x0303000c is then ANCK's VENDORERR.
func (c DeclineCode) StringIn(anck bool) string {
	if anck && c == DeclineVendorErr {
		return vendorErr.name
	}
	return c.String()
}

// EnumLabel is c's name where the handshake it came in is not known (a
// field's enum in the -V tree): both names for the code that means one
// thing upstream and another in ANCK's handshakes, whose Decline's own
// name field (StringIn) says which.
func (c DeclineCode) EnumLabel() string {
	if c == DeclineVendorErr {
		return c.String() + "; " + vendorErr.name + " in an ANCK handshake"
	}
	return c.String()
}

// MeaningIn is Meaning for a Decline of an ANCK handshake or not.
func (c DeclineCode) MeaningIn(anck bool) string {
	if anck && c == DeclineVendorErr {
		return vendorErr.meaning
	}
	return c.Meaning()
}

// hex renders c as 0x%08x without fmt, so AppendSummary stays cheap.
func (c DeclineCode) hex() string {
	return string(c.clcAppendHex(nil))
}

func (c DeclineCode) clcAppendHex(dst []byte) []byte {
	return appendHexPad(append(dst, '0', 'x'), uint64(c), 8)
}
