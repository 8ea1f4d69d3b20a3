package decode

import (
	"errors"

	"github.com/gopacket/gopacket"
)

// Placeholder until clc.go lands; the CLC helper deletes this file.
func decodeCLC(data []byte, p gopacket.PacketBuilder) error { return errors.New("CLC: not implemented") }
