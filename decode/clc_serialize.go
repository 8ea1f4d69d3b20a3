package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
)

// SerializeTo writes the CLC message as the kernel lays it out (struct
// smc_clc_msg_hdr, the body of its type, struct smc_clc_msg_trail): every
// region of a Proposal at the offsets its fields give, an Accept/Confirm
// with its FCE and GID list, a Decline. With FixLengths, Length becomes
// the end of the last region plus the trailer, and a zero trailer becomes
// the eyecatcher (as Linux writes it). Reserved bytes are zero.
func (c *CLC) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	end, err := c.bodyEnd()
	if err != nil {
		return err
	}
	if opts.FixLengths {
		c.Length = uint16(end + clcTrailerLen)
		if c.Trailer == ([4]byte{}) {
			c.Trailer = c.Eyecatcher
		}
	}
	n := max(int(c.Length), end+clcTrailerLen)
	m, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	clear(m)
	copy(m[0:4], c.Eyecatcher[:])
	m[4] = byte(c.Type)
	binary.BigEndian.PutUint16(m[5:7], c.Length)
	m[7] = c.Version<<4 | byte(c.TypeV2&0x03)<<2 | byte(c.TypeV1&0x03)
	if c.Flag {
		m[7] |= 0x08
	}
	copy(m[n-clcTrailerLen:], c.Trailer[:])
	switch c.Type {
	case CLCTypeProposal:
		c.Proposal.serialize(c, m)
	case CLCTypeAccept, CLCTypeConfirm:
		c.Accept.serialize(c, m)
	case CLCTypeDecline:
		c.Decline.serialize(c, m)
	}
	return nil
}

// bodyEnd is where the message's contents end, before the trailer.
func (c *CLC) bodyEnd() (int, error) {
	switch c.Type {
	case CLCTypeDecline:
		if c.Version >= 2 && !c.Decline.ShortV2 {
			return declineV2Len - clcTrailerLen, nil
		}
		return declineV1Len - clcTrailerLen, nil
	case CLCTypeAccept, CLCTypeConfirm:
		a := &c.Accept
		switch c.TypeV1 {
		case SMCTypeR:
			if c.Version < 2 {
				return acceptV1RLen - clcTrailerLen, nil
			}
			return a.tailEnd(acceptV2RBody), nil
		case SMCTypeD:
			if c.Version < 2 {
				return acceptV1DLen - clcTrailerLen, nil
			}
			return a.tailEnd(acceptV2DBody), nil
		}
		return 0, fmt.Errorf("CLC %v: chosen SMC type %v has no layout", c.Type, c.TypeV1)
	case CLCTypeProposal:
		return c.Proposal.end(), nil
	}
	return 0, fmt.Errorf("CLC: type %d has no layout", c.Type)
}

func (a *CLCAccept) tailEnd(body int) int {
	end := body
	if a.HasFCE {
		end += a.FCE.Len
		if a.HasGIDList {
			end += fceGIDListHdr + gidLen*int(a.GIDCount)
		}
	}
	return end
}

func (a *CLCAccept) serialize(c *CLC, m []byte) {
	switch c.TypeV1 {
	case SMCTypeR:
		copy(m[8:16], a.PeerID[:])
		putGID(m[16:], a.GID)
		copy(m[32:38], a.MAC[:])
		put24(m[38:], a.QPN)
		binary.BigEndian.PutUint32(m[41:], a.RKey)
		m[45] = a.RMBEIdx
		binary.BigEndian.PutUint32(m[46:], a.AlertToken)
		m[50] = a.RMBESize<<4 | a.QPMTU&0x0f
		binary.BigEndian.PutUint64(m[52:], a.RMBVA)
		put24(m[61:], a.PSN)
		if c.Version >= 2 {
			copy(m[acceptEIDROff:acceptEIDROff+propEIDLen], a.EID)
			a.serializeTail(m, acceptV2RBody)
		}
	case SMCTypeD:
		binary.BigEndian.PutUint64(m[8:], a.SMCDGID)
		binary.BigEndian.PutUint64(m[16:], a.DMBToken)
		m[24] = a.DMBEIdx
		m[25] = a.DMBESize << 4
		copy(m[28:32], a.LinkID[:])
		if c.Version >= 2 {
			binary.BigEndian.PutUint16(m[acceptCHIDDOff:], a.CHID)
			copy(m[acceptEIDDOff:acceptEIDDOff+propEIDLen], a.EID)
			binary.BigEndian.PutUint64(m[66:], a.GIDExt)
			a.serializeTail(m, acceptV2DBody)
		}
	}
}

func (a *CLCAccept) serializeTail(m []byte, off int) {
	if !a.HasFCE {
		return
	}
	f := &a.FCE
	fb := m[off : off+f.Len]
	if f.Direct {
		fb[0] = 0x80
	}
	fb[1] = f.OSType<<4 | f.Release&0x0f
	copy(fb[4:4+hostnameLen], f.Hostname)
	if f.Len == fceV2xLen {
		fb[36], fb[37] = f.MaxConns, f.MaxLinks
		binary.BigEndian.PutUint16(fb[38:], f.FeatureMask)
		binary.BigEndian.PutUint32(fb[40:], f.VendorOptions)
	}
	if a.HasGIDList {
		g := off + f.Len
		m[g] = a.GIDCount
		copy(m[g+fceGIDListHdr:], a.gids)
	}
}

func (d *CLCDecline) serialize(c *CLC, m []byte) {
	copy(m[8:16], d.PeerID[:])
	binary.BigEndian.PutUint32(m[16:20], uint32(d.Diagnosis))
	if c.Version >= 2 {
		m[20] = d.OSType << 4
	}
	if c.Version >= 2 && !d.ShortV2 {
		// The 28-byte v2 Decline of 5.10-5.15 has no room for these.
		for i, x := range d.ExtraDiag {
			binary.BigEndian.PutUint32(m[24+4*i:], uint32(x))
		}
	}
}

// end is where the Proposal's last region ends.
func (p *CLCProposal) end() int {
	end := propFixedLen
	if p.HasSMCDArea {
		end = max(end, propFixedLen+propSMCDAreaLen)
	}
	if p.HasPrefix {
		end = max(end, propFixedLen+int(p.IPAreaOffset)+propPrefixLen+len(p.ipv6))
	}
	if p.HasV2Ext {
		e := &p.V2Ext
		end = max(end, propV2ExtBase+int(p.V2ExtOffset)+propV2ExtLen+len(e.eids))
		if p.HasSMCDv2Ext {
			end = max(end, propV2ExtBase+int(p.V2ExtOffset)+8+int(e.SMCDv2ExtOffset)+propSMCDv2Len+len(p.SMCDv2Ext.gidchid))
		}
	}
	return end
}

func (p *CLCProposal) serialize(_ *CLC, m []byte) {
	copy(m[8:16], p.PeerID[:])
	putGID(m[16:], p.GID)
	copy(m[32:38], p.MAC[:])
	binary.BigEndian.PutUint16(m[38:40], p.IPAreaOffset)
	if p.HasSMCDArea {
		binary.BigEndian.PutUint64(m[40:48], p.ISMGID)
		binary.BigEndian.PutUint16(m[48:50], p.ISMCHID)
		binary.BigEndian.PutUint16(m[50:52], p.V2ExtOffset)
		copy(m[52:55], p.VendorOUI[:])
	}
	if p.HasPrefix {
		off := propFixedLen + int(p.IPAreaOffset)
		if p.IPv4Prefix.Is4() {
			x := p.IPv4Prefix.As4()
			copy(m[off:off+4], x[:])
		}
		m[off+4] = p.IPv4PrefixLen
		m[off+7] = p.IPv6PrefixCount
		copy(m[off+propPrefixLen:], p.ipv6)
	}
	if p.HasV2Ext {
		e := &p.V2Ext
		off := propV2ExtBase + int(p.V2ExtOffset)
		m[off], m[off+1] = e.EIDCount, e.ISMGIDCount
		m[off+3] = e.Release << 4
		if e.SEIDPresent {
			m[off+3] |= 0x01
		}
		binary.BigEndian.PutUint16(m[off+6:], e.SMCDv2ExtOffset)
		putGID(m[off+8:], e.RoCEv2GID)
		m[off+24], m[off+25] = e.MaxConns, e.MaxLinks
		binary.BigEndian.PutUint16(m[off+26:], e.FeatureMask)
		copy(m[off+propV2ExtLen:], e.eids)
		if p.HasSMCDv2Ext {
			d := off + 8 + int(e.SMCDv2ExtOffset)
			copy(m[d:d+propEIDLen], p.SMCDv2Ext.SEID)
			copy(m[d+propSMCDv2Len:], p.SMCDv2Ext.gidchid)
		}
	}
}
