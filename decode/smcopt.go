package decode

import "github.com/gopacket/gopacket/layers"

// TCP option kind 254 is shared by every RFC 6994 experiment; only the ExID
// tells SMC apart (TCPOPT_SMC_MAGIC, include/net/tcp.h; written by smc_options_write in net/ipv4/tcp_output.c). TCP Fast Open (0xF989) and AccECN
// (0xACC0) use the same kind, so the kind alone is not evidence of SMC.
const (
	tcpOptionKindExperimental layers.TCPOptionKind = 254
	smcOptionMinLen           uint8                = 6 // kind + len + 4-byte ExID
)

// smcExID is the SMC experiment ID: the SMC-R CLC eyecatcher, "SMCR" in EBCDIC.
var smcExID = EyecatcherSMCR

// smcoExID is ANCK's TCPOPT_SMC_OK_MAGIC, "SMCO" in EBCDIC (ANCK
// include/net/tcp.h): with net.smc.experiment_syn_smc (default on) an ANCK
// server answers an SMC SYN with it instead of "SMCR" (OPTION_SMC_OK in
// ANCK net/ipv4/tcp_output.c), and an ANCK client takes only it in a
// SYN-ACK. No upstream kernel sends it.
var smcoExID = [4]byte{0xE2, 0xD4, 0xC3, 0xD6}

var fTCPSMCOption = Field(OwnerTCP, "tcp.smc_option", KindBool,
	"SYN/SYN-ACK carries the SMC TCP option (kind 254, ExID 0xE2D4C3D9)")

var fTCPSMCO = Field(OwnerTCP, "tcp.smc_option.smco", KindBool,
	"the SMC option carries ANCK's SYN-ACK magic \"SMCO\" (0xE2D4C3D6): an Alibaba Cloud Linux (ANCK) server")

// SMCOption reports whether a TCP segment's options announce SMC. It applies
// the Linux receive check (smc_parse_options): kind 254, even length >= 6,
// first four data bytes equal to the SMC ExID, or ANCK's "SMCO".
func SMCOption(opts []layers.TCPOption) bool {
	ok, _ := SMCOptionKind(opts)
	return ok
}

// SMCOptionKind is SMCOption, and whether the option is ANCK's "SMCO".
func SMCOptionKind(opts []layers.TCPOption) (smc, smco bool) {
	for _, o := range opts {
		if o.OptionType != tcpOptionKindExperimental {
			continue
		}
		if o.OptionLength < smcOptionMinLen || o.OptionLength%2 != 0 || len(o.OptionData) < 4 {
			continue
		}
		switch [4]byte(o.OptionData[:4]) {
		case smcExID:
			return true, false
		case smcoExID:
			return true, true
		}
	}
	return false, false
}

// SMCOptionNear reports whether the raw TCP options opts (the header's
// bytes after its first 20) hold the SMC option's six bytes (kind 254,
// length 6, the SMC ExID) with at most two of them different. Its
// callers ask of a damaged copy of a segment in which SMCOption found no
// option: the option itself damaged (a flipped bit, or a run of two bytes
// overwritten: kind and length both), or whole behind an option whose
// damaged length ends the list (tcp_parse_options stops there, and so
// does the decoder). By chance, four of six bytes match at a place once
// in ~2^28.
func SMCOptionNear(opts []byte) bool {
	want := SMCOptionSent()
	for i := 0; i+len(want) <= len(opts); i++ {
		off := 0
		for j, b := range want {
			if opts[i+j] != b {
				off++
			}
		}
		if off <= 2 {
			return true
		}
	}
	return false
}

// SMCOptionIn reports whether the raw TCP options opts hold the SMC option
// where a receiver's walk of the list finds it (tcp_parse_options in
// net/ipv4/tcp_input.c: an option whose length is short or runs past the
// list ends it).
func SMCOptionIn(opts []byte) bool {
	for i := 0; i < len(opts); {
		switch opts[i] {
		case 0: // end of options
			return false
		case 1: // no-operation
			i++
			continue
		}
		if i+1 >= len(opts) {
			return false
		}
		n := int(opts[i+1])
		if n < 2 || i+n > len(opts) {
			return false
		}
		if opts[i] == byte(tcpOptionKindExperimental) && n >= int(smcOptionMinLen) && [4]byte(opts[i+2:i+6]) == smcExID {
			return true
		}
		i += n
	}
	return false
}

// SMCOptionSent is the SMC option as Linux sends it in a SYN or SYN-ACK
// (smc_set_option in net/ipv4/tcp_output.c): kind 254, length 6, the SMC
// ExID.
func SMCOptionSent() [6]byte {
	return [6]byte{byte(tcpOptionKindExperimental), smcOptionMinLen, smcExID[0], smcExID[1], smcExID[2], smcExID[3]}
}

// AppendSMCOptionFields adds tcp.smc_option: 1 when the segment carries the
// SMC option, 0 on a SYN or SYN-ACK without it (the fallback evidence), and
// nothing on other segments, where the option is never sent.
func AppendSMCOptionFields(r *Record, tcp *layers.TCP) {
	if tcp == nil {
		return
	}
	if smc, smco := SMCOptionKind(tcp.Options); smc {
		r.AddBool(fTCPSMCOption, true)
		if smco {
			r.AddBool(fTCPSMCO, true)
		}
		return
	}
	if tcp.SYN {
		r.AddBool(fTCPSMCOption, false)
	}
}
