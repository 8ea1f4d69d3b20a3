package output

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/internal/testutil/crafted"
	"github.com/smcscope/smcscope/output/zview"
)

// TestGoldenFollow locks -z smc,follow in each of tshark's follow modes
// on a kernel capture (silent-link.pcap: two connections, one of them
// across a link's death), a connection named by endpoint, and the
// errors a user meets (go test ./output -run GoldenFollow -update).
// follow_test.go in output/follow holds the layout to tshark's own.
func TestGoldenFollow(t *testing.T) {
	path := filepath.Join(testutil.SamplesDir(t), "silent-link.pcap")
	for _, c := range []struct {
		name  string
		views []string
		o     Options
	}{
		{"ascii", []string{"smc,follow,1"}, Options{}},
		{"hex", []string{"smc,follow,1,hex"}, Options{}},
		{"raw", []string{"smc,follow,2,raw"}, Options{}},
		{"yaml", []string{"smc,follow,2,yaml"}, Options{}},
		{"endpoint", []string{"smc,follow,10.10.0.1:5000,raw"}, Options{}},
		{"with-conns", []string{"smc,conns", "smc,follow,2,raw"}, Options{}},
		{"no-such-conn", []string{"smc,follow,7"}, Options{}},
		{"bad-mode", []string{"smc,follow,1,ebcdic"}, Options{}},
		{"bad-conn", []string{"smc,follow,x"}, Options{}},
		{"json", []string{"smc,follow,1"}, Options{Format: "json"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.o
			o.Read, o.Quiet, o.Views = path, true, c.views
			o.NewTracker = func(v []string) (Tracker, error) { return zview.NewTracker(v) }
			var out, errb bytes.Buffer
			o.Stdout, o.Stderr = &out, &errb
			if err := Run(context.Background(), o); err != nil {
				out.WriteString("error: " + err.Error() + "\n")
			}
			if errb.Len() > 0 {
				out.WriteString("stderr: " + errb.String())
			}
			testutil.GoldenFile(t, filepath.Join("testdata", "TestGoldenFollow", c.name+".golden"), out.Bytes())
		})
	}
}

// TestStreamFilter: -Y 'smc.stream contains "GET /"' finds the RDMA
// WRITE that carries an HTTP request over SMC-R, and -T fields names
// which bytes of the connection's stream it and the response carry.
func TestStreamFilter(t *testing.T) {
	var out, errb bytes.Buffer
	o := Options{
		Read: crafted.HTTP(t), DisplayFilter: `smc.stream contains "GET /" || smc.stream contains "HTTP/1.1 200"`,
		Format: "fields", Fields: []string{"frame.number", "smc.conn.id", "smc.conn.dir", "smc.stream.offset", "smc.stream.len"},
		NewTracker: func(v []string) (Tracker, error) { return zview.NewTracker(v) },
		Stdout:     &out, Stderr: &errb,
	}
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if want := "18\t1\tC->S\t0\t64\n22\t1\tS->C\t0\t64\n"; out.String() != want || errb.Len() != 0 {
		t.Errorf("got %q (stderr %q), want %q", out.String(), errb.String(), want)
	}
}
