package probe

import "github.com/smcscope/smcscope/decode"

// DeclineCode is a fallback reason or peer diagnosis (SMC_CLC_DECL_*,
// smc-wire-format §2.7). It is decode's type, so smcping, smcdump and
// smctop print the same kernel names and meanings.
type DeclineCode = decode.DeclineCode
