package decode

import (
	"strings"
	"testing"
)

// TestFieldOwners: every field names its owner, and its name sits under
// the owner's key, so the -V headings and demand-driven decoding agree
// with the names users type.
func TestFieldOwners(t *testing.T) {
	seen := map[Owner]bool{}
	for _, d := range Fields() {
		if d.Owner == OwnerUnknown || d.Owner >= NumOwners {
			t.Errorf("%s: no owner", d.Name)
			continue
		}
		seen[d.Owner] = true
		if !strings.HasPrefix(d.Name, d.Owner.Key()) {
			t.Errorf("%s: owner %s, whose fields are named %s.*", d.Name, d.Owner.Title(), d.Owner.Key())
		}
	}
	// The layers of this package each fill some field (the rest register
	// in capture and track, whose tests load them).
	for o := OwnerGRH; o <= OwnerCDC; o++ {
		if !seen[o] {
			t.Errorf("owner %s has no field", o.Title())
		}
	}
}
