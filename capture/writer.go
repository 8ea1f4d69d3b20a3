package capture

import (
	"bufio"
	"io"
	"os"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Writer saves frames as pcapng (-w).
type Writer struct {
	bw *bufio.Writer
	ng *pcapgo.NgWriter
	f  *os.File
}

// NewWriter writes a pcapng stream of link type lt to w.
func NewWriter(w io.Writer, lt layers.LinkType) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	ng, err := pcapgo.NewNgWriter(bw, lt)
	if err != nil {
		return nil, err
	}
	return &Writer{bw: bw, ng: ng}, nil
}

// CreateFile creates (or truncates) a pcapng file; "-" is stdout.
func CreateFile(name string, lt layers.LinkType) (*Writer, error) {
	if name == "-" {
		return NewWriter(os.Stdout, lt)
	}
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, lt)
	if err != nil {
		f.Close()
		return nil, err
	}
	w.f = f
	return w, nil
}

// WriteFrame appends the frame as captured.
func (w *Writer) WriteFrame(f *Frame) error {
	ci := f.CI
	// The writer declares a single pcapng interface; a live source reports
	// the kernel ifindex here, which pcapng would read as an interface number
	// that does not exist and reject every frame.
	ci.InterfaceIndex = 0
	return w.ng.WritePacket(ci, f.Data)
}

// Close flushes and closes the file.
func (w *Writer) Close() error {
	err := w.ng.Flush()
	if err2 := w.bw.Flush(); err == nil {
		err = err2
	}
	if w.f != nil {
		if err2 := w.f.Close(); err == nil {
			err = err2
		}
	}
	return err
}
