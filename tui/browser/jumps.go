package browser

// Back and forward go through the places the user jumped from, as a web
// browser does: a place is a list and the frame selected in it. A jump is
// a list change (a filter, f, esc, a, L, a pane's enter) or a move to a
// frame the user named or searched for (:N, a search hit, the next mark);
// j/k and the like are not.

// maxJumps bounds each direction of the jump history.
const maxJumps = 100

// place is where the user was: the list (its frames, kept for those a
// pass computed; the relevant and all lists are read again, as a live
// capture grows them) and the frame selected there.
type place struct {
	mode   string
	ns     []int32 // in frame order
	sort   sortState
	sorted []int32 // ns in the sort's order
	frame  int32
}

// here is the current place.
func (b *Browser) here() place {
	p := place{mode: b.mode, frame: b.selected(), sort: b.sort}
	if b.mode != "relevant" && b.mode != "all" {
		p.ns = b.unsorted.ns // a list of its own: only the base lists are the index's
	}
	if b.sort != (sortState{}) {
		p.sorted = b.rows.frames().ns // a sorted list is one of its own
	}
	return p
}

// jumped records the current place before a jump leaves it; the places
// forward of it are dropped, as a browser drops them on a new link.
func (b *Browser) jumped() {
	if b.mode == "" || b.restoring {
		return
	}
	b.back = pushPlace(b.back, b.here())
	b.fwd = b.fwd[:0]
}

func pushPlace(ps []place, p place) []place {
	if n := len(ps); n > 0 && ps[n-1].mode == p.mode && ps[n-1].frame == p.frame {
		return ps // the same place twice is one step
	}
	ps = append(ps, p)
	if len(ps) > maxJumps {
		ps = ps[1:]
	}
	return ps
}

// goBack goes to the place before the last jump (dir -1) or forward again
// (dir 1).
func (b *Browser) goBack(dir int) {
	from, to := &b.back, &b.fwd
	if dir > 0 {
		from, to = &b.fwd, &b.back
	}
	if len(*from) == 0 {
		if dir < 0 {
			b.message = "[yellow]no place to go back to[-]"
		} else {
			b.message = "[yellow]no place to go forward to[-]"
		}
		return
	}
	p := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = pushPlace(*to, b.here())
	b.restoring = true
	defer func() { b.restoring = false }()
	if p.mode == b.mode && p.sort == b.sort && (p.ns == nil || sameList(p.ns, b.unsorted.ns)) {
		row, _ := b.rowOf(p.frame)
		b.selectRow(row)
		return
	}
	l := listOf(p.ns)
	switch p.mode {
	case "relevant":
		l = b.idx.relevantList()
	case "all":
		l = b.idx.allList()
	}
	b.setList(l, p.mode, p.frame)
	if p.sort != (sortState{}) && len(p.sorted) == l.len() {
		b.showSorted(p.sort, listOf(p.sorted))
	}
}

// sameList reports whether two lists are the same slice.
func sameList(a, b []int32) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
