package track

import (
	"fmt"
	"testing"

	"github.com/smcscope/smcscope/decode"
)

// TestDeleteLinkText holds appendDeleteLink to the fmt formula it replaced.
func TestDeleteLinkText(t *testing.T) {
	reasons := []uint32{0, 1, 0x00010000, 0x00020000, 0x00040000, 0x00100000, 0xdeadbeef, 0xffffffff}
	for _, reason := range reasons {
		for _, linkID := range []uint8{0, 1, 9, 10, 255} {
			for flags := range 4 {
				m := &llcIn{typ: decode.LLCDeleteLink, linkID: linkID, reason: reason, all: flags&1 != 0, orderly: flags&2 != 0}
				name := m.typ.String()
				for _, kind := range []string{"req", "resp"} {
					want := fmt.Sprintf("%s %s", name, kind)
					if m.all {
						want += " ALL"
					}
					if m.orderly {
						want += " ORDERLY"
					}
					want += fmt.Sprintf(" link %d reason %#08x %s", m.linkID, m.reason, decode.DeleteLinkReason(m.reason).Meaning())
					if got := string(appendDeleteLink([]byte("junk"), name, kind, m)[4:]); got != want {
						t.Errorf("got %q, want %q", got, want)
					}
				}
			}
		}
	}
}
