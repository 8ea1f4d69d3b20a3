package probe

import (
	"errors"
	"fmt"
)

// Proto selects how a probe socket is opened.
type Proto uint8

const (
	// ProtoSMC is socket(AF_SMC, SOCK_STREAM, SMCPROTO_SMC) for IPv4 or
	// SMCPROTO_SMC6 for IPv6, available since Linux 4.11.
	ProtoSMC Proto = iota
	// ProtoIPPROTO is socket(AF_INET[6], SOCK_STREAM, IPPROTO_SMC), Linux >= 6.11.
	ProtoIPPROTO
	// ProtoTCP is a plain TCP socket: the baseline, and a server that is not SMC.
	ProtoTCP
)

var protoNames = [...]string{ProtoSMC: "smc", ProtoIPPROTO: "ipproto", ProtoTCP: "tcp"}

func (p Proto) String() string {
	if int(p) < len(protoNames) {
		return protoNames[p]
	}
	return fmt.Sprintf("proto(%d)", uint8(p))
}

// IsSMC reports whether sockets of this kind ask the kernel for SMC.
func (p Proto) IsSMC() bool { return p == ProtoSMC || p == ProtoIPPROTO }

// ParseProto accepts the names printed by Proto.String.
func ParseProto(s string) (Proto, error) {
	for i, n := range protoNames {
		if n == s {
			return Proto(i), nil
		}
	}
	return 0, fmt.Errorf("unknown protocol %q (want smc, ipproto or tcp)", s)
}

// ErrNotSupported is matched (errors.Is) by every UnsupportedError.
var ErrNotSupported = errors.New("not supported by this kernel")

// UnsupportedError says which kernel feature is missing and what provides it.
type UnsupportedError struct {
	Feature string // "AF_SMC sockets"
	Needs   string // "the smc kernel module (modprobe smc; CONFIG_SMC)"
	Err     error  // the errno that revealed it
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s not supported by this kernel (needs %s): %v", e.Feature, e.Needs, e.Err)
}

// Is makes errors.Is(err, ErrNotSupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrNotSupported }

func (e *UnsupportedError) Unwrap() error { return e.Err }
