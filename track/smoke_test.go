package track

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/smcscope/smcscope/capture"
)

func runFile(t testing.TB, name string, opts Options) *Tracker {
	t.Helper()
	r, err := capture.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := New(opts)
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Feed(f)
	}
	return tr
}

func TestSmoke(t *testing.T) {
	for _, n := range []string{"pingpong", "decline-nordma", "fallback-nosmc", "no-ueid"} {
		tr := runFile(t, "../testdata/reference/"+n+".pcap", Options{Timeline: "1"})
		for _, v := range []string{ViewConns, ViewLinks, ViewLGR, ViewDecline} {
			tr.WriteView(os.Stdout, v, "", "text")
		}
		tr.WriteView(os.Stdout, ViewTimeline, "1", "text")
	}
}
