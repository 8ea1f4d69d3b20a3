package browser

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"

	"github.com/smcscope/smcscope/filter"
)

// TestTreeFilterVariants: !, &, | and ^ apply the tree's selected field
// as Wireshark's Apply as Filter variants do: not it, the list's filter
// and it, or it, and not it; each list is what the filter selects.
func TestTreeFilterVariants(t *testing.T) {
	h := open(t, "pingpong.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	for _, c := range []struct {
		key  rune
		node string
		want string
	}{
		{'A', "smc.cdc.seq = ", "smc.cdc.seq == 1"},
		{'&', "smc.cdc.token = ", "(smc.cdc.seq == 1) && smc.cdc.token == 0x1"},
		{'|', "smc.cdc.seq = ", "((smc.cdc.seq == 1) && smc.cdc.token == 0x1) || smc.cdc.seq == 1"},
		{'^', "smc.cdc.token = ", "(((smc.cdc.seq == 1) && smc.cdc.token == 0x1) || smc.cdc.seq == 1) && !(smc.cdc.token == 0x1)"},
		{'!', "smc.cdc.token = ", "!(smc.cdc.token == 0x3)"},
	} {
		n := 23 // a CDC of connection 1, token 1
		if c.key == '!' {
			n = 20 // token 3
		}
		h.gotoFrame(t, n)
		h.selectNode(t, c.node)
		h.Key(tcell.KeyRune, c.key)
		flt, err := filter.Compile(c.want)
		if err != nil {
			t.Fatalf("%c: %q: %v", c.key, c.want, err)
		}
		ns, err := h.b.idx.Filter(context.Background(), flt)
		if err != nil {
			t.Fatal(err)
		}
		h.untilSquashed(t, fmt.Sprintf("filter %s, %d rows", c.want, len(ns)))
	}
	h.gotoFrame(t, 23)
	h.selectNode(t, "Frame (frame)")
	h.Key(tcell.KeyUp, 0) // the root: no field
	h.Key(tcell.KeyRune, '!')
	if scr := h.Sync(); !strings.Contains(scr, "select a field in the field tree first") {
		t.Errorf("! without a field:\n%s", scr)
	}
}

// TestSearchRegexp: ctrl-f /REGEXP/ finds the next frame whose Info or
// field tree text matches, n and N go on; a bad expression says why.
func TestSearchRegexp(t *testing.T) {
	h := open(t, "multilink.pcap", 120, 40, Options{})
	h.Until("[SYN]")
	h.prompt(tcell.KeyCtrlF, 0, "/DELETE_LINK.*ORDERLY/")
	h.untilSquashed(t, "regexp /DELETE_LINK.*ORDERLY/ matches frame 987: Info")
	h.Key(tcell.KeyRune, 'n')
	h.untilSquashed(t, "matches frame 990: Info")
	h.Key(tcell.KeyRune, 'N')
	h.untilSquashed(t, "matches frame 987: Info")
	// Text only the field tree has.
	h.Key(tcell.KeyRune, 'g')
	h.prompt(tcell.KeyCtrlF, 0, `/eth\.src = 52:54:00:0a:00:01/`)
	h.untilSquashed(t, "matches frame 4: eth.src = 52:54:00:0a:00:01 (Ethernet source address)")
	if n := h.selectedFrame(); n != 4 {
		t.Errorf("the hit selects frame %d, want 4", n)
	}
	h.prompt(tcell.KeyCtrlF, 0, "/(/")
	h.Until("not a regular expression")
	h.Key(tcell.KeyEscape, 0)
	h.prompt(tcell.KeyCtrlF, 0, "/no such words/")
	h.untilSquashed(t, "matches no Info or field of the 4545 frames of the list")
}
