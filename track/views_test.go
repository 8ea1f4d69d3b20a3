package track

import "testing"

func TestOptionsForViews(t *testing.T) {
	o := OptionsForViews(Options{}, []string{"smc,conns", "smc,timeline,3"})
	if o.Timeline != "3" {
		t.Errorf("Timeline = %q, want 3", o.Timeline)
	}
	o = OptionsForViews(Options{}, []string{"smc,timeline,3", "smc,timeline,10.0.0.1:5"})
	if o.Timeline != "all" {
		t.Errorf("two timelines: %q, want all", o.Timeline)
	}
}
