package track

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/smcscope/smcscope/internal/testutil"
)

// TestLateSilentLink: captures of silent-link.pcap started after its
// links were set up hold one link group, as the whole capture does. The
// silent link (its peer's sends dropped: only the server's TEST_LINK or
// CONFIRM_LINK retransmissions, no connection), which a DELETE_LINK sent
// on another link deletes, is that group's, with the whole capture's ends
// and number, deleted for a lost path (adoptDeleted).
func TestLateSilentLink(t *testing.T) {
	name := filepath.Join(testutil.SamplesDir(t), "silent-link.pcap")
	whole := feedFile(t, name, Options{}, 0)
	whole.EndCapture(time.Time{})
	ends := map[uint8][2]netip.Addr{}
	for _, l := range whole.Snapshot().Links {
		ends[l.LinkID] = [2]netip.Addr{l.Client.Addr, l.Server.Addr}
	}
	// After link 2's CONFIRM_LINK (it then sends only TEST_LINK), after
	// link 3's ADD_LINK, after link 3's CONFIRM_LINK (retransmitted).
	for _, skip := range []int{24, 103, 258} {
		tr := feedFile(t, name, Options{}, skip)
		tr.EndCapture(time.Time{})
		s := tr.Snapshot()
		if len(s.LinkGroups) != 1 {
			t.Errorf("from frame %d: %d link groups, want 1", skip+1, len(s.LinkGroups))
			continue
		}
		numbered := 0
		for _, l := range s.Links {
			if l.LinkID < 2 {
				continue // link 1's setup is before every cut
			}
			numbered++
			if w := ends[l.LinkID]; l.Client.Addr != w[0] || l.Server.Addr != w[1] {
				t.Errorf("from frame %d: link %d client %v server %v, the whole capture's %v %v", skip+1, l.LinkID, l.Client.Addr, l.Server.Addr, w[0], w[1])
			}
			if l.State != LinkDeleted || l.DeleteCode != 0x00010000 {
				t.Errorf("from frame %d: link %d %v reason %#x, want deleted for a lost path", skip+1, l.LinkID, l.State, l.DeleteCode)
			}
		}
		if want := map[int]int{24: 2, 103: 2, 258: 1}[skip]; numbered != want {
			t.Errorf("from frame %d: %d links numbered 2 or 3, want %d", skip+1, numbered, want)
		}
	}
}
