package browser

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/smcscope/smcscope/capture"
)

// spool is the decompressed copy of a gzip capture, in a file that is
// unlinked as soon as it is created (nothing is left behind however the
// browser ends). The index pass writes what it inflates here, ahead of the
// records it indexes, so every indexed record can be read back at its
// offset in the decompressed stream. The copy stops, and the pass keeps
// the frames that follow in memory, when the disk would have less than
// reserve bytes free or a write fails.
type spool struct {
	f       *os.File
	inflate io.Closer // the goroutine that fills it (pipe)
	dir     string
	reserve int64
	written atomic.Int64
	checked int64        // written at the last free-space check
	every   int64        // written between free-space checks
	stop    atomic.Value // string: why the copy stopped, once it has
	free    func() (int64, error)
}

// spoolCheckEvery is how much is written between free-space checks.
const spoolCheckEvery = 64 << 20

// openSpooled starts reading the gzip capture f through a spool. When no
// spool can be made, the file is read without one (its frames then kept
// in memory) and why says so. live is for a stream that arrives over time
// (a pipe, a file followed as it grows): what has arrived is handed on at
// once, and idle is called before the index pass waits for more.
func openSpooled(name string, f io.Reader, newSpool func() (*spool, error), live bool, idle func()) (r *capture.Reader, s *spool, why string, err error) {
	s, serr := newSpool()
	if serr != nil {
		r, err = capture.NewFileReader(name, f)
		return r, nil, "cannot unpack: " + serr.Error(), err
	}
	gz, err := capture.NewGzipReader(f)
	if err != nil {
		s.f.Close()
		return nil, nil, "", &capture.FileError{Name: name, Err: capture.ErrNotCapture, Offset: -1, Detail: "(bad gzip: " + err.Error() + ")"}
	}
	return spoolReader(name, s, gz, live, idle)
}

// spoolReader reads the capture stream in through spool s: every record
// the index pass reads is in the copy first, so it can be read back at its
// offset.
func spoolReader(name string, s *spool, in io.Reader, live bool, idle func()) (*capture.Reader, *spool, string, error) {
	p := s.pipe(in, live)
	p.idle = idle
	s.inflate = p
	r, err := capture.NewFileReader(name, p)
	if err != nil {
		p.Close()
		s.f.Close()
		return nil, nil, "", err
	}
	return r, s, "", nil
}

// spoolChunk is what the inflating goroutine writes and hands on at once.
const spoolChunk = 256 << 10

// pipe inflates gz in a goroutine of its own, writing each chunk to the
// spool before the returned reader yields it (so every record the index
// pass reads is in the copy), up to 8 chunks ahead: inflating and the
// writes, which the kernel may hold back while it writes dirty pages out,
// overlap the decoding instead of adding to it. Close stops it. A live
// stream's chunks are what one read gave: a frame that arrived is not
// held back until more fill the chunk.
func (s *spool) pipe(gz io.Reader, live bool) *spoolPipe {
	p := &spoolPipe{chunks: make(chan spoolRead, 8), free: make(chan []byte, 10), done: make(chan struct{})}
	go func() {
		defer close(p.chunks)
		for {
			var buf []byte
			select {
			case buf = <-p.free:
			default:
				buf = make([]byte, spoolChunk)
			}
			var n int
			var err error
			if live {
				n, err = gz.Read(buf[:spoolChunk])
			} else {
				n, err = io.ReadFull(gz, buf[:spoolChunk])
			}
			if err == io.ErrUnexpectedEOF {
				err = io.EOF // a short last chunk; a cut stream is a *capture.GzipCutError
			}
			s.Write(buf[:n])
			select {
			case p.chunks <- spoolRead{buf[:n], err}:
			case <-p.done:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return p
}

type spoolRead struct {
	b   []byte
	err error
}

// spoolPipe is the index pass's end of spool.pipe.
type spoolPipe struct {
	chunks chan spoolRead
	free   chan []byte
	done   chan struct{}
	cur    spoolRead
	rest   []byte
	// idle, when set, is called before Read waits for a chunk: the index
	// pass has taken every whole record that arrived.
	idle func()
}

func (p *spoolPipe) Read(b []byte) (int, error) {
	for len(p.rest) == 0 {
		if p.cur.err != nil {
			return 0, p.cur.err
		}
		if p.cur.b != nil {
			select {
			case p.free <- p.cur.b[:cap(p.cur.b)]:
			default:
			}
		}
		c, ok := p.next()
		if !ok {
			return 0, io.ErrClosedPipe
		}
		p.cur, p.rest = c, c.b
	}
	n := copy(b, p.rest)
	p.rest = p.rest[n:]
	return n, nil
}

// next is the next chunk; while it waits it calls idle, at once and then
// every idleSnapshot (the tracker's panes catch up with frames that came
// in a burst).
func (p *spoolPipe) next() (spoolRead, bool) {
	select {
	case c, ok := <-p.chunks:
		return c, ok
	default:
	}
	if p.idle == nil {
		c, ok := <-p.chunks
		return c, ok
	}
	t := time.NewTicker(idleSnapshot)
	defer t.Stop()
	for {
		p.idle()
		select {
		case c, ok := <-p.chunks:
			return c, ok
		case <-t.C:
		}
	}
}

// Close stops the inflating goroutine and lets its buffers go.
func (p *spoolPipe) Close() error {
	select {
	case <-p.done:
	default:
		close(p.done)
	}
	for {
		select {
		case <-p.free:
		default:
			p.cur, p.rest = spoolRead{}, nil
			return nil
		}
	}
}

// spoolDir is where the copy goes: $TMPDIR, else /tmp, or /var/tmp when
// /tmp is a tmpfs (a copy there would take the memory it is meant to
// save).
func spoolDir() string {
	if d := os.Getenv("TMPDIR"); d != "" {
		return d
	}
	const tmpfsMagic = 0x01021994
	var st syscall.Statfs_t
	if syscall.Statfs("/tmp", &st) == nil && st.Type == tmpfsMagic {
		if syscall.Statfs("/var/tmp", &st) == nil && st.Type != tmpfsMagic {
			return "/var/tmp"
		}
	}
	return os.TempDir()
}

func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, "smcdump-*.decompressed")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // the open file lives on; nothing to clean up later
	s := &spool{f: f, dir: dir, every: spoolCheckEvery, free: func() (int64, error) { return freeBytes(dir) }}
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil {
		// 10 % of the file system, at most 1 GiB: the copy must not be
		// what fills the disk.
		s.reserve = min(int64(st.Blocks)*st.Bsize/10, 1<<30)
	}
	return s, nil
}

func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Write copies p to the spool; it never fails, so the index pass goes on
// when the copy stops (stopped then says why).
func (s *spool) Write(p []byte) (int, error) {
	if s.stopped() != "" {
		return len(p), nil
	}
	w := s.written.Load()
	if w == 0 || w-s.checked >= s.every {
		s.checked = w
		if free, err := s.free(); err == nil && free-int64(len(p)) < s.reserve+s.every {
			s.stop.Store(fmt.Sprintf("%s has %d MiB free", s.dir, free>>20))
			return len(p), nil
		}
	}
	n, err := s.f.Write(p)
	s.written.Add(int64(n))
	if err != nil {
		s.stop.Store(err.Error())
	}
	return len(p), nil
}

// stopped is why the copy stopped, "" while it goes on.
func (s *spool) stopped() string {
	why, _ := s.stop.Load().(string)
	return why
}

// holds reports whether the copy holds the stream up to end: everything
// the index pass has read while the copy goes on, less after it stopped.
func (s *spool) holds(end int64) bool {
	return s.stopped() == "" || end <= s.written.Load()
}

// reader reads the copy from its start; every record indexed so far is
// in it.
func (s *spool) reader() io.ReadSeeker { return io.NewSectionReader(s.f, 0, 1<<62) }

// size is how much has been copied.
func (s *spool) size() int64 { return s.written.Load() }
