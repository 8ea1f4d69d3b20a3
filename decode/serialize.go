package decode

import (
	"encoding/binary"
	"errors"
	"net/netip"

	"github.com/gopacket/gopacket"
)

// Serialization: every fixed-layout layer of this package writes itself
// back, so tests and fuzzers build edge and malformed frames from fields
// (decode(serialize(x)) == x) as gopacket's own layers do. Reserved bytes
// are written as zero. The ICRC depends on the outer IP/UDP (or GRH)
// headers, which gopacket serializes after the BTH: BTH writes the ICRC
// field as it is; compute it over the finished frame with ICRCRoCEv2 or
// ICRCRoCEv1 and patch the last four bytes.

func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// putGID writes a 16-byte GID (zero for the zero or invalid address).
func putGID(b []byte, a netip.Addr) {
	if a.IsValid() {
		x := a.As16()
		copy(b[:16], x[:])
	}
}

// SerializeTo writes the BTH (with RDETH/XRCETH where the transport has
// one) before the payload and the pad bytes and ICRC after it. With
// FixLengths, PadCount becomes what aligns the payload to 4 bytes.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	payLen := len(buf.Bytes())
	if opts.FixLengths {
		b.PadCount = uint8((4 - payLen%4) % 4)
	}
	tail, err := buf.AppendBytes(int(b.PadCount) + icrcLen)
	if err != nil {
		return err
	}
	clear(tail[:b.PadCount])
	binary.LittleEndian.PutUint32(tail[b.PadCount:], b.ICRC)
	hdr := bthLen
	switch b.Opcode.Transport() {
	case TransportRD:
		hdr += bthRDETHLen
	case TransportXRC:
		if op := b.Opcode.Op(); op < OpReadResponseFirst || op > OpAtomicAcknowledge {
			hdr += bthXRCETHLen
		}
	}
	h, err := buf.PrependBytes(hdr)
	if err != nil {
		return err
	}
	clear(h)
	h[0] = byte(b.Opcode)
	h[1] = b.PadCount&0x03<<4 | b.TVer&0x0F
	if b.SE {
		h[1] |= 0x80
	}
	if b.M {
		h[1] |= 0x40
	}
	binary.BigEndian.PutUint16(h[2:4], b.PKey)
	put24(h[5:], b.DestQP)
	if b.FECN {
		h[4] |= 0x80
	}
	if b.BECN {
		h[4] |= 0x40
	}
	put24(h[9:], b.PSN)
	if b.AckReq {
		h[8] |= 0x80
	}
	switch {
	case hdr > bthLen && b.Opcode.Transport() == TransportRD:
		put24(h[13:], b.EEContext)
	case hdr > bthLen:
		put24(h[13:], b.XRCSRQ)
	}
	return nil
}

// SerializeTo writes the RETH.
func (h *RETH) SerializeTo(buf gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := buf.PrependBytes(rethLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint64(b[0:8], h.VA)
	binary.BigEndian.PutUint32(b[8:12], h.RKey)
	binary.BigEndian.PutUint32(b[12:16], h.DMALen)
	return nil
}

// SerializeTo writes the AETH.
func (h *AETH) SerializeTo(buf gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := buf.PrependBytes(aethLen)
	if err != nil {
		return err
	}
	b[0] = byte(h.Syndrome)
	put24(b[1:], h.MSN)
	return nil
}

// SerializeTo writes the ImmDt.
func (h *ImmDt) SerializeTo(buf gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := buf.PrependBytes(4)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b, h.Imm)
	return nil
}

// SerializeTo writes the IETH.
func (h *IETH) SerializeTo(buf gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := buf.PrependBytes(4)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b, h.RKey)
	return nil
}

// SerializeTo writes the DETH.
func (h *DETH) SerializeTo(buf gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	b, err := buf.PrependBytes(dethLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(b[:4], h.QKey)
	b[4] = 0
	put24(b[5:], h.SrcQP)
	return nil
}

// SerializeTo writes the GRH. With FixLengths PayloadLen becomes the
// bytes after it (BTH, payload, pad and ICRC).
func (g *GRH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		g.PayloadLen = uint16(len(buf.Bytes()))
	}
	b, err := buf.PrependBytes(40)
	if err != nil {
		return err
	}
	v := uint32(g.Version)<<28 | uint32(g.TrafficClass)<<20 | g.FlowLabel&0xFFFFF
	binary.BigEndian.PutUint32(b[0:4], v)
	binary.BigEndian.PutUint16(b[4:6], g.PayloadLen)
	b[6], b[7] = g.NextHeader, g.HopLimit
	if !g.SGID.Is6() || !g.DGID.Is6() {
		return errors.New("GRH: SGID and DGID must be 16-byte GIDs")
	}
	s, d := g.SGID.As16(), g.DGID.As16()
	copy(b[8:24], s[:])
	copy(b[24:40], d[:])
	return nil
}

// SerializeTo writes the 44-byte CDC message (struct smc_cdc_msg). With
// FixLengths Type and Length become 0xFE and 44.
func (c *CDC) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		c.Type, c.Length = cdcType, smcMsgLen
	}
	b, err := buf.PrependBytes(smcMsgLen)
	if err != nil {
		return err
	}
	clear(b)
	b[0], b[1] = c.Type, c.Length
	binary.BigEndian.PutUint16(b[2:4], c.Seq)
	binary.BigEndian.PutUint32(b[4:8], c.Token)
	binary.BigEndian.PutUint16(b[10:12], c.Prod.Wrap)
	binary.BigEndian.PutUint32(b[12:16], c.Prod.Count)
	binary.BigEndian.PutUint16(b[18:20], c.Cons.Wrap)
	binary.BigEndian.PutUint32(b[20:24], c.Cons.Count)
	b[24], b[25] = byte(c.ProdFlags), byte(c.ConnFlags)
	b[cdcCreditsOff] = c.Credits // reserved (0) upstream: ANCK's credits
	return nil
}
