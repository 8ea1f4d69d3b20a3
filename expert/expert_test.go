package expert

import "testing"

// TestGroups: a finding's group is one of Wireshark's expert groups or
// one of the two smcscope adds, and the documentation says which is
// which (issue 28, point 8: performance and state were called
// Wireshark's).
func TestGroups(t *testing.T) {
	wireshark := map[string]bool{"sequence": true, "protocol": true, "malformed": true, "checksum": true, "response": true}
	own := map[string]bool{"performance": true, "state": true}
	for _, d := range All() {
		if !wireshark[d.Group] && !own[d.Group] {
			t.Errorf("%s: group %q is neither Wireshark's nor one smcscope documents", d.Name, d.Group)
		}
	}
}
