package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/output/follow"
	"github.com/smcscope/smcscope/track"
)

// The stream pane (S): the application bytes of a connection, both
// directions in the order the CDCs released them, as Wireshark's Follow
// Stream shows a TCP connection: the client's in red, the server's in
// blue, gaps the capture has marked in yellow. It reads the capture file
// once more with a tracker that reassembles that connection (package
// track, Options.Stream); the index keeps no bytes.

// streamShown caps the text the pane holds: a bulk transfer's stream is
// as long as the transfer, a pane is read by a person.
const streamShown = 1 << 20

// streamText is the pane's text for connection conn of the capture file
// path (its first limit frames; 0 all): tview color tags around escaped
// text. ok is false when the connection has no stream bytes.
func streamText(ctx context.Context, path string, limit, conn int) (text string, ok bool, err error) {
	r, err := capture.Open(path)
	if err != nil {
		return "", false, err
	}
	return readStream(ctx, r, limit, conn)
}

// readStream is streamText over a reader (closed), up to frame limit.
func readStream(ctx context.Context, r *capture.Reader, limit, conn int) (text string, ok bool, err error) {
	defer r.Close()
	s := &streamPane{conn: conn}
	tr := track.New(track.Options{Unshared: true, Stream: s})
	for n := 0; limit == 0 || n < limit; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			// What the tracker held for copies that did not come is
			// followed now, as smcdump -z smc,follow follows it.
			tr.EndCapture(time.Time{})
			break
		}
		if err != nil {
			return "", false, err
		}
		tr.Feed(f)
	}
	if !s.seen {
		return "", false, nil
	}
	head := fmt.Sprintf("connection %d: [red]%s → %s[-]  [blue]%s → %s[-]  (%d B and %d B; smcdump -r FILE -q -z smc,follow,%d prints them all)\n\n",
		conn, node(s.client), node(s.server), node(s.server), node(s.client), s.bytes[0], s.bytes[1], conn)
	return head + s.b.String(), true, nil
}

func node(s string) string {
	if s == "invalid AddrPort" {
		return "-"
	}
	return s
}

// streamPane is the sink that renders one connection's chunks.
type streamPane struct {
	conn           int
	seen           bool
	client, server string
	bytes          [2]uint64
	b              strings.Builder
	cut            bool
}

var streamColor = [2]string{"[red]", "[blue]"}

func (s *streamPane) StreamChunk(ch *track.StreamChunk) {
	if ch.Conn.ID != s.conn {
		return
	}
	s.seen = true
	s.client, s.server = ch.Conn.Client.String(), ch.Conn.Server.String()
	s.bytes[ch.Dir] += uint64(len(ch.Data))
	switch {
	case ch.End:
		return
	case s.b.Len() >= streamShown:
		if !s.cut {
			s.cut = true
			s.b.WriteString("[yellow]… the pane shows the first MiB[-]\n")
		}
		return
	case ch.Data == nil:
		s.b.WriteString("[yellow]" + tview.Escape(follow.GapText(ch)) + "[-]\n")
		return
	}
	// A line ends at CR LF as at LF; a lone CR would move the pane's
	// cursor back over the line, so it shows as a dot.
	text := strings.ReplaceAll(strings.ReplaceAll(string(follow.Printable(nil, ch.Data)), "\r\n", "\n"), "\r", ".")
	s.b.WriteString(streamColor[ch.Dir] + tview.Escape(text) + "[-]")
	if !strings.HasSuffix(text, "\n") {
		s.b.WriteByte('\n')
	}
}

// showStream opens the stream pane of the selected frame's connection.
func (b *Browser) showStream() {
	conn, _ := b.idx.Conn(int(b.selected()))
	switch {
	case conn == 0:
		b.message = "[yellow]the frame belongs to no connection[-]"
		return
	case b.idx.live:
		b.message = "[yellow]a live capture's bytes are not kept: write the frames (w) and open the file[-]"
		return
	}
	view := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetText("reading the connection's bytes…")
	view.SetBorder(true).SetTitle(fmt.Sprintf(" bytes of connection %d (↑/↓ PgUp/PgDn: scroll, esc: back) ", conn))
	ctx, cancel := context.WithCancel(b.ctx)
	view.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch {
		case ev.Key() == tcell.KeyEscape:
			cancel()
			b.App.Pages.RemovePage("pane")
			b.App.SetFocus(b.list)
			return nil
		case ev.Rune() == 'q':
			cancel()
			b.App.Stop()
			return nil
		}
		return ev
	})
	b.App.Pages.AddPage("pane", view, true, true)
	b.App.SetFocus(view)
	go func() {
		r, limit, err := b.idx.pass()
		var text string
		var ok bool
		if err == nil {
			text, ok, err = readStream(ctx, r, limit, conn)
		}
		b.App.QueueUpdateDraw(func() {
			switch {
			case ctx.Err() != nil:
				return // closed meanwhile
			case err != nil:
				text = "[red]" + tview.Escape(err.Error()) + "[-]"
			case !ok:
				text = fmt.Sprintf("connection %d has no application bytes over SMC-R in the capture (a fallback's are in its TCP segments: f lists them)", conn)
			}
			view.SetText(text).ScrollToBeginning()
		})
	}()
}
