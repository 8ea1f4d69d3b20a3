package rows_test

import (
	"errors"
	"fmt"
	"io"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// A link group's rows: its links by the kernel's numbers, and its history
// chosen by event kind, as smcdump -z smc,lgr and smctop show them.
func ExampleLGRRows() {
	r, err := capture.Open("../../testdata/reference/pingpong.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	tr := track.New(track.Options{})
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
	}
	s := tr.Snapshot()
	for _, g := range rows.LGRRows(&s) {
		fmt.Println(g.ClientLGRID, g.State, g.LinkStates)
		for _, e := range g.Events {
			if e.Change {
				fmt.Println(e.Text())
			}
		}
	}
	// Output:
	// 0x100 deleted [link 1:deleted link 2:rejected]
	// frame 16: CONFIRM_LINK_V2 resp link 1 UID 00000101
	// frame 20: ADD_LINK_V2 resp REJECT link 2
	// frame 4122: DELETE_LINK_V2 req ALL link 0 reason 0x00020000 operator-initiated termination (e.g. device or module going away)
}
