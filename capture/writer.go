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
	lt layers.LinkType // of interface 0
	// ifs numbers the interfaces added for frames of other link types
	// (a pcapng read with mixed link types).
	ifs map[layers.LinkType]int
}

// NewWriter writes a pcapng stream of link type lt to w.
func NewWriter(w io.Writer, lt layers.LinkType) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	ng, err := pcapgo.NewNgWriter(bw, lt)
	if err != nil {
		return nil, err
	}
	return &Writer{bw: bw, ng: ng, lt: lt}, nil
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

// WriteFrame appends the frame as captured. A frame whose record said an
// original length below its captured length (a damaged header, read as
// captured: Frame.RecordErr) is written with its captured length as the
// original one: no packet is shorter than what was captured of it, and
// no reader takes a record that says so.
func (w *Writer) WriteFrame(f *Frame) error {
	ci := f.CI
	ci.Length = max(ci.Length, ci.CaptureLength)
	// The frame goes to the writer's interface of its link type, not to the
	// source's: a live source reports the kernel ifindex here, which pcapng
	// would read as an interface number that does not exist.
	ci.InterfaceIndex = 0
	if f.LinkType != w.lt {
		id, ok := w.ifs[f.LinkType]
		if !ok {
			intf := pcapgo.DefaultNgInterface
			intf.LinkType = f.LinkType
			var err error
			if id, err = w.ng.AddInterface(intf); err != nil {
				return err
			}
			if w.ifs == nil {
				w.ifs = make(map[layers.LinkType]int)
			}
			w.ifs[f.LinkType] = id
		}
		ci.InterfaceIndex = id
	}
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
