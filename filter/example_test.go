package filter_test

import (
	"errors"
	"fmt"

	"github.com/smcscope/smcscope/decode"
	"github.com/smcscope/smcscope/filter"
)

func ExampleCompile() {
	f, err := filter.Compile(`smc.clc.type eq 4 && smc.clc.decline.reason in {0x03030000 0x03030002}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The fields of frame 10 of testdata/reference/decline-nordma.pcap.
	reason, _ := decode.LookupField("smc.clc.decline.reason")
	typ, _ := decode.LookupField("smc.clc.type")
	var r decode.Record
	r.AddUint(typ.ID, 4)
	r.AddUint(reason.ID, 0x03030002)

	fmt.Println(f)
	fmt.Println(f.Match(&r))
	// Output:
	// smc.clc.type == 4 and smc.clc.decline.reason in {0x03030000 0x03030002}
	// true
}

func ExampleSyntaxError_Caret() {
	expr := `smc.clc.type == 4 and smc.foo`
	_, err := filter.Compile(expr)
	var se *filter.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se)
		fmt.Println(se.Caret(expr))
	}
	// Output:
	// column 23: unknown field "smc.foo"
	// smc.clc.type == 4 and smc.foo
	//                       ^
}
