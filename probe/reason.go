package probe

import "github.com/smcscope/smcscope/decode"

// DeclineCode is a fallback reason or peer diagnosis (SMC_CLC_DECL_* in
// net/smc/smc_clc.h, the peer_diagnosis of struct smc_clc_msg_decline). It
// is decode's type, so smcping, smcdump and smctop print the same kernel
// names and meanings.
type DeclineCode = decode.DeclineCode
