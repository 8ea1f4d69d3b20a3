package probe

import "fmt"

// DeclineCode is a fallback reason or peer diagnosis (SMC_CLC_DECL_*,
// smc-wire-format §2.7).
//
// TODO(probe-decline): becomes an alias of decode.DeclineCode once the decode
// package builds in the tree; this local table only covers the codes the
// lab scenarios produce and the common configuration errors.
type DeclineCode uint32

var declineNames = map[DeclineCode][2]string{
	0x01010000: {"MEM", "insufficient memory"},
	0x02010000: {"TIMEOUT_CL", "timeout waiting for LLC CONFIRM LINK"},
	0x02020000: {"TIMEOUT_AL", "timeout waiting for LLC ADD LINK"},
	0x03000000: {"CNFERR", "configuration error"},
	0x03010000: {"PEERNOSMC", "peer did not offer SMC (no TCP option): not an SMC server"},
	0x03020000: {"IPSEC", "IPsec in use"},
	0x03030000: {"NOSMCDEV", "no SMC device, or no matching UEID"},
	0x03030001: {"NOSMCDDEV", "no SMC-D device"},
	0x03030002: {"NOSMCRDEV", "no SMC-R (RoCE) device"},
	0x03030008: {"NOUEID", "peer sent no UEID"},
	0x03040000: {"MODEUNSUPP", "SMC modes do not match"},
	0x03060000: {"OPTUNSUPP", "socket option unsupported (e.g. TCP Fast Open)"},
	0x03070000: {"DIFFPREFIX", "IP prefix/subnet mismatch"},
	0x030c0000: {"VERSMISMAT", "SMC version mismatch"},
	0x030e0000: {"NOROUTE", "SMC-Rv2: no route to peer"},
	0x04000000: {"SYNCERR", "link-group synchronization error"},
	0x05000000: {"PEERDECL", "peer declined"},
	0x09990000: {"INTERR", "internal error"},
}

// String returns the kernel name without the SMC_CLC_DECL_ prefix, or hex.
func (c DeclineCode) String() string {
	if n, ok := declineNames[c]; ok {
		return n[0]
	}
	return fmt.Sprintf("0x%08x", uint32(c))
}

// Meaning returns one line a user can act on.
func (c DeclineCode) Meaning() string {
	if n, ok := declineNames[c]; ok {
		return n[1]
	}
	if int32(c) < 0 && int32(c) > -4096 {
		return fmt.Sprintf("local error: errno %d", -int32(c))
	}
	if c == 0 {
		return "no reason given"
	}
	return "unknown reason (newer or non-Linux peer?)"
}
