package smcnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// SysInfo is the kernel's SMC capability summary (SMC_NETLINK_GET_SYS_INFO).
type SysInfo struct {
	Version   uint8  // SMC_NLA_SYS_VER: highest SMC version, 2 on v2 kernels
	Release   uint8  // SMC_NLA_SYS_REL: SMC v2 release, 1 = v2.1
	ISMv2     bool   // SMC_NLA_SYS_IS_ISM_V2
	SMCRv2    bool   // SMC_NLA_SYS_IS_SMCR_V2
	LocalHost string // SMC_NLA_SYS_LOCAL_HOST: host name sent in CLC v2
	SEID      string // SMC_NLA_SYS_SEID: system EID (s390 only)
}

// SysInfo asks the kernel for its SMC capabilities.
func (c *Conn) SysInfo() (SysInfo, error) {
	msgs, err := c.execute(cmdGetSysInfo, true, nil)
	if err != nil {
		return SysInfo{}, err
	}
	return parseFirst(cmdGetSysInfo, "SYS_INFO", msgs, ParseSysInfo)
}

// ParseSysInfo decodes the attributes of one GET_SYS_INFO reply; ok is false
// when the message holds no SYS_INFO nest.
func ParseSysInfo(b []byte) (s SysInfo, ok bool, err error) {
	ok, err = nested(b, genSysInfo, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case sysVer:
				s.Version = ad.Uint8()
			case sysRel:
				s.Release = ad.Uint8()
			case sysIsISMV2:
				s.ISMv2 = ad.Uint8() != 0
			case sysIsSMCRV2:
				s.SMCRv2 = ad.Uint8() != 0
			case sysLocalHost:
				s.LocalHost = eidString(ad.Bytes())
			case sysSEID:
				s.SEID = eidString(ad.Bytes())
			}
		}
		return nil
	})
	if err != nil {
		return SysInfo{}, false, fmt.Errorf("SYS_INFO: %w", err)
	}
	return s, ok, nil
}
