package browser

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/filter"
	"github.com/smcscope/smcscope/output"
	"github.com/smcscope/smcscope/track"
)

// treeRef is what a field-tree node refers to: the bytes it highlights
// and the filter A and P make of it.
type treeRef struct {
	nodeSpans
	filter   string // "smc.clc.type == 0x4"; a layer heading: the layer's key
	key      string // a layer heading's key, for collapsed
	field    decode.FieldID
	hasField bool // a field's line (C adds it as a column)
}

// showFrame fills the field tree and hex pane for the row.
func (b *Browser) showFrame(row int) {
	b.rows.mu.Lock()
	if row < 0 || row >= b.rows.ns.len() {
		b.rows.mu.Unlock()
		none := tview.NewTreeNode("no frame")
		b.tree.SetRoot(none).SetCurrentNode(none)
		b.hex.show(nil)
		b.shown = 0
		return
	}
	n := b.rows.ns.at(row)
	b.rows.mu.Unlock()
	b.shown = n
	var (
		tree    []output.TreeLayer
		spans   []capture.FieldSpan
		filters []string // by field index
		ids     []decode.FieldID
	)
	_ = b.idx.Decode([]int32{n}, func(_ int32, f *capture.Frame) {
		tree = output.Tree(f)
		b.data, spans = append(b.data[:0], f.Data...), append(spans[:0], f.FieldSpans()...)
		rec := f.Fields()
		ids = slices.Clone(rec.IDs)
		filters = make([]string, len(rec.IDs))
		for i, id := range rec.IDs {
			filters[i] = filter.Equal(decode.Def(id), rec.Vals[i])
		}
	})
	conn, link := b.idx.Conn(int(n))
	// 0 is no connection or link the tracker gave the frame: absent, not
	// an ID.
	root := tview.NewTreeNode(fmt.Sprintf("frame %d  connection %s  link %s", n, idOrAbsent(conn), idOrAbsent(link)))
	// Each node refers to the bytes it highlights: a field line its own
	// (or its layer's), a layer heading its layer's, that of its first
	// field.
	for _, l := range tree {
		heading := &treeRef{filter: l.Key, key: l.Key}
		layer := tview.NewTreeNode(tview.Escape(l.Title + " (" + l.Key + ")")).SetColor(tcell.ColorYellow).SetReference(heading)
		layer.SetExpanded(!b.collapsed[l.Key])
		layer.SetSelectedFunc(func() {
			layer.SetExpanded(!layer.IsExpanded())
			b.collapsed[heading.key] = !layer.IsExpanded()
		})
		root.AddChild(layer)
		for _, fd := range l.Fields {
			ref := &treeRef{}
			if fd.Index < len(spans) {
				ref.nodeSpans = nodeSpans{spanOf(spans[fd.Index].Field), spanOf(spans[fd.Index].Layer)}
			}
			if fd.Index < len(filters) {
				ref.filter = filters[fd.Index]
				ref.field, ref.hasField = ids[fd.Index], true
			}
			if heading.layer.n == 0 {
				heading.layer = ref.layer
			}
			line := fd.Name + " = " + fd.Value
			if fd.Desc != "" {
				line += "    (" + fd.Desc + ")"
			}
			layer.AddChild(tview.NewTreeNode(tview.Escape(line)).SetReference(ref))
		}
	}
	if fs := b.frameFindings(n, conn, link); len(fs) > 0 {
		heading := tview.NewTreeNode("SMC Expert Info (smc.expert)").SetColor(tcell.ColorYellow).SetReference(&treeRef{filter: "smc.expert", key: "smc.expert"})
		root.AddChild(heading)
		for _, f := range fs {
			d := f.ID.Def()
			line := fmt.Sprintf("%s %s: %s", d.Severity, d.Name, d.Meaning)
			if f.Detail != "" {
				line += " (" + f.Detail + ")"
			}
			heading.AddChild(tview.NewTreeNode(tview.Escape(line)).SetReference(&treeRef{filter: "smc.expert.id == \"" + d.Name + "\""}))
		}
	}
	b.tree.SetRoot(root).SetCurrentNode(root)
	b.hex.show(b.data)
}

// frameFindings are the capture's findings that frame n shows: on its
// connection, its link or the capture, between their first and last
// frame, when the index says the frame carries one.
func (b *Browser) frameFindings(n int32, conn, link int) []track.Finding {
	s := b.idx.Snapshot()
	if s == nil || b.idx.Severity(int(n)) == expert.SeverityNone {
		return nil
	}
	var lgr int
	for _, l := range s.Links {
		if l.ID == link {
			lgr = l.LGR
		}
	}
	var out []track.Finding
	for _, f := range s.Findings() {
		on := f.Object == expert.ObjectConn && f.ObjectID == conn && conn != 0 ||
			f.Object == expert.ObjectLink && f.ObjectID == link && link != 0 ||
			f.Object == expert.ObjectLGR && f.ObjectID == lgr && lgr != 0 ||
			f.Object == expert.ObjectCapture
		if on && int(n) >= f.First && int(n) <= f.Last {
			out = append(out, f)
		}
	}
	return out
}

// highlight marks in the hex pane the bytes of the selected tree node: a
// field's own bytes, as Wireshark does, or its layer's where the field has
// no fixed place in the frame (computed from several bytes, filled by the
// tracker, behind a variable-length part); a layer heading's layer.
func (b *Browser) highlight(node *tview.TreeNode) {
	if node == nil {
		return
	}
	ref, _ := node.GetReference().(*treeRef)
	if ref == nil && b.found.n > 0 {
		// The frame of a search hit was just shown (its tree's root):
		// its hit stays highlighted.
		b.hex.mark(b.found)
		b.found = span{}
		return
	}
	if ref == nil {
		b.hex.mark(span{})
		return
	}
	b.hex.mark(ref.pick())
}

// fieldFilter makes a filter of the field selected in the tree, as
// Wireshark's "Apply as Filter" (apply) and "Prepare as Filter" do.
func (b *Browser) fieldFilter(apply bool) {
	f, ok := b.treeFilter()
	if !ok {
		return
	}
	if !apply {
		b.openPrompt(promptFilter, f)
		return
	}
	b.remember(f)
	b.applyFilter(f)
}

// treeFilter is the filter of the field selected in the tree; false, with
// the status line saying so, when no field is selected.
func (b *Browser) treeFilter() (string, bool) {
	var ref *treeRef
	if node := b.tree.GetCurrentNode(); node != nil {
		ref, _ = node.GetReference().(*treeRef)
	}
	if ref == nil || ref.filter == "" {
		b.message = "[yellow]select a field in the field tree first (tab goes there)[-]"
		return "", false
	}
	return ref.filter, true
}

// filterOps are the variants of Wireshark's "Apply as Filter" submenu
// beside Selected (A): the key, and how the field's filter f joins the
// list's filter cur ("" when the list is not filtered).
var filterOps = map[rune]func(cur, f string) string{
	'!': func(_, f string) string { return "!(" + f + ")" },
	'&': func(cur, f string) string { return joinFilter(cur, "&&", f) },
	'|': func(cur, f string) string { return joinFilter(cur, "||", f) },
	'^': func(cur, f string) string { return joinFilter(cur, "&&", "!("+f+")") }, // and not
}

// joinFilter joins the list's filter and a field's with op; the field's
// alone when the list has none.
func joinFilter(cur, op, f string) string {
	if cur == "" {
		return f
	}
	return "(" + cur + ") " + op + " " + f
}

// fieldFilterOp applies the field selected in the tree as a filter joined
// to the list's (key: !, &, |, ^).
func (b *Browser) fieldFilterOp(key rune) {
	f, ok := b.treeFilter()
	if !ok {
		return
	}
	cur, _ := strings.CutPrefix(b.mode, "filter ")
	if cur == b.mode {
		cur = ""
	}
	expr := filterOps[key](cur, f)
	b.remember(expr)
	b.applyFilter(expr)
}

// idOrAbsent is a tracker ID, or "-" for 0, which no connection or link
// has.
func idOrAbsent(id int) string {
	if id == 0 {
		return "-"
	}
	return strconv.Itoa(id)
}
