package decode

import (
	"fmt"

	"github.com/gopacket/gopacket"
)

// testFrameDeclineNoRDMA is the server's CLC Decline of
// testdata/reference/decline-nordma.pcap frame 10 (TCP payload, 44 bytes):
// an SMC server without RoCE device declines an SMC-Rv2 Proposal.
//
//	CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device ...
//	0000  e2 d4 c3 d9 04 00 2c 20 00 00 00 00 00 00 00 00
//	0010  03 03 00 02 20 00 00 00 00 00 00 00 00 00 00 00
//	0020  00 00 00 00 00 00 00 00 e2 d4 c3 d9
var testFrameDeclineNoRDMA = []byte{
	0xe2, 0xd4, 0xc3, 0xd9, 0x04, 0x00, 0x2c, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x03, 0x03, 0x00, 0x02, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe2, 0xd4, 0xc3, 0xd9,
}

func ExampleCLC_decline() {
	var c CLC
	if err := c.DecodeFromBytes(testFrameDeclineNoRDMA, gopacket.NilDecodeFeedback); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.String())
	fmt.Println(c.Decline.Diagnosis, "-", c.Decline.Diagnosis.Meaning())
	// Output:
	// CLC Decline SMC-Rv2 0x03030002 NOSMCRDEV: no usable SMC-R (RoCE) device (sender peer ID 0: no RoCE device, Linux)
	// NOSMCRDEV - no usable SMC-R (RoCE) device
}

func ExampleCLCMessageLength() {
	// A TCP stream holding a Decline followed by fallback application data.
	stream := append(append([]byte{}, testFrameDeclineNoRDMA...), "hello"...)
	n, ok := CLCMessageLength(stream)
	fmt.Println(n, ok, string(stream[n:]))
	// Output: 44 true hello
}
