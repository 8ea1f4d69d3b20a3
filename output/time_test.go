package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/internal/testutil"
)

// timedCapture writes the first four frames of fallback-nosmc.pcap with
// the given times, as a nanosecond pcap ("ns"), a microsecond one ("us")
// or pcapng with if_tsresol 10^-3 ("ng-ms") or 2^-10 ("ng-bin10").
func timedCapture(t *testing.T, kind string, times []time.Time) string {
	t.Helper()
	fs := readFrames(t, fallback, len(times))
	for i := range fs {
		fs[i].CI.Timestamp = times[i]
	}
	if kind == "us" {
		return writeFrames(t, "us.pcap", fs)
	}
	var b []byte
	switch kind {
	case "ns":
		b = testutil.PcapNanos(t, layers.LinkTypeEthernet, fs)
	case "ng-ms":
		b = testutil.Pcapng(layers.LinkTypeEthernet, 3, fs)
	case "ng-bin10":
		b = testutil.Pcapng(layers.LinkTypeEthernet, 0x80|10, fs)
	}
	p := filepath.Join(t.TempDir(), kind+".pcapng")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTimeEpochExact: frame.time_epoch is the time the file holds, at the
// file's resolution, in every output mode and in filters: four times one
// nanosecond apart (which a float64 of the seconds cannot tell apart) stay
// four times, a microsecond capture prints six decimals, not a float's
// nine digits of noise, and a pcapng interface prints its if_tsresol's.
func TestTimeEpochExact(t *testing.T) {
	sec := int64(1795336493)
	at := func(ns int64) time.Time { return time.Unix(sec, ns) }
	tests := []struct {
		kind   string
		times  []time.Time
		want   []string // frame.time_epoch of each frame
		filter string   // selects the second frame only
	}{
		{"ns", []time.Time{at(775685001), at(775685002), at(775685003), at(775685004)},
			[]string{"1795336493.775685001", "1795336493.775685002", "1795336493.775685003", "1795336493.775685004"},
			"frame.time_epoch == 1795336493.775685002"},
		{"us", []time.Time{at(775685000), at(775686000), at(775687000), at(775688000)},
			[]string{"1795336493.775685", "1795336493.775686", "1795336493.775687", "1795336493.775688"},
			"frame.time_epoch >= 1795336493.7756855 and frame.time_epoch < 1795336493.775687"},
		{"ng-ms", []time.Time{at(775000000), at(776000000), at(777000000), at(778000000)},
			[]string{"1795336493.775", "1795336493.776", "1795336493.777", "1795336493.778"},
			"frame.time_epoch in {1795336493.776 1795336493.9}"},
		// 2^-10 s units: 794 and 795 of them are 0.775390625 and
		// 0.7763671875 s, whole nanoseconds truncated.
		{"ng-bin10", []time.Time{at(775390625), at(776367187), at(777343750), at(778320312)},
			[]string{"1795336493.775390625", "1795336493.776367187", "1795336493.777343750", "1795336493.778320312"},
			"frame.time_epoch in {1795336493.776..1795336493.777}"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			p := timedCapture(t, tt.kind, tt.times)
			fields, _, err := run(t, Options{Read: p, All: true, Format: FormatFields, Fields: []string{"frame.time_epoch"}})
			if want := strings.Join(tt.want, "\n") + "\n"; err != nil || fields != want {
				t.Errorf("-T fields: %v\n%s\nwant\n%s", err, fields, want)
			}
			for _, f := range []Format{FormatJSON, FormatJSONL} {
				js, _, err := run(t, Options{Read: p, All: true, Format: f})
				for _, w := range tt.want {
					if err != nil || !strings.Contains(js, `"frame.time_epoch":`+w+`,`) {
						t.Errorf("-T %s: %v: no frame.time_epoch %s in\n%.600s", f, err, w, js)
					}
				}
			}
			verbose, _, err := run(t, Options{Read: p, All: true, Verbose: true})
			for _, w := range tt.want {
				if err != nil || !strings.Contains(verbose, "frame.time_epoch = "+w+" ") {
					t.Errorf("-V: %v: no frame.time_epoch = %s", err, w)
				}
			}
			sel, _, err := run(t, Options{Read: p, All: true, Format: FormatFields, Fields: []string{"frame.number"}, DisplayFilter: tt.filter})
			if err != nil || sel != "2\n" {
				t.Errorf("-Y %q: %v %q, want frame 2 only", tt.filter, err, sel)
			}
		})
	}
	// Like tshark, a time literal has at most nine decimals.
	p := timedCapture(t, "ns", []time.Time{at(1)})
	_, _, err := run(t, Options{Read: p, DisplayFilter: "frame.time_epoch == 1795336493.0000000001"})
	if err == nil || !strings.Contains(err.Error(), "at most 9 decimals") {
		t.Errorf("10 decimals: %v", err)
	}
}
