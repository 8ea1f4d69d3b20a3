package decode

import (
	"errors"

	"github.com/gopacket/gopacket"
)

// Placeholders until the RoCE/LLC/CDC files land; that helper deletes this file.
var errTODO = errors.New("not implemented")

func decodeGRH(data []byte, p gopacket.PacketBuilder) error   { return errTODO }
func decodeBTH(data []byte, p gopacket.PacketBuilder) error   { return errTODO }
func decodeRETH(data []byte, p gopacket.PacketBuilder) error  { return errTODO }
func decodeAETH(data []byte, p gopacket.PacketBuilder) error  { return errTODO }
func decodeImmDt(data []byte, p gopacket.PacketBuilder) error { return errTODO }
func decodeIETH(data []byte, p gopacket.PacketBuilder) error  { return errTODO }
func decodeDETH(data []byte, p gopacket.PacketBuilder) error  { return errTODO }
func decodeLLC(data []byte, p gopacket.PacketBuilder) error   { return errTODO }
func decodeCDC(data []byte, p gopacket.PacketBuilder) error   { return errTODO }
