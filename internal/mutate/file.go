package mutate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// ReadFile reads every frame of a pcap or pcapng file.
func ReadFile(path string) ([]Frame, layers.LinkType, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	type source interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var src source
	var lt layers.LinkType
	if r, err := pcapgo.NewReader(f); err == nil {
		src, lt = r, r.LinkType()
	} else {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, 0, err
		}
		r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: neither pcap nor pcapng: %w", path, err)
		}
		src, lt = r, r.LinkType()
	}
	var out []Frame
	for {
		data, ci, err := src.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out, lt, nil
		}
		if err != nil {
			return out, lt, fmt.Errorf("%s: frame %d: %w", path, len(out)+1, err)
		}
		out = append(out, Frame{CI: ci, Data: data})
	}
}

// WriteFile writes frames as a pcap file of link type lt.
func WriteFile(path string, lt layers.LinkType, frames []Frame) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, lt, frames); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}

// Encode returns frames as the bytes of a pcap file of link type lt.
func Encode(lt layers.LinkType, frames []Frame) ([]byte, error) {
	var b bytes.Buffer
	err := Write(&b, lt, frames)
	return b.Bytes(), err
}

// Write writes frames to w as a pcap file of link type lt, with
// nanosecond times.
func Write(w io.Writer, lt layers.LinkType, frames []Frame) error {
	bw := bufio.NewWriter(w)
	pw := pcapgo.NewWriterNanos(bw)
	if err := pw.WriteFileHeader(262144, lt); err != nil {
		return err
	}
	for i, fr := range frames {
		ci := fr.CI
		ci.CaptureLength = len(fr.Data)
		ci.Length = max(ci.Length, ci.CaptureLength)
		if err := pw.WritePacket(ci, fr.Data); err != nil {
			return fmt.Errorf("frame %d: %w", i+1, err)
		}
	}
	return bw.Flush()
}

// Source hands frames to a capture reader (capture.NewReader), without a
// file in between.
type Source struct {
	frames []Frame
	i      int
}

// NewSource reads frames in order.
func NewSource(frames []Frame) *Source { return &Source{frames: frames} }

// ZeroCopyReadPacketData returns the next frame, io.EOF after the last.
func (s *Source) ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error) {
	if s.i == len(s.frames) {
		return nil, gopacket.CaptureInfo{}, io.EOF
	}
	f := s.frames[s.i]
	s.i++
	return f.Data, f.CI, nil
}
