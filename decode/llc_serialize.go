package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
)

// minLength is the shortest message that holds the LLC's fields: 44
// bytes, or for v2 the ADD LINK extension with its rkeys, the REQUEST
// ADD LINK GID list and the DELETE RKEY list (struct smc_llc_msg_*_v2).
func (l *LLC) minLength() int {
	n := smcMsgLen
	if l.Version != 2 && l.Type.Version() != 2 {
		return n
	}
	switch l.Type.Base() {
	case LLCAddLink:
		if l.AddLink.V2Ext {
			n = max(n, 72+16*int(l.AddLink.NumRKeys))
		}
	case LLCRequestAddLink:
		n = max(n, 28+16*int(l.RequestAddLink.NumGIDs))
	case LLCDeleteRKey:
		n = max(n, 8+4*int(l.DeleteRKey.NumRKeys))
	}
	return n
}

// SerializeTo writes the LLC message as the kernel lays it out (struct
// smc_llc_msg_* in net/smc/smc_llc.c): the v2 length in host order
// (little-endian, as x86 Linux writes it) unless LengthBigEndian, the
// flags byte with the bits the body's booleans stand for. With
// FixLengths, Length becomes the shortest length that holds the fields.
// Lists beyond what the layer keeps (LLCMaxRKeys, LLCMaxGIDs) are written
// as zero entries.
func (l *LLC) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		l.Length = uint16(l.minLength())
	}
	n := max(int(l.Length), smcMsgLen)
	m, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	clear(m)
	m[0] = byte(l.Type)
	v2 := l.Type.Version() == 2
	if v2 {
		if l.LengthBigEndian {
			binary.BigEndian.PutUint16(m[1:3], l.Length)
		} else {
			binary.LittleEndian.PutUint16(m[1:3], l.Length)
		}
	} else {
		m[1] = byte(l.Length)
	}
	f := l.Flags
	if l.Response {
		f |= LLCFlagResponse
	}
	u16 := func(b []byte, v uint16) {
		if l.LengthBigEndian {
			binary.BigEndian.PutUint16(b, v)
		} else {
			binary.LittleEndian.PutUint16(b, v)
		}
	}
	switch l.Type.Base() {
	case LLCConfirmLink:
		c := &l.ConfirmLink
		copy(m[4:10], c.MAC[:])
		putGID(m[10:26], c.GID)
		put24(m[26:29], c.QPN)
		m[29] = c.LinkID
		binary.BigEndian.PutUint32(m[30:34], c.LinkUID)
		m[34], m[35] = c.MaxLinks, c.MaxConns
		if c.NoRMBEEyecatcher {
			f |= LLCFlagNoRMBEEyecat
		}
	case LLCAddLink:
		a := &l.AddLink
		copy(m[4:10], a.MAC[:])
		putGID(m[12:28], a.GID)
		put24(m[28:31], a.QPN)
		m[31] = a.LinkID
		m[32] = a.MTU & 0x0F
		put24(m[33:36], a.PSN)
		m[llcAddLinkInitCreditsOff] = a.InitCredits // reserved (0) upstream
		if a.Rejected {
			f |= LLCFlagAddLinkRej
		}
		if !v2 {
			m[2] = a.RejectReason & 0x0F
		} else if a.V2Ext && n >= 72 {
			if a.Direct {
				m[44] = 0x80
			}
			putGID(m[46:62], a.TargetGID)
			u16(m[70:72], a.NumRKeys)
			for i, t := range a.Triplets() {
				if 72+16*i+16 <= n {
					putTriplet(m[72+16*i:], t)
				}
			}
		}
	case LLCAnnounceCredits:
		m[4] = l.AnnounceCredits.Credits
	case LLCAddLinkCont:
		a := &l.AddLinkCont
		m[4], m[5] = a.LinkID, a.NumRKeys
		for i, t := range a.RKeys {
			putTriplet(m[8+16*i:], t)
		}
	case LLCDeleteLink:
		d := &l.DeleteLink
		m[4] = d.LinkID
		binary.BigEndian.PutUint32(m[5:9], uint32(d.Reason))
		if d.All {
			f |= LLCFlagDelLinkAll
		}
		if d.Orderly {
			f |= LLCFlagDelLinkOrd
		}
	case LLCRequestAddLink:
		q := &l.RequestAddLink
		m[24] = q.NumGIDs
		for i, g := range q.GIDList() {
			if 28+16*i+16 <= n {
				putGID(m[28+16*i:], g)
			}
		}
	case LLCConfirmRKey:
		c := &l.ConfirmRKey
		m[4] = c.NumOtherLinks
		binary.BigEndian.PutUint32(m[5:9], c.RKey)
		binary.BigEndian.PutUint64(m[9:17], c.VA)
		for i, t := range c.Others {
			putRToken(m[17+13*i:], t)
		}
		if c.Negative {
			f |= LLCFlagRKeyNeg
		}
		if c.Retry {
			f |= LLCFlagRKeyRetry
		}
	case LLCConfirmRKeyCont:
		c := &l.ConfirmRKeyCont
		m[4] = c.NumRKeys
		for i, t := range c.RTokens {
			putRToken(m[5+13*i:], t)
		}
	case LLCTestLink:
		copy(m[4:20], l.TestLink.UserData[:])
	case LLCDeleteRKey:
		d := &l.DeleteRKey
		m[4], m[5] = d.NumRKeys, d.ErrMask
		for i, k := range d.RKeyList() {
			if 8+4*i+4 <= n {
				binary.BigEndian.PutUint32(m[8+4*i:], k)
			}
		}
		if d.Negative {
			f |= LLCFlagRKeyNeg
		}
	}
	m[3] = f
	return nil
}

func putTriplet(b []byte, t LLCRKeyTriplet) {
	binary.BigEndian.PutUint32(b[0:4], t.RKey)
	binary.BigEndian.PutUint32(b[4:8], t.RKeyNew)
	binary.BigEndian.PutUint64(b[8:16], t.VANew)
}

func putRToken(b []byte, t LLCRToken) {
	b[0] = t.LinkID
	binary.BigEndian.PutUint32(b[1:5], t.RKey)
	binary.BigEndian.PutUint64(b[5:13], t.VA)
}
