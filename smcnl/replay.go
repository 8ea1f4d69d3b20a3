package smcnl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/genetlink/genltest"
	"github.com/mdlayher/netlink"
)

// Recording files by command: the names `smclab record` writes (see
// testdata/README.md).
var recordingFiles = map[uint8]string{
	cmdGetSysInfo: "sysinfo", cmdDumpUEID: "ueid", cmdDumpSEID: "seid",
	cmdDumpHSLimitation: "hs_limitation", cmdGetLinkSMCR: "links", cmdGetLGRSMCD: "lgr_smcd",
	cmdGetDevSMCR: "dev_smcr", cmdGetDevSMCD: "dev_smcd", cmdGetStats: "stats",
	cmdGetFallbackStats: "fallback",
}

// Replay returns a Conn whose kernel is a recording directory (one .bin
// file of raw replies per command, as `smclab record` writes them): the
// same parsing runs as against a live kernel, so programs and tests can
// show a recorded host. A command without its file fails as on a kernel
// without that command (ErrNotSupported).
func Replay(dir string) (*Conn, error) {
	family := genetlink.Family{ID: 0x1d, Version: familyVersion, Name: familyName}
	fn := func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		name, ok := recordingFiles[greq.Header.Command]
		if !ok {
			return nil, fmt.Errorf("replay %s: command %d has no recording", dir, greq.Header.Command)
		}
		msgs, err := ReadRecording(filepath.Join(dir, name+".bin"))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("replay %s: no %s.bin: %w", dir, name, ErrNotSupported)
			}
			return nil, err
		}
		return genlReplies(dir, name, msgs)
	}
	return NewConn(genltest.Dial(genltest.ServeFamily(family, fn)))
}

// genlReplies turns one recording's messages into the generic netlink
// replies a genltest connection serves.
func genlReplies(dir, name string, msgs []netlink.Message) ([]genetlink.Message, error) {
	var out []genetlink.Message
	for _, m := range msgs {
		var g genetlink.Message
		if err := g.UnmarshalBinary(m.Data); err != nil {
			return nil, fmt.Errorf("replay %s: %s: %w", dir, name, err)
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return nil, io.EOF // genltest's empty dump
	}
	return out, nil
}

// ReadRecording reads one recording file into its messages.
func ReadRecording(path string) ([]netlink.Message, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	msgs, err := SplitMessages(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return msgs, nil
}

// ReplaySockets parses a recorded sock_diag dump (diag.bin of a recording
// directory) as DiagConn.Sockets would.
func ReplaySockets(dir string) ([]Socket, error) {
	msgs, err := ReadRecording(filepath.Join(dir, "diag.bin"))
	if err != nil {
		return nil, err
	}
	out := make([]Socket, 0, len(msgs))
	p := NewSocketParser(len(msgs))
	for i, m := range msgs {
		s, err := p.Parse(m.Data)
		if err != nil {
			return nil, fmt.Errorf("%s: reply %d: %w", filepath.Join(dir, "diag.bin"), i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// ReplayPNET returns a PNETConn whose kernel is the pnet.bin of a
// recording directory (SMC_PNETID_GET replies, as smclab record writes
// them). A directory without pnet.bin (recorded before the PNET table
// was) fails as a kernel without the family does (ErrNotSupported).
func ReplayPNET(dir string) (*PNETConn, error) {
	msgs, err := ReadRecording(filepath.Join(dir, "pnet.bin"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("replay %s: no pnet.bin: %w", dir, ErrNotSupported)
	}
	if err != nil {
		return nil, err
	}
	family := genetlink.Family{ID: 0x1e, Version: pnetFamilyVersion, Name: pnetFamilyName}
	fn := func(greq genetlink.Message, _ netlink.Message) ([]genetlink.Message, error) {
		if greq.Header.Command != pnetCmdGet {
			return nil, fmt.Errorf("replay %s: PNET command %d is not a dump", dir, greq.Header.Command)
		}
		return genlReplies(dir, "pnet", msgs)
	}
	return NewPNETConn(genltest.Dial(genltest.ServeFamily(family, fn)))
}
