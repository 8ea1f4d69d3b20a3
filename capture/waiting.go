package capture

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
)

// A pipe, FIFO, terminal or socket is read as long as its writer writes:
// read(2) on it waits for the writer (and open(2) of a FIFO for one to
// come), in the kernel, where neither a closed descriptor nor a signal the
// Go runtime catches ends the wait. Read through waitingInput, the wait
// ends with the context: the reading goroutine is left in read(2), and the
// caller goes on to print what it has.

// OpenContext is Open whose open and reads of a FIFO, pipe, terminal or
// socket end when ctx does, with context.Cause(ctx) as the error. A
// regular file is read as Open reads it.
func OpenContext(ctx context.Context, name string) (*Reader, error) {
	return open(ctx, name)
}

// Waits reports whether r's reads wait on a writer (a pipe, FIFO,
// terminal or socket read by OpenContext): frames then come as they are
// written, and a reader that gathers many before handing them on holds
// the first back until the writer has written the rest.
func (r *Reader) Waits() bool { return r.wait != nil }

// OnWait sets fn to be called, on the goroutine reading frames, each
// time the next read waits on the writer (Waits): a printer flushes its
// output there, so that the frames read so far are seen while the writer
// is quiet rather than when a buffer fills.
func (r *Reader) OnWait(fn func()) {
	if r.wait != nil {
		r.wait.idle = fn
	}
}

// openWaiting opens name, giving up when ctx ends while open(2) waits for
// a FIFO's writer; the file, once open, is then closed by the goroutine
// that opened it.
func openWaiting(ctx context.Context, name string) (*os.File, error) {
	if ctx.Done() == nil {
		return os.Open(name)
	}
	if st, err := os.Stat(name); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(name)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// waitingInput reads in from a goroutine of its own, one read(2) at a
// time into its buffer, so that Read can give up when ctx ends.
type waitingInput struct {
	ctx   context.Context
	buf   []byte // the goroutine's while a read is asked for
	rest  []byte // what the last read brought, not yet handed out
	err   error  // the last read's error, after rest
	ask   chan struct{}
	got   chan waitingRead
	asked bool
	idle  func() // OnWait's
}

type waitingRead struct {
	n   int
	err error
}

func newWaitingInput(ctx context.Context, in io.Reader) *waitingInput {
	w := &waitingInput{
		ctx: ctx,
		buf: make([]byte, 1<<16), // a pipe's capacity: one read empties it
		ask: make(chan struct{}, 1),
		got: make(chan waitingRead, 1), // the read done after ctx ended must not block
	}
	go func() {
		for {
			select {
			case <-w.ask:
			case <-ctx.Done():
				return
			}
			n, err := in.Read(w.buf)
			w.got <- waitingRead{n, err}
			if err != nil {
				return
			}
		}
	}()
	return w
}

func (w *waitingInput) Read(p []byte) (int, error) {
	if len(w.rest) == 0 && w.err == nil {
		if !w.asked {
			w.asked = true
			w.ask <- struct{}{}
		}
		var r waitingRead
		select {
		case r = <-w.got:
		default:
			if w.idle != nil {
				w.idle()
			}
			select {
			case r = <-w.got:
			case <-w.ctx.Done():
				return 0, context.Cause(w.ctx)
			}
		}
		w.asked = false
		w.rest, w.err = w.buf[:r.n], r.err
	}
	n := copy(p, w.rest)
	w.rest = w.rest[n:]
	if len(w.rest) == 0 && w.err != nil {
		return n, w.err
	}
	return n, nil
}

// stopped reports whether err is the end of w's context rather than the
// input's.
func (w *waitingInput) stopped(err error) bool {
	return w.ctx.Err() != nil && errors.Is(err, context.Cause(w.ctx))
}

// ready reports whether w's next Read returns without waiting.
func (w *waitingInput) ready() bool {
	return len(w.rest) > 0 || w.err != nil || len(w.got) > 0
}

// nextWaits reports whether reading the next frame may wait on a writer.
func (r *Reader) nextWaits() bool {
	return r.wait != nil && !r.wait.ready() && (r.pf == nil || !r.pf.buffered())
}

// NoFrames is a Reader of a capture of no frames (pcap, Ethernet), named
// name: what a file stopped before its header was whole (OpenContext's
// ending) has shown, for a caller that prints what was read as it would
// for any capture (an empty JSON array, views of nothing).
func NoFrames(name string) *Reader {
	r, err := NewFileReader(name, bytes.NewReader(noFramesHeader[:]))
	if err != nil {
		panic("capture: the empty capture does not read: " + err.Error())
	}
	return r
}

// noFramesHeader is a pcap file header (little-endian, microseconds,
// version 2.4, snap length 262144, Ethernet) and no record.
var noFramesHeader = [24]byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0}
