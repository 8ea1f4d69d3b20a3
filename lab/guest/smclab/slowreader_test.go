package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func header(size uint32, noReply bool) []byte {
	if noReply {
		size |= 1 << 31
	}
	return binary.BigEndian.AppendUint32(nil, size)
}

// TestSlowReaderStream: smcping --bw's stream (no-reply messages, then a
// 4-byte ping) read in pieces of any size gives one echo, the ping's, byte
// for byte, whatever the pieces.
func TestSlowReaderStream(t *testing.T) {
	var stream []byte
	for range 3 {
		stream = append(stream, header(1000, true)...)
		stream = append(stream, bytes.Repeat([]byte{0xab}, 996)...)
	}
	ping := append(header(12, false), []byte("12345678")...)
	stream = append(stream, ping...)
	for _, piece := range []int{1, 3, 4, 7, 996, 1000, 4096} {
		var s smcpingStream
		var got [][]byte
		for b := stream; len(b) > 0; {
			k := min(piece, len(b))
			r, err := s.feed(b[:k])
			if err != nil {
				t.Fatalf("piece %d: %v", piece, err)
			}
			got = append(got, r...)
			b = b[k:]
		}
		if len(got) != 1 || !bytes.Equal(got[0], ping) || s.messages != 4 {
			t.Errorf("piece %d: replies %q after %d messages, want the ping once after 4", piece, got, s.messages)
		}
	}
	var s smcpingStream
	if _, err := s.feed(header(2, false)); err == nil {
		t.Error("a header of 2 bytes was taken")
	}
}

func TestSlowReaderUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-port"}, {"-port", "0"}, {"-chunk", "-1"}, {"-pause", "x"}, {"-wait", "0s"}, {"-nope", "1"},
	} {
		_, err := parseSlowReader(args)
		var ue usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseSlowReader(%q) = %v, want a usage error", args, err)
		}
	}
	r, err := parseSlowReader([]string{"-port", "5004", "-chunk", "8192", "-pause", "750ms"})
	if err != nil || r.port != 5004 || r.chunk != 8192 || r.pause.Milliseconds() != 750 {
		t.Errorf("parseSlowReader = %+v, %v", r, err)
	}
}
