package browser

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/rivo/tview"
)

// Search finds the next frame of the list whose bytes contain a byte
// string or a text, as Wireshark's "Find Packet" by hex value or string:
// ctrl-f asks for it, n and N find the next and previous hit. It reads the
// frames' bytes, not their decodes.

// needle is what a search looks for.
type needle struct {
	b    []byte
	text string // as the user wrote it, for the status line
}

// parseNeedle reads a search: hex bytes (0xe2d4c3d9, e2:d4:c3:d9 or
// e2 d4 c3 d9), a quoted text ("SMC-LAB", with Go's escapes), or any
// other text as typed.
func parseNeedle(s string) (needle, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return needle{}, fmt.Errorf("nothing to find")
	}
	if strings.HasPrefix(s, `"`) {
		t, err := strconv.Unquote(s)
		if err != nil || t == "" {
			return needle{}, fmt.Errorf("%s: not a quoted text", s)
		}
		return needle{[]byte(t), "text " + s}, nil
	}
	h, isHex := strings.CutPrefix(strings.ToLower(s), "0x")
	if !isHex && strings.Trim(strings.ToLower(s), "0123456789abcdef: ") == "" && (strings.ContainsAny(s, ": ") || len(s) == 2) {
		h, isHex = strings.NewReplacer(":", "", " ", "").Replace(strings.ToLower(s)), true
	}
	if isHex {
		b, err := hex.DecodeString(h)
		if err != nil || len(b) == 0 {
			return needle{}, fmt.Errorf("%s: not hex bytes (write e2:d4:c3:d9 or 0xe2d4c3d9; quote a text)", s)
		}
		return needle{b, "bytes " + hex.EncodeToString(b)}, nil
	}
	return needle{[]byte(s), "text " + strconv.Quote(s)}, nil
}

// search looks for the needle in the frames of ns from row from+dir on
// (dir 1 down, -1 up), round the list's end; it returns the row and the
// offset of the hit, or row -1.
func (x *Index) search(ctx context.Context, ns []int32, from, dir int, nd needle) (row, off int, err error) {
	rr, err := x.newRecordReader()
	if err != nil {
		return -1, 0, err
	}
	defer rr.Close()
	for k := 1; k <= len(ns); k++ {
		if k&1023 == 0 && ctx.Err() != nil {
			return -1, 0, ctx.Err()
		}
		i := ((from+dir*k)%len(ns) + len(ns)) % len(ns)
		_, data, err := rr.read(ns[i])
		if err != nil {
			return -1, 0, err
		}
		if o := bytes.Index(data, nd.b); o >= 0 {
			return i, o, nil
		}
	}
	return -1, 0, nil
}

// find runs the search from the selected row, in the background; a hit is
// selected, with its bytes highlighted in the hex pane.
func (b *Browser) find(dir int) {
	if b.needle.b == nil {
		b.message = "[yellow]no search yet (ctrl-f)[-]"
		return
	}
	ns := b.rows.frames()
	if len(ns) == 0 {
		b.message = "[yellow]the list is empty: nothing to search[-]"
		return
	}
	from, _ := b.list.GetSelection()
	nd := b.needle
	b.message = "[yellow]searching for " + tview.Escape(nd.text) + "…[-]"
	b.background(func(ctx context.Context) func() {
		row, off, err := b.idx.search(ctx, ns, from, dir, nd)
		return func() {
			switch {
			case err != nil:
				b.message = "[red]" + tview.Escape(err.Error()) + "[-]"
			case row < 0:
				b.message = fmt.Sprintf("[yellow]%s is in none of the %d frames of the list[-]", tview.Escape(nd.text), len(ns))
			default:
				b.jumped()
				b.selectRow(row)
				b.found = span{off, len(nd.b)}
				b.hex.mark(b.found)
				wrapped := ""
				if dir > 0 && row <= from || dir < 0 && row >= from {
					wrapped = ", round the end of the list"
				}
				b.message = fmt.Sprintf("%s at offset %d of frame %d%s (n next, N previous)", tview.Escape(nd.text), off, ns[row], wrapped)
			}
		}
	})
}
