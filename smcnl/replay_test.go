package smcnl

import (
	"errors"
	"testing"
)

func TestReplay(t *testing.T) {
	c, err := Replay("testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	gs, err := c.LinkGroupsR()
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || len(gs[0].Links) != 2 {
		t.Fatalf("multilink before failover: want 1 link group with 2 links, got %+v", gs)
	}
	ss, err := ReplaySockets("testdata/multilink-client-before")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) == 0 {
		t.Fatal("no sockets in the recorded dump")
	}
	c2, err := Replay(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if _, err := c2.Stats(); !errors.Is(err, ErrNotSupported) {
		t.Errorf("Stats without a recording: %v, want ErrNotSupported", err)
	}
}
