package capture

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/gopacket/gopacket"
)

// Layout is what reading one record back needs besides its offset: for a
// classic pcap the file header's byte order, time unit and snap length;
// for pcapng the section's byte order and interface descriptions (link
// type, time resolution and offset of each). A Reader's layout changes
// only at a new pcapng section or interface block, so an index of a
// whole file keeps one Layout per change, not per frame.
type Layout struct {
	pf *pcapFile // header fields only; no reader
	ng *ngFile   // big, ifaces and settled only
}

// Layout returns the layout of the frame Next last returned, nil for a
// source whose records cannot be read back (live, replayed from memory).
// The same pointer is returned until the layout changes.
func (r *Reader) Layout() *Layout {
	switch {
	case r.pf != nil:
		if r.layout == nil {
			pf := &pcapFile{bigEndian: r.pf.bigEndian, nanoFactor: r.pf.nanoFactor,
				snaplen: r.pf.snaplen, linkType: r.pf.linkType, digits: r.pf.digits}
			r.layout = &Layout{pf: pf}
		}
	case r.ng != nil:
		if r.layout == nil || r.lgen != r.ng.gen {
			// Clipped, so that nothing appended to a reader's copy can
			// reach another's.
			ng := &ngFile{big: r.ng.big, ifaces: slices.Clip(slices.Clone(r.ng.ifaces)), settled: r.ng.settled}
			r.layout, r.lgen = &Layout{ng: ng}, r.ng.gen
		}
	default:
		return nil
	}
	return r.layout
}

// Records reads single records back from a capture stream at the offsets
// a Reader gave (RecordOffset), in any order: the capture browser's rows,
// exports and searches. Offsets that grow by less than a megabyte are
// read on through one buffer; others seek.
type Records struct {
	name string
	src  io.ReadSeeker
	br   *bufio.Reader
	pos  int64 // stream offset of br's next byte; -1: not positioned
	end  int64 // where the record Read last read ends
	pf   pcapFile
	ng   ngFile
}

// NewRecords reads records from src (a capture file, or the decompressed
// copy of one); name is used in messages.
func NewRecords(name string, src io.ReadSeeker) *Records {
	return &Records{name: name, src: src, br: bufio.NewReaderSize(src, 1<<16), pos: -1}
}

// Read returns the frame of the record at off, of layout l, filling ci;
// the data is valid until the next call. Errors name the file and offset.
func (rs *Records) Read(off int64, l *Layout, ci *gopacket.CaptureInfo) ([]byte, error) {
	if l == nil || (l.pf == nil && l.ng == nil) {
		return nil, fmt.Errorf("%s: offset %#x: no layout to read the record with", rs.name, off)
	}
	if err := rs.seek(off); err != nil {
		return nil, err
	}
	rs.pos = -1 // until the record is read whole
	var (
		data []byte
		err  error
	)
	*ci = gopacket.CaptureInfo{}
	if l.pf != nil {
		big := rs.pf.big
		rs.pf = *l.pf
		rs.pf.br, rs.pf.big = rs.br, big
		data, err = rs.pf.read(ci)
		rs.pf.br = nil
		if err == nil {
			rs.pos = off + pcapRecordLen + int64(ci.CaptureLength)
		}
	} else {
		block := rs.ng.block
		rs.ng = ngFile{br: rs.br, pos: off, big: l.ng.big, ifaces: l.ng.ifaces, block: block}
		// Only a packet block is read: readPacket would read on past
		// any other, and a section header would reset the layout's
		// interfaces.
		if h, _ := rs.br.Peek(4); len(h) == 4 {
			switch typ := rs.ng.u32(h); typ {
			case ngBlockEPB, ngBlockPB, ngBlockSPB:
			default:
				return nil, fmt.Errorf("%s: offset %#x: %s, not a packet block", rs.name, off, ngBlockName(typ))
			}
		}
		data, err = rs.ng.readPacket(ci)
		rs.ng.br = nil
		if err == nil {
			rs.pos = rs.ng.pos
		}
	}
	rs.end = rs.pos
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // an offset an index holds has a record
		}
		return nil, fmt.Errorf("%s: record at offset %#x: %w", rs.name, off, err)
	}
	return data, nil
}

// End is the offset just past the record Read last returned: the next
// record's, in a file whose records follow each other.
func (rs *Records) End() int64 { return rs.end }

// Skip returns the offset of the record n records after the one at off,
// of layout l, reading only the record headers: an index may keep the
// offset of one record in a run of records that follow each other, not
// of each. The records skipped must be packet records (not a pcapng
// file's other blocks).
func (rs *Records) Skip(off int64, l *Layout, n int) (int64, error) {
	if l == nil || (l.pf == nil && l.ng == nil) {
		return 0, fmt.Errorf("%s: offset %#x: no layout to read the record with", rs.name, off)
	}
	for ; n > 0; n-- {
		if err := rs.seek(off); err != nil {
			return 0, err
		}
		rs.pos = off // the header is peeked, not read
		var size int64
		if l.pf != nil {
			h, err := rs.br.Peek(pcapRecordLen)
			if len(h) < pcapRecordLen {
				return 0, rs.headerError(off, err)
			}
			// The header's checks as read makes them.
			p := pcapFile{bigEndian: l.pf.bigEndian, nanoFactor: l.pf.nanoFactor, snaplen: l.pf.snaplen}
			var ci gopacket.CaptureInfo
			if err := p.recordHeader(h, &ci); err != nil {
				return 0, fmt.Errorf("%s: record at offset %#x: %w", rs.name, off, err)
			}
			size = pcapRecordLen + int64(ci.CaptureLength)
		} else {
			h, err := rs.br.Peek(8)
			if len(h) < 8 {
				return 0, rs.headerError(off, err)
			}
			ng := ngFile{big: l.ng.big}
			switch typ := ng.u32(h); typ {
			case ngBlockEPB, ngBlockPB, ngBlockSPB:
			default:
				return 0, fmt.Errorf("%s: offset %#x: %s, not a packet block", rs.name, off, ngBlockName(typ))
			}
			size = int64(ng.u32(h[4:8]))
			if size < 12 || size%4 != 0 {
				return 0, fmt.Errorf("%s: block at offset %#x: bad block length %d", rs.name, off, size)
			}
		}
		off += size
	}
	return off, nil
}

// seek positions br at off: read on through it when off is a little
// ahead, else by seeking src.
func (rs *Records) seek(off int64) error {
	if gap := off - rs.pos; rs.pos < 0 || gap < 0 || gap > 1<<20 {
		if _, err := rs.src.Seek(off, io.SeekStart); err != nil {
			return fmt.Errorf("%s: offset %#x: %w", rs.name, off, err)
		}
		rs.br.Reset(rs.src)
	} else if _, err := rs.br.Discard(int(gap)); err != nil {
		rs.pos = -1
		return fmt.Errorf("%s: offset %#x: %w", rs.name, off, err)
	}
	rs.pos = off
	return nil
}

// headerError is the error of a record header cut short at off.
func (rs *Records) headerError(off int64, err error) error {
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF // an offset an index holds has a record
	}
	return fmt.Errorf("%s: record at offset %#x: %w", rs.name, off, err)
}
