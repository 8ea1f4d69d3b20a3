// Package tsharkdiff holds the differential test of smcdump against tshark:
// for every capture in testdata/reference, testdata/public and samples/ it
// runs both tools with -T fields and compares, frame by frame, the fields
// that both decode (BTH, RETH, AETH, DETH, ImmDt, IETH, CLC, CDC, the TCP
// SMC option, LLC message types).
//
// Where tshark 4.0 is known to be wrong or silent, the test lists the case
// as an explicit exception with the number of frames it is expected to
// excuse in each reference capture, so an exception cannot hide a real
// difference. Run it with
//
//	go test ./internal/tsharkdiff/ -v
//
// It skips when tshark is not installed (make test-deps installs it).
package tsharkdiff
