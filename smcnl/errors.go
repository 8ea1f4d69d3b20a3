package smcnl

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// ErrNotSupported is matched (via errors.Is) by every *UnsupportedError: the
// running kernel lacks the family, module or command.
var ErrNotSupported = errors.New("not supported")

// UnsupportedError says which kernel feature is missing and the first Linux
// release that has it, in the spirit of cilium/ebpf's UnsupportedFeatureError.
type UnsupportedError struct {
	Feature   string // "SMC_GEN_NETLINK", "SMC sock_diag (smc_diag)", "SMC_NETLINK_GET_STATS"
	MinKernel string // "5.11"
	Err       error  // the kernel's answer, if any
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s not supported (requires >= %s)", e.Feature, e.MinKernel)
}

// Is lets errors.Is(err, ErrNotSupported) match.
func (e *UnsupportedError) Is(target error) bool { return target == ErrNotSupported }

// Unwrap returns the kernel's errno, so errors.Is(err, syscall.ENOENT) still works.
func (e *UnsupportedError) Unwrap() error { return e.Err }

// minKernel dates each command by the uapi commit that added it
// (include/uapi/linux/smc.h, enum SMC_NETLINK_*), for the UnsupportedError of an older kernel.
var minKernel = map[uint8]string{
	cmdGetSysInfo:       "5.11",
	cmdGetLGRSMCR:       "5.11",
	cmdGetLinkSMCR:      "5.11",
	cmdGetLGRSMCD:       "5.11",
	cmdGetDevSMCD:       "5.11",
	cmdGetDevSMCR:       "5.11",
	cmdGetStats:         "5.14",
	cmdGetFallbackStats: "5.14",
	cmdDumpUEID:         "5.15",
	cmdAddUEID:          "5.15",
	cmdRemoveUEID:       "5.15",
	cmdFlushUEID:        "5.15",
	cmdDumpSEID:         "5.15",
	cmdDumpHSLimitation: "5.18",
	cmdEnableHSLimit:    "5.18",
	cmdDisableHSLimit:   "5.18",
}

// cmdNames gives each command its kernel name for error messages.
var cmdNames = map[uint8]string{
	cmdGetSysInfo:       "SMC_NETLINK_GET_SYS_INFO",
	cmdGetLGRSMCR:       "SMC_NETLINK_GET_LGR_SMCR",
	cmdGetLinkSMCR:      "SMC_NETLINK_GET_LINK_SMCR",
	cmdGetLGRSMCD:       "SMC_NETLINK_GET_LGR_SMCD",
	cmdGetDevSMCD:       "SMC_NETLINK_GET_DEV_SMCD",
	cmdGetDevSMCR:       "SMC_NETLINK_GET_DEV_SMCR",
	cmdGetStats:         "SMC_NETLINK_GET_STATS",
	cmdGetFallbackStats: "SMC_NETLINK_GET_FBACK_STATS",
	cmdDumpUEID:         "SMC_NETLINK_DUMP_UEID",
	cmdAddUEID:          "SMC_NETLINK_ADD_UEID",
	cmdRemoveUEID:       "SMC_NETLINK_REMOVE_UEID",
	cmdFlushUEID:        "SMC_NETLINK_FLUSH_UEID",
	cmdDumpSEID:         "SMC_NETLINK_DUMP_SEID",
	cmdDumpHSLimitation: "SMC_NETLINK_DUMP_HS_LIMITATION",
	cmdEnableHSLimit:    "SMC_NETLINK_ENABLE_HS_LIMITATION",
	cmdDisableHSLimit:   "SMC_NETLINK_DISABLE_HS_LIMITATION",
}

func cmdName(cmd uint8) string {
	if n, ok := cmdNames[cmd]; ok {
		return n
	}
	return fmt.Sprintf("SMC_NETLINK command %d", cmd)
}

// mapCmdError turns the kernel's answer to one command into the package's
// error vocabulary (style.md §4): EPERM/EACCES match os.ErrPermission,
// ENODEV matches os.ErrNotExist, and EOPNOTSUPP (genetlink's answer to a
// command the family does not know) becomes an *UnsupportedError.
func mapCmdError(cmd uint8, err error) error {
	if err == nil {
		return nil
	}
	op := cmdName(cmd)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		return &UnsupportedError{Feature: op, MinKernel: minKernel[cmd], Err: err}
	}
	return mapErrno(op, err)
}

// mapErrno names op in err and makes EPERM/EACCES match os.ErrPermission
// and ENODEV os.ErrNotExist, for both SMC_GEN_NETLINK and SMC_PNETID.
// EEXIST (a UEID or a device under another PNET ID already there) matches
// os.ErrExist by itself.
func mapErrno(op string, err error) error {
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return fmt.Errorf("smcnl: %s: %w (%w)", op, os.ErrPermission, err)
	case errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("smcnl: %s: %w (%w)", op, os.ErrNotExist, err)
	}
	return fmt.Errorf("smcnl: %s: %w", op, err)
}
