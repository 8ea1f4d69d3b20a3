package smcnl

import (
	"fmt"

	"github.com/mdlayher/netlink"
)

// Histogram counts buffers or payloads by size: buckets 8K, 16K, 32K, 64K,
// 128K, 256K, 512K, 1024K and >1024K (SMC_NLA_STATS_PLOAD_*; the kernel
// picks a bucket by fls((len-1)>>13)).
type Histogram [histBuckets]uint64

// HistogramLabels name the buckets of a Histogram, in order.
var HistogramLabels = [histBuckets]string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1024K", "G1024K"}

// RMBStats counts buffer events in one direction (SMC_NLA_STATS_RMB_*).
type RMBStats struct {
	SizeSmallPeer uint64 // peer's buffer too small
	SizeSmall     uint64 // own buffer too small
	FullPeer      uint64 // peer's buffer full
	Full          uint64 // own buffer full
	Reuse         uint64
	Alloc         uint64
	Downgrade     uint64
}

// TechStats are the counters of one technology, SMC-R or SMC-D
// (SMC_NLA_STATS_T_*).
type TechStats struct {
	TxRMBSize     Histogram
	RxRMBSize     Histogram
	TxPayloadSize Histogram
	RxPayloadSize Histogram
	TxRMBStats    RMBStats
	RxRMBStats    RMBStats
	ClientV1Succ  uint64
	ClientV2Succ  uint64
	ServerV1Succ  uint64
	ServerV2Succ  uint64
	SendpageCount uint64 // always 0 on current kernels
	SpliceCount   uint64
	CorkCount     uint64
	NodelayCount  uint64
	UrgDataCount  uint64
	RxBytes       uint64
	TxBytes       uint64
	RxCount       uint64
	TxCount       uint64
	RxRMBUsage    uint64 // bytes in use, 6.10+
	TxRMBUsage    uint64
	// RMBUsageKnown: the kernel sent the usage attributes (Linux 6.10+);
	// before, the usage is unknown, not 0.
	RMBUsageKnown bool
}

// Stats are the per-namespace SMC counters, summed over CPUs
// (SMC_NETLINK_GET_STATS).
type Stats struct {
	SMCD             TechStats
	SMCR             TechStats
	ClientHSErrCount uint64 // handshake errors as client
	ServerHSErrCount uint64
}

// Stats reads the SMC counters (Linux 5.14+).
func (c *Conn) Stats() (Stats, error) {
	msgs, err := c.execute(cmdGetStats, true, nil)
	if err != nil {
		return Stats{}, err
	}
	return parseFirst(cmdGetStats, "STATS", msgs, ParseStats)
}

// ParseStats decodes one GET_STATS reply message; ok is false when it holds
// no SMC_GEN_STATS nest.
func ParseStats(b []byte) (s Stats, ok bool, err error) {
	ok, err = nested(b, genStats, func(ad *netlink.AttributeDecoder) error {
		for ad.Next() {
			switch ad.Type() {
			case statsSMCDTech:
				ad.Nested(s.SMCD.decode)
			case statsSMCRTech:
				ad.Nested(s.SMCR.decode)
			case statsClntHSErrCnt:
				s.ClientHSErrCount = ad.Uint64()
			case statsSrvHSErrCnt:
				s.ServerHSErrCount = ad.Uint64()
			}
		}
		return nil
	})
	if err != nil {
		return Stats{}, false, fmt.Errorf("STATS: %w", err)
	}
	return s, ok, nil
}

func (t *TechStats) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		switch ad.Type() {
		case techTxRMBSize:
			ad.Nested(t.TxRMBSize.decode)
		case techRxRMBSize:
			ad.Nested(t.RxRMBSize.decode)
		case techTxPloadSize:
			ad.Nested(t.TxPayloadSize.decode)
		case techRxPloadSize:
			ad.Nested(t.RxPayloadSize.decode)
		case techTxRMBStats:
			ad.Nested(t.TxRMBStats.decode)
		case techRxRMBStats:
			ad.Nested(t.RxRMBStats.decode)
		case techClntV1Succ:
			t.ClientV1Succ = ad.Uint64()
		case techClntV2Succ:
			t.ClientV2Succ = ad.Uint64()
		case techSrvV1Succ:
			t.ServerV1Succ = ad.Uint64()
		case techSrvV2Succ:
			t.ServerV2Succ = ad.Uint64()
		case techSendpageCnt:
			t.SendpageCount = ad.Uint64()
		case techSpliceCnt:
			t.SpliceCount = ad.Uint64()
		case techCorkCnt:
			t.CorkCount = ad.Uint64()
		case techNdlyCnt:
			t.NodelayCount = ad.Uint64()
		case techUrgDataCnt:
			t.UrgDataCount = ad.Uint64()
		case techRxBytes:
			t.RxBytes = ad.Uint64()
		case techTxBytes:
			t.TxBytes = ad.Uint64()
		case techRxCnt:
			t.RxCount = ad.Uint64()
		case techTxCnt:
			t.TxCount = ad.Uint64()
		case techRxRMBUsage:
			t.RxRMBUsage, t.RMBUsageKnown = uintAttr(ad), true
		case techTxRMBUsage:
			t.TxRMBUsage, t.RMBUsageKnown = uintAttr(ad), true
		}
	}
	return nil
}

func (h *Histogram) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		// Type 0 is the PAD of nla_put_u64_64bit; 1..9 are the buckets.
		if t := ad.Type(); t >= 1 && t <= histBuckets {
			h[t-1] = ad.Uint64()
		}
	}
	return nil
}

func (r *RMBStats) decode(ad *netlink.AttributeDecoder) error {
	for ad.Next() {
		switch ad.Type() {
		case rmbSizeSmPeerCnt:
			r.SizeSmallPeer = ad.Uint64()
		case rmbSizeSmCnt:
			r.SizeSmall = ad.Uint64()
		case rmbFullPeerCnt:
			r.FullPeer = ad.Uint64()
		case rmbFullCnt:
			r.Full = ad.Uint64()
		case rmbReuseCnt:
			r.Reuse = ad.Uint64()
		case rmbAllocCnt:
			r.Alloc = ad.Uint64()
		case rmbDgradeCnt:
			r.Downgrade = ad.Uint64()
		}
	}
	return nil
}

// FallbackReason is how often one reason made connections fall back to TCP.
type FallbackReason struct {
	Code  uint32 // SMC_CLC_DECL_* or another local reason
	Count uint16 // the kernel keeps a u16 per reason
}

// FallbackStats are the fallback counters per side (SMC_NETLINK_GET_FBACK_STATS).
type FallbackStats struct {
	ServerTotal uint64
	ClientTotal uint64
	Server      []FallbackReason
	Client      []FallbackReason
}

// fallbackEntry is one GET_FBACK_STATS reply message.
type fallbackEntry struct {
	server              bool
	srvTotal, clntTotal uint64
	hasTotals           bool
	reason              FallbackReason
	hasReason           bool
}

// FallbackStats reads the fallback counters (Linux 5.14+).
func (c *Conn) FallbackStats() (FallbackStats, error) {
	msgs, err := c.execute(cmdGetFallbackStats, true, nil)
	if err != nil {
		return FallbackStats{}, err
	}
	bs := make([][]byte, len(msgs))
	for i, m := range msgs {
		bs[i] = m.Data
	}
	return ParseFallbackStats(bs)
}

// ParseFallbackStats folds the reply messages of one GET_FBACK_STATS dump:
// each carries one reason of one side, the first also the totals.
func ParseFallbackStats(msgs [][]byte) (FallbackStats, error) {
	var fs FallbackStats
	for i, b := range msgs {
		var e fallbackEntry
		ok, err := nested(b, genFbStats, func(ad *netlink.AttributeDecoder) error {
			for ad.Next() {
				switch ad.Type() {
				case fbType:
					e.server = ad.Uint8() != 0
				case fbSrvCnt:
					e.srvTotal, e.hasTotals = ad.Uint64(), true
				case fbClntCnt:
					e.clntTotal, e.hasTotals = ad.Uint64(), true
				case fbRsnCode:
					e.reason.Code, e.hasReason = ad.Uint32(), true
				case fbRsnCnt:
					e.reason.Count = ad.Uint16()
				}
			}
			return nil
		})
		if err != nil {
			return FallbackStats{}, fmt.Errorf("smcnl: FBACK_STATS reply %d: %w", i, err)
		}
		if !ok {
			continue
		}
		if e.hasTotals {
			fs.ServerTotal, fs.ClientTotal = e.srvTotal, e.clntTotal
		}
		if !e.hasReason {
			continue
		}
		if e.server {
			fs.Server = append(fs.Server, e.reason)
		} else {
			fs.Client = append(fs.Client, e.reason)
		}
	}
	return fs, nil
}
