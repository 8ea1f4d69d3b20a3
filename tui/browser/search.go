package browser

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/output"
)

// Search finds the next frame of the list whose bytes contain a byte
// string or a text, as Wireshark's "Find Packet" by hex value or string:
// ctrl-f asks for it, n and N find the next and previous hit. It reads the
// frames' bytes, not their decodes.

// needle is what a search looks for: bytes, or a regular expression
// over the frames' Info and field tree text.
type needle struct {
	b    []byte
	re   *regexp.Regexp
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
	if len(s) > 2 && strings.HasPrefix(s, "/") && strings.HasSuffix(s, "/") {
		re, err := regexp.Compile(s[1 : len(s)-1])
		if err != nil {
			return needle{}, fmt.Errorf("%s: not a regular expression: %w", s, err)
		}
		return needle{re: re, text: "regexp " + s}, nil
	}
	if strings.HasPrefix(s, `"`) {
		t, err := strconv.Unquote(s)
		if err != nil || t == "" {
			return needle{}, fmt.Errorf("%s: not a quoted text", s)
		}
		return needle{b: []byte(t), text: "text " + s}, nil
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
		return needle{b: b, text: "bytes " + hex.EncodeToString(b)}, nil
	}
	return needle{b: []byte(s), text: "text " + strconv.Quote(s)}, nil
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
	if b.needle.re != nil {
		b.findText(dir)
		return
	}
	if b.needle.b == nil {
		b.message = "[yellow]no search yet (ctrl-f)[-]"
		return
	}
	l, from, nd, ok := b.searchFrom()
	if !ok {
		return
	}
	b.background(func(ctx context.Context) func() {
		ns := l.slice()
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
				b.message = fmt.Sprintf("%s at offset %d of frame %d%s (n next, N previous)", tview.Escape(nd.text), off, ns[row], wrapped(dir, row, from))
			}
		}
	})
}

// searchBatch is how many frames a text search decodes at once (their
// handshakes replayed once for the batch).
const searchBatch = 256

// searchText looks for a match of re in the Info and the field tree text
// of the frames of ns, from row from+dir on, round the list's end; it
// returns the row and where the match is ("Info", or the tree's line),
// or row -1.
func (x *Index) searchText(ctx context.Context, ns []int32, from, dir int, re *regexp.Regexp) (row int, where string, err error) {
	for k := 1; k <= len(ns); k += searchBatch {
		if ctx.Err() != nil {
			return -1, "", ctx.Err()
		}
		var rows []int
		want := make([]int32, 0, searchBatch)
		for j := k; j < min(k+searchBatch, len(ns)+1); j++ {
			i := ((from+dir*j)%len(ns) + len(ns)) % len(ns)
			rows = append(rows, i)
			want = append(want, ns[i])
		}
		hits := map[int32]string{}
		if err := x.Decode(want, func(n int32, f *capture.Frame) {
			if w := textMatch(f, re); w != "" {
				hits[n] = w
			}
		}); err != nil {
			return -1, "", err
		}
		for _, i := range rows {
			if w, ok := hits[ns[i]]; ok {
				return i, w, nil
			}
		}
	}
	return -1, "", nil
}

// textMatch says where re matches a decoded frame: "Info", a line of its
// field tree as the tree writes it, or "" nowhere.
func textMatch(f *capture.Frame, re *regexp.Regexp) string {
	if re.MatchString(rowOfFrame(f).info) {
		return "Info"
	}
	for _, l := range output.Tree(f) {
		if head := l.Title + " (" + l.Key + ")"; re.MatchString(head) {
			return head
		}
		for _, fd := range l.Fields {
			line := fd.Name + " = " + fd.Value
			if fd.Desc != "" {
				line += "    (" + fd.Desc + ")"
			}
			if re.MatchString(line) {
				return line
			}
		}
	}
	return ""
}

// searchFrom is where a search starts: the list's frames (made a slice
// by the search, off the UI's goroutine), the selected row and the
// needle, the status line saying it runs; ok is false for an empty list,
// which the status line says.
func (b *Browser) searchFrom() (ns frameList, from int, nd needle, ok bool) {
	ns = b.rows.frames()
	if ns.len() == 0 {
		b.message = "[yellow]the list is empty: nothing to search[-]"
		return ns, 0, nd, false
	}
	from, _ = b.list.GetSelection()
	nd = b.needle
	b.message = "[yellow]searching for " + tview.Escape(nd.text) + "…[-]"
	return ns, from, nd, true
}

// wrapped says when a hit in direction dir at row came past the list's
// end from row from.
func wrapped(dir, row, from int) string {
	if dir > 0 && row <= from || dir < 0 && row >= from {
		return ", round the end of the list"
	}
	return ""
}

// findText runs a regular expression search from the selected row, in
// the background, and selects the hit.
func (b *Browser) findText(dir int) {
	l, from, nd, ok := b.searchFrom()
	if !ok {
		return
	}
	b.background(func(ctx context.Context) func() {
		ns := l.slice()
		row, where, err := b.idx.searchText(ctx, ns, from, dir, nd.re)
		return func() {
			switch {
			case err != nil:
				b.message = "[red]" + tview.Escape(err.Error()) + "[-]"
			case row < 0:
				b.message = fmt.Sprintf("[yellow]%s matches no Info or field of the %d frames of the list[-]", tview.Escape(nd.text), len(ns))
			default:
				b.jumped()
				b.selectRow(row)
				b.message = fmt.Sprintf("%s matches frame %d%s: %s (n next, N previous)", tview.Escape(nd.text), ns[row], wrapped(dir, row, from), tview.Escape(where))
			}
		}
	})
}
