package track_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// The whole tracker API in one pass: Feed every frame, read the tracker's
// fields of each frame right after Feed, then read the typed rows of a
// view (package rows) from a Snapshot.
func Example() {
	r, err := capture.Open("../testdata/reference/decline-nordma.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	views := []string{"smc,decline"}
	tr := track.New(track.OptionsForViews(track.Options{}, views))
	var rec decode.Record
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		tr.Feed(f)
		rec.Reset()
		tr.AppendFields(f, &rec) // smc.conn.id, smc.conn.outcome, ... for -Y / -e
	}
	s := tr.Snapshot()
	c := s.Conns[0]
	fmt.Println(c.Client, "->", c.Server, c.Outcome, track.ConnDetail(&c))
	// Package rows makes the views' rows; output/zview prints them as smcdump -z does.
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rows.Declines(&s)); err != nil {
		fmt.Println(err)
	}
	// Output:
	// 10.10.0.2:55036 -> 10.10.0.1:5000 fallback server declined 0x03030002 NOSMCRDEV after Proposal
	// {
	//   "fallbacks": [
	//     {
	//       "id": 1,
	//       "client": "10.10.0.2:55036",
	//       "server": "10.10.0.1:5000",
	//       "cause": "CLC Decline",
	//       "by": "server",
	//       "stage": "after Proposal",
	//       "code": "0x03030002",
	//       "name": "NOSMCRDEV",
	//       "meaning": "no usable SMC-R (RoCE) device",
	//       "frame": 10
	//     }
	//   ],
	//   "by_reason": [
	//     {
	//       "reason": "0x03030002 NOSMCRDEV (server)",
	//       "count": 1
	//     }
	//   ]
	// }
}
