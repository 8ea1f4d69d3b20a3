package capture

import (
	"net/netip"

	"github.com/smcscope/smcscope/decode"
)

// Fields of the frame and of the gopacket layers below SMC; the SMC and
// RoCE layers register their own in package decode. Places (At) are from
// the start of each header, as the kernel's structs lay them out: struct
// ethhdr (include/uapi/linux/if_ether.h), struct vlan_hdr (TCI then the
// inner EtherType, include/linux/if_vlan.h), struct iphdr or struct
// ipv6hdr (include/uapi/linux/ip.h, ipv6.h) as the version nibble says,
// struct tcphdr (flags in byte 13, include/uapi/linux/tcp.h), struct
// udphdr. tcp.len and tcp.smc_option have no fixed place: one is
// computed, the other is an option anywhere among the options.
var (
	fFrameNumber = decode.Field(decode.OwnerFrame, "frame.number", decode.KindUint, "Frame number (1-based position in the capture)")
	fFrameTime   = decode.Field(decode.OwnerFrame, "frame.time_epoch", decode.KindTime, "Capture time, seconds since 1970-01-01 UTC, at the capture's resolution")
	fFrameLen    = decode.Field(decode.OwnerFrame, "frame.len", decode.KindUint, "Frame length on the wire")
	fFrameCapLen = decode.Field(decode.OwnerFrame, "frame.cap_len", decode.KindUint, "Bytes captured of the frame")
	fEthSrc      = decode.Field(decode.OwnerEthernet, "eth.src", decode.KindMAC, "Ethernet source address", decode.At(6, 6))
	fEthDst      = decode.Field(decode.OwnerEthernet, "eth.dst", decode.KindMAC, "Ethernet destination address", decode.At(0, 6))
	fEthType     = decode.Field(decode.OwnerEthernet, "eth.type", decode.KindUint, "EtherType", decode.Hex(), decode.At(12, 2))
	fVLANID      = decode.Field(decode.OwnerVLAN, "vlan.id", decode.KindUint, "802.1Q VLAN identifier (outer tag first)", decode.At(0, 2, decode.Bits(0x0fff)))
	fIPSrc       = decode.Field(decode.OwnerIP, "ip.src", decode.KindAddr, "IPv4 or IPv6 source address", decode.At(12, 4, decode.In(4)), decode.At(8, 16, decode.In(6)))
	fIPDst       = decode.Field(decode.OwnerIP, "ip.dst", decode.KindAddr, "IPv4 or IPv6 destination address", decode.At(16, 4, decode.In(4)), decode.At(24, 16, decode.In(6)))
	fIPProto     = decode.Field(decode.OwnerIP, "ip.proto", decode.KindUint, "IP protocol (IPv6: next header)", decode.At(9, 1, decode.In(4)), decode.At(6, 1, decode.In(6)))
	fIPTTL       = decode.Field(decode.OwnerIP, "ip.ttl", decode.KindUint, "IPv4 TTL or IPv6 hop limit", decode.At(8, 1, decode.In(4)), decode.At(7, 1, decode.In(6)))
	fIPVersion   = decode.Field(decode.OwnerIP, "ip.version", decode.KindUint, "IP version (4 or 6)", decode.At(0, 1, decode.Bits(0xf0)))
	fTCPSrcPort  = decode.Field(decode.OwnerTCP, "tcp.srcport", decode.KindUint, "TCP source port", decode.At(0, 2))
	fTCPDstPort  = decode.Field(decode.OwnerTCP, "tcp.dstport", decode.KindUint, "TCP destination port", decode.At(2, 2))
	fTCPSeq      = decode.Field(decode.OwnerTCP, "tcp.seq", decode.KindUint, "TCP sequence number (absolute)", decode.At(4, 4))
	fTCPAck      = decode.Field(decode.OwnerTCP, "tcp.ack", decode.KindUint, "TCP acknowledgement number (absolute)", decode.At(8, 4))
	fTCPLen      = decode.Field(decode.OwnerTCP, "tcp.len", decode.KindUint, "TCP payload length on the wire (from the IP length where the frame is cut)")
	fTCPSYN      = decode.Field(decode.OwnerTCP, "tcp.flags.syn", decode.KindBool, "TCP SYN flag", decode.At(13, 1, decode.Bits(0x02)))
	fTCPACK      = decode.Field(decode.OwnerTCP, "tcp.flags.ack", decode.KindBool, "TCP ACK flag", decode.At(13, 1, decode.Bits(0x10)))
	fTCPFIN      = decode.Field(decode.OwnerTCP, "tcp.flags.fin", decode.KindBool, "TCP FIN flag", decode.At(13, 1, decode.Bits(0x01)))
	fTCPRST      = decode.Field(decode.OwnerTCP, "tcp.flags.rst", decode.KindBool, "TCP RST flag", decode.At(13, 1, decode.Bits(0x04)), decode.WiresharkName("tcp.flags.reset"))
	fTCPSumOK    = decode.Field(decode.OwnerTCP, "tcp.checksum.ok", decode.KindBool, "TCP checksum verified: 0 on a damaged segment (present on the segments of a connection followed as SMC from its SYN, where checked)")
	fUDPSrcPort  = decode.Field(decode.OwnerUDP, "udp.srcport", decode.KindUint, "UDP source port", decode.At(0, 2))
	fUDPDstPort  = decode.Field(decode.OwnerUDP, "udp.dstport", decode.KindUint, "UDP destination port", decode.At(2, 2))
	fFrameCut    = decode.Field(decode.OwnerFrame, "frame.cut", decode.KindBool, "Frame cut by the capture's snap length (present only when cut)")
	fFrameError  = decode.Field(decode.OwnerFrame, "frame.error", decode.KindString, "Decode error of this frame, with layer, field and offset")

	// A tunnel's headers sit where the carrier's put them: no fixed place.
	fTunnelType      = decode.Field(decode.OwnerTunnel, "tunnel.type", decode.KindString, "encapsulation that carried the frame: ERSPAN I/II/III, GRE, VXLAN, Geneve (present only when carried)")
	fTunnelSrc       = decode.Field(decode.OwnerTunnel, "tunnel.src", decode.KindAddr, "outer IP source address: the mirroring switch or the overlay's endpoint")
	fTunnelDst       = decode.Field(decode.OwnerTunnel, "tunnel.dst", decode.KindAddr, "outer IP destination address: the collector or the overlay's endpoint")
	fTunnelID        = decode.Field(decode.OwnerTunnel, "tunnel.id", decode.KindUint, "ERSPAN session ID, VXLAN or Geneve VNI, GRE key")
	fTunnelSeq       = decode.Field(decode.OwnerTunnel, "tunnel.seq", decode.KindUint, "GRE sequence number (ERSPAN II and III always carry one): a step of more than one is the mirror session's frames the capture does not hold (present only when carried)")
	fTunnelTruncated = decode.Field(decode.OwnerTunnel, "tunnel.truncated", decode.KindBool, "the mirror cut the frame it carries: an ERSPAN T bit, or an IP length that claims more than the tunnel carried (present only when true)")
)

func appendBaseFields(r *decode.Record, f *Frame) {
	g := f.demand
	if w := f.frameFields; w != 0 {
		if w&wNumber != 0 {
			r.AddUint(fFrameNumber, uint64(f.Number))
		}
		if w&wTime != 0 {
			r.AddTime(fFrameTime, f.ns, f.digits)
		}
		if w&wLen != 0 {
			r.AddUint(fFrameLen, uint64(f.CI.Length))
			r.AddUint(fFrameCapLen, uint64(f.CI.CaptureLength))
		}
		if f.Cut && w&wCut != 0 {
			r.AddBool(fFrameCut, true)
		}
		if w&wError != 0 {
			if f.RecordErr != nil {
				r.AddString(fFrameError, f.RecordErr.Error())
			}
			if f.Err != nil {
				r.AddString(fFrameError, f.Err.Error())
			}
			for _, e := range f.CLCErr {
				r.AddString(fFrameError, e.Error())
			}
		}
	}
	if t := f.Tunnel; t != nil && g&gTunnel != 0 {
		r.AddString(fTunnelType, t.Kind.String())
		if t.Src.IsValid() {
			r.AddAddr(fTunnelSrc, t.Src)
			r.AddAddr(fTunnelDst, t.Dst)
		}
		if t.HasID {
			r.AddUint(fTunnelID, uint64(t.ID))
		}
		if t.HasSeq {
			r.AddUint(fTunnelSeq, uint64(t.Seq))
		}
		if t.Truncated {
			r.AddBool(fTunnelTruncated, true)
		}
	}
	if f.Eth != nil && g&gEth != 0 {
		r.AddBytes(fEthSrc, f.Eth.SrcMAC)
		r.AddBytes(fEthDst, f.Eth.DstMAC)
		r.AddUint(fEthType, uint64(f.Eth.EthernetType))
	}
	for i := 0; i < len(f.VLAN) && g&gVLAN != 0; i++ {
		r.AddUint(fVLANID, uint64(f.VLAN[i].VLANIdentifier))
	}
	switch {
	case g&gIP == 0:
	case f.IPv4 != nil:
		ip := f.IPv4
		r.AddUint(fIPVersion, 4)
		r.AddAddr(fIPSrc, addr(ip.SrcIP))
		r.AddAddr(fIPDst, addr(ip.DstIP))
		r.AddUint(fIPProto, uint64(ip.Protocol))
		r.AddUint(fIPTTL, uint64(ip.TTL))
	case f.IPv6 != nil:
		ip := f.IPv6
		r.AddUint(fIPVersion, 6)
		r.AddAddr(fIPSrc, addr(ip.SrcIP))
		r.AddAddr(fIPDst, addr(ip.DstIP))
		r.AddUint(fIPProto, uint64(ip.NextHeader))
		r.AddUint(fIPTTL, uint64(ip.HopLimit))
	}
	if t := f.TCPHeader(); t != nil && g&gTCP != 0 {
		r.AddUint(fTCPSrcPort, uint64(t.SrcPort))
		r.AddUint(fTCPDstPort, uint64(t.DstPort))
		r.AddUint(fTCPSeq, uint64(t.Seq))
		r.AddUint(fTCPAck, uint64(t.Ack))
		r.AddUint(fTCPLen, uint64(f.TCPWireLen()))
		r.AddBool(fTCPSYN, t.SYN)
		r.AddBool(fTCPACK, t.ACK)
		r.AddBool(fTCPFIN, t.FIN)
		r.AddBool(fTCPRST, t.RST)
		if f.TCPSum.Checked {
			r.AddBool(fTCPSumOK, f.TCPSum.OK)
		}
		if _, _, known := f.SMCOptionShown(); known {
			decode.AppendSMCOptionFields(r, t)
		}
	}
	if u := f.UDP; u != nil && g&gUDP != 0 {
		r.AddUint(fUDPSrcPort, uint64(u.SrcPort))
		r.AddUint(fUDPDstPort, uint64(u.DstPort))
	}
}

// addr converts without allocating; a length other than 4 or 16 gives the
// zero Addr.
func addr(ip []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(ip)
	return a
}
