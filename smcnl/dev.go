package smcnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// Port is one port of an SMC device (SMC_NLA_DEV_PORT / PORT2).
type Port struct {
	Number       uint8 // 1 or 2: which nest it came from
	PNETIDByUser bool  // PNET ID set with smc_pnet rather than by hardware
	PNETID       string
	NetDev       uint32 // ifindex of the port's netdev
	Active       bool   // SMC_NLA_DEV_PORT_STATE
	Valid        bool
	LinkCount    uint32
}

// Device is an RDMA (SMC-R) or ISM (SMC-D) device as SMC sees it
// (SMC_GEN_DEV_SMCR / SMC_GEN_DEV_SMCD).
type Device struct {
	UseCount  uint32
	Critical  bool // the only path of some link group: no failover
	PCIFID    uint32
	PCICHID   uint16
	PCIVendor uint16
	PCIDevice uint16
	PCIID     string
	Ports     []Port // the valid ports only
	IBName    string
}

// DevicesR lists the RoCE devices SMC-R can use.
func (c *Conn) DevicesR() ([]Device, error) { return c.devices(cmdGetDevSMCR, genDevSMCR) }

// DevicesD lists the ISM devices SMC-D can use.
func (c *Conn) DevicesD() ([]Device, error) { return c.devices(cmdGetDevSMCD, genDevSMCD) }

func (c *Conn) devices(cmd uint8, typ uint16) ([]Device, error) {
	msgs, err := c.execute(cmd, true, nil)
	if err != nil {
		return nil, err
	}
	return parseAll(msgs, func(b []byte) (Device, bool, error) { return parseDevice(b, typ) })
}

// ParseDeviceR decodes one GET_DEV_SMCR reply message.
func ParseDeviceR(b []byte) (Device, bool, error) { return parseDevice(b, genDevSMCR) }

// ParseDeviceD decodes one GET_DEV_SMCD reply message.
func ParseDeviceD(b []byte) (Device, bool, error) { return parseDevice(b, genDevSMCD) }

func parseDevice(b []byte, typ uint16) (d Device, ok bool, err error) {
	ok, err = nested(b, typ, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case devUseCnt:
				d.UseCount = ad.Uint32()
			case devIsCrit:
				d.Critical = ad.Uint8() != 0
			case devPCIFID:
				d.PCIFID = ad.Uint32()
			case devPCICHID:
				d.PCICHID = uint16(uintAttr(ad))
			case devPCIVendor:
				d.PCIVendor = uint16(uintAttr(ad))
			case devPCIDevice:
				d.PCIDevice = uint16(uintAttr(ad))
			case devPCIID:
				d.PCIID = cString(ad.Bytes())
			case devPort, devPort2:
				p := Port{Number: 1}
				if ad.Type() == devPort2 {
					p.Number = 2
				}
				ad.Nested(p.decode)
				d.Ports = append(d.Ports, p)
			case devIBName:
				d.IBName = cString(ad.Bytes())
			}
		}
		return nil
	})
	if err != nil {
		return Device{}, false, fmt.Errorf("DEV: %w", err)
	}
	return d, ok, nil
}

func (p *Port) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		switch ad.Type() {
		case portPNETUsr:
			p.PNETIDByUser = ad.Uint8() != 0
		case portPNETID:
			p.PNETID = eidString(ad.Bytes())
		case portNetDev:
			p.NetDev = ad.Uint32()
		case portState:
			p.Active = ad.Uint8() != 0
		case portValid:
			p.Valid = ad.Uint8() != 0
		case portLnkCnt:
			p.LinkCount = ad.Uint32()
		}
	}
	return nil
}
