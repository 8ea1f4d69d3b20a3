package capture

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// GzipCutError is the end of a gzip-compressed capture whose compressed
// stream stops before its trailer (a copy cut short, a writer killed
// before it closed the file): the frames decompressed up to there are
// read, and this says where the stream stops. It wraps ErrTruncatedFile.
type GzipCutError struct {
	// Compressed is how many bytes of the compressed file were read: the
	// offset at which it ends.
	Compressed int64
	// Frames is how many whole frames came before the cut; Inside says
	// that it fell inside the record of the next one, Header that it fell
	// inside the capture's own header (no frame).
	Frames int
	Inside bool
	Header bool
	// decompressed is how many bytes the stream gave before the cut.
	decompressed int64
}

func (e *GzipCutError) Error() string {
	at := fmt.Sprintf("at compressed offset %#x", e.Compressed)
	switch {
	case e.Header:
		return "gzip stream ended early (no trailer) inside the capture's header, " + at
	case e.Inside:
		return "gzip stream ended early (no trailer) inside its record, " + at
	case e.Frames == 0:
		return "gzip stream ended early (no trailer) before the first frame, " + at
	}
	return fmt.Sprintf("gzip stream ended early (no trailer) after frame %d, %s", e.Frames, at)
}

func (e *GzipCutError) Unwrap() error { return ErrTruncatedFile }

// NewGzipReader decompresses a gzip-compressed capture read from in. A
// stream that stops before its trailer ends in a *GzipCutError giving the
// compressed offset (Frames and Inside are the frame reader's to fill),
// where gzip's own reader says only io.ErrUnexpectedEOF.
func NewGzipReader(in io.Reader) (io.Reader, error) {
	c := &countingReader{r: in}
	gz, err := gzip.NewReader(c)
	if err != nil {
		return nil, err
	}
	return &gzipStream{gz: gz, in: c}, nil
}

type gzipStream struct {
	gz  *gzip.Reader
	in  *countingReader
	out int64 // bytes decompressed
}

func (g *gzipStream) Read(p []byte) (int, error) {
	n, err := g.gz.Read(p)
	g.out += int64(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = &GzipCutError{Compressed: g.in.n, decompressed: g.out}
	}
	return n, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
