package capture

import (
	"errors"
	"fmt"
	"strconv"
)

// Sentinels for the ways a capture file can be unusable; FileError wraps
// them so callers can branch with errors.Is while users read one line.
var (
	ErrNotCapture      = errors.New("not a capture file")
	ErrEmpty           = errors.New("empty file")
	ErrTruncatedFile   = errors.New("truncated")
	ErrCorruptRecord   = errors.New("corrupt record")
	ErrUnsupportedLink = errors.New("unsupported link type")
	ErrNoPermission    = errors.New("needs CAP_NET_RAW")
	// ErrChanged: a file shrank while it was read (read(2)'s end before
	// the part already read, Reader.shrank).
	ErrChanged = errors.New("the file shrank while it was read (truncated by another program?)")
)

// FileError is a failure of the capture file itself (as opposed to one
// frame's content), with where it happened so the user can check the file.
type FileError struct {
	Name   string // file name, "-" for stdin
	Frame  int    // 1-based frame that could not be read; 0 for the header
	Offset int64  // file offset where reading stopped; -1 when unknown
	Err    error  // one of the sentinels above, or the reader's error
	Detail string
}

// Error reads "FILE: frame N (file offset 0x..): what", the frame and
// offset when known, the offset being where the frame's record starts
// (in the decompressed stream for a gzip file); a pcapng block that
// carries no frame (an interface description, say) is named in what, at
// its own offset, the frame being the one that could not be read. Damage
// to the file header has no frame: "FILE: file offset 0x0: what".
func (e *FileError) Error() string {
	name := e.Name
	if name == "-" {
		name = "stdin"
	}
	s := name + ": "
	at := ""
	if e.Offset >= 0 {
		at = "file offset 0x" + strconv.FormatInt(e.Offset, 16)
	}
	var gc *GzipCutError
	if errors.As(e.Err, &gc) && !gc.Inside {
		return s + gc.Error() // no frame of its own: the frames before are whole
	}
	switch {
	case e.Frame > 0 && at != "":
		s += "frame " + strconv.Itoa(e.Frame) + " (" + at + "): "
	case e.Frame > 0:
		s += "frame " + strconv.Itoa(e.Frame) + ": "
	case at != "":
		s += at + ": "
	}
	switch {
	case gc != nil:
		return s + gc.Error()
	case errors.Is(e.Err, ErrTruncatedFile) && e.Frame > 0 && e.Detail != "":
		return s + "truncated record: the file ends inside it (" + e.Detail + ")"
	case errors.Is(e.Err, ErrTruncatedFile) && e.Frame > 0:
		return s + "truncated record: the file ends inside it"
	case errors.Is(e.Err, ErrTruncatedFile) && e.Detail != "":
		return s + "truncated file header (" + e.Detail + ")"
	case errors.Is(e.Err, ErrTruncatedFile):
		return s + "truncated file header"
	case errors.Is(e.Err, ErrEmpty) && e.Detail != "":
		return s + "no data: " + e.Detail
	case errors.Is(e.Err, ErrCorruptRecord) && e.Detail != "":
		return s + e.Err.Error() + ": " + e.Detail
	case e.Detail != "":
		return s + e.Err.Error() + " " + e.Detail
	}
	return s + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// RecordError is damage confined to one record that leaves its frame
// readable: the frame is decoded from the bytes captured and reading goes
// on (Frame.RecordErr). It wraps ErrCorruptRecord.
type RecordError struct {
	Frame  int   // 1-based frame number
	Offset int64 // file offset where the record starts; -1 when unknown
	// Len and CapLen are the record header's original and captured
	// lengths (pcap: orig_len and incl_len of struct pcap_sf_pkthdr; pcapng:
	// an enhanced packet block's original and captured packet lengths).
	Len, CapLen int
}

// Error reads "frame N (file offset 0x..): record: original length L is
// below the captured length C (decoded as captured)".
func (e *RecordError) Error() string {
	s := "frame " + strconv.Itoa(e.Frame)
	if e.Offset >= 0 {
		s += " (file offset 0x" + strconv.FormatInt(e.Offset, 16) + ")"
	}
	return s + ": record: original length " + strconv.Itoa(e.Len) + " is below the captured length " +
		strconv.Itoa(e.CapLen) + " (decoded as captured)"
}

func (e *RecordError) Unwrap() error { return ErrCorruptRecord }

// SkipError is damage a Reader read past (Reader.Damage), the
// RecordErr of the frame after it: the record header (pcapng: the block)
// at Offset was none (Detail says why), and the next one that could be
// found starts Skipped bytes on; frame Frame's record is at At, there or
// after blocks that carry no frame. Frames in the bytes skipped are not in
// the capture as read. It wraps ErrCorruptRecord.
//
// Kept is damage to pcapng blocks that carry no frame and were read and
// used all the same (an interface description block with an option that
// cannot be read, its default taken instead): the Skipped bytes are those
// blocks, no frame is missing. FileHeader is such damage to a classic
// pcap file's header (a version no writer makes).
type SkipError struct {
	Frame      int
	Offset     int64 // file offset of the damage (in a gzip file's decompressed stream)
	Skipped    int64
	At         int64
	Detail     string
	Kept       bool
	FileHeader bool
}

// Error reads "frame N (file offset 0x..): record: 132 bytes skipped
// before it: the record at file offset 0x.. is damaged (capture length
// exceeds snap length: 2147483647 > 65536)".
func (e *SkipError) Error() string {
	if e.Kept {
		what := "the block before it"
		if e.FileHeader {
			what = "the file header"
		}
		return "frame " + strconv.Itoa(e.Frame) + " (file offset 0x" + strconv.FormatInt(e.At, 16) +
			"): record: " + what + " at file offset 0x" + strconv.FormatInt(e.Offset, 16) +
			" is damaged (" + e.Detail + "), read all the same: no frame missing"
	}
	return "frame " + strconv.Itoa(e.Frame) + " (file offset 0x" + strconv.FormatInt(e.At, 16) +
		"): record: " + strconv.FormatInt(e.Skipped, 10) + " bytes skipped before it: the record at file offset 0x" +
		strconv.FormatInt(e.Offset, 16) + " is damaged (" + e.Detail + ")"
}

func (e *SkipError) Unwrap() error { return ErrCorruptRecord }

// LiveError is a failure to open a live capture.
type LiveError struct {
	Iface string
	Err   error
}

func (e *LiveError) Error() string {
	if errors.Is(e.Err, ErrNoPermission) {
		return fmt.Sprintf("capturing on %s needs CAP_NET_RAW (run as root, or setcap cap_net_raw,cap_net_admin+ep on the binary)", e.Iface)
	}
	return fmt.Sprintf("capturing on %s: %v", e.Iface, e.Err)
}

func (e *LiveError) Unwrap() error { return e.Err }
