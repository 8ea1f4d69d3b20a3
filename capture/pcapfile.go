package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pcapFile reads the records of a classic pcap stream (the libpcap file
// format: a 24-byte file header, then a 16-byte header before each
// frame) straight out of the Reader's buffer. pcapgo.Reader, which it
// replaces for files, buffers the stream a second time and copies every
// record into a slice of its own: that was a third of reading a frame.
// Errors are pcapgo's (header errors not capitalised), so that messages
// and the Reader's classification of damaged files (fileError) stay as
// they were.
type pcapFile struct {
	br         *bufio.Reader
	bo         binary.ByteOrder
	nanoFactor uint32
	snaplen    uint32
	linkType   layers.LinkType
	big        []byte // a record longer than the buffer, read whole
}

// Limits as pcapgo's: a capture length up to maxEager is read into a
// buffer allocated up front; beyond it the buffer grows with the bytes
// actually read, so a damaged length cannot make us allocate 4 GiB.
const (
	pcapVersionMajor = 2
	pcapVersionMinor = 4
	pcapMaxEager     = 262144
)

// newPcapFile reads the file header from br.
func newPcapFile(br *bufio.Reader) (*pcapFile, error) {
	var hdr [pcapHeaderLen]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, err
	}
	p := &pcapFile{br: br}
	switch magic := binary.LittleEndian.Uint32(hdr[0:4]); magic {
	case magicPcapNano:
		p.bo, p.nanoFactor = binary.LittleEndian, 1
	case magicPcapNanoBE:
		p.bo, p.nanoFactor = binary.BigEndian, 1
	case magicPcapMicro:
		p.bo, p.nanoFactor = binary.LittleEndian, 1000
	case magicPcapMicroBE:
		p.bo, p.nanoFactor = binary.BigEndian, 1000
	default:
		return nil, fmt.Errorf("unknown magic %x", magic)
	}
	if v := p.bo.Uint16(hdr[4:6]); v != pcapVersionMajor {
		return nil, fmt.Errorf("unknown major version %d", v)
	}
	if v := p.bo.Uint16(hdr[6:8]); v != pcapVersionMinor {
		return nil, fmt.Errorf("unknown minor version %d", v)
	}
	p.snaplen = p.bo.Uint32(hdr[16:20])
	p.linkType = layers.LinkType(p.bo.Uint32(hdr[20:24]))
	return p, nil
}

// ZeroCopyReadPacketData returns the next record's frame, valid until the
// next call. A file that ends cleanly between records gives io.EOF with a
// zero CaptureInfo; one cut inside a record header io.ErrUnexpectedEOF;
// one cut after a record header io.EOF or io.ErrUnexpectedEOF with the
// header's CaptureInfo (as io.ReadFull would).
func (p *pcapFile) ZeroCopyReadPacketData() (data []byte, ci gopacket.CaptureInfo, err error) {
	h, err := p.br.Peek(pcapRecordLen)
	if len(h) < pcapRecordLen {
		return nil, ci, shortRead(len(h), err)
	}
	// The fraction is multiplied in 32 bits, as pcapgo does, so that a
	// damaged microsecond field gives the same time.
	ci.Timestamp = time.Unix(int64(p.bo.Uint32(h[0:4])), int64(p.bo.Uint32(h[4:8])*p.nanoFactor)).UTC()
	ci.CaptureLength = int(p.bo.Uint32(h[8:12]))
	ci.Length = int(p.bo.Uint32(h[12:16]))
	if ci.CaptureLength > max(int(p.snaplen), pcapMaxEager) {
		return nil, ci, fmt.Errorf("capture length exceeds snap length: %d > %d", ci.CaptureLength, p.snaplen)
	}
	if ci.CaptureLength > ci.Length {
		return nil, ci, fmt.Errorf("capture length exceeds original packet length: %d > %d", ci.CaptureLength, ci.Length)
	}
	n := pcapRecordLen + ci.CaptureLength
	if n <= p.br.Size() {
		rec, err := p.br.Peek(n)
		if len(rec) < n {
			return nil, ci, shortRead(len(rec)-pcapRecordLen, err)
		}
		p.br.Discard(n) // only advances: rec stays valid until the next read
		return rec[pcapRecordLen:], ci, nil
	}
	p.br.Discard(pcapRecordLen)
	if ci.CaptureLength <= pcapMaxEager {
		if cap(p.big) < ci.CaptureLength {
			p.big = make([]byte, ci.CaptureLength)
		}
		data = p.big[:ci.CaptureLength]
		_, err = io.ReadFull(p.br, data)
		return data, ci, err
	}
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, p.br, int64(ci.CaptureLength))
	if got < int64(ci.CaptureLength) {
		return nil, ci, shortRead(int(got), err)
	}
	return buf.Bytes(), ci, nil
}

// shortRead is io.ReadFull's error for a read that got n bytes of more
// wanted, err being the reader's.
func shortRead(n int, err error) error {
	switch {
	case err != nil && !errors.Is(err, io.EOF):
		return err
	case n == 0:
		return io.EOF
	}
	return io.ErrUnexpectedEOF
}

// LinkType is the file header's link type.
func (p *pcapFile) LinkType() layers.LinkType { return p.linkType }
