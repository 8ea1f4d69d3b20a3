package capture

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/smcscope/smcscope/decode"
)

// layerError is the frame error of gopacket's layer typ refusing data
// with err, told as the SMC layers tell theirs (decode.Error: layer,
// offset, field, what is wrong): gopacket's errors name neither offset nor
// field, and its words are its own (never parsed here). What is wrong is
// read from the header's bytes, by the checks gopacket's decoders make, in
// their order; an error those bytes do not explain (a tunnel header's,
// say) keeps gopacket's words behind the layer's name, at offset 0. The
// RoCE and SMC layers' errors are decode.Errors already, returned as they
// are.
func layerError(typ gopacket.LayerType, data []byte, err error) error {
	var de *decode.Error
	if errors.As(err, &de) {
		return err
	}
	var out error
	switch typ {
	case layers.LayerTypeEthernet:
		out = short("Ethernet", data, 14)
	case layers.LayerTypeDot1Q:
		out = short("802.1Q", data, 4)
	case layers.LayerTypeLinuxSLL:
		out = short("Linux cooked", data, 16)
	case layers.LayerTypeLinuxSLL2:
		out = short("Linux cooked v2", data, 20)
	case layers.LayerTypeIPv4:
		out = ipv4HeaderError(data)
	case layers.LayerTypeIPv6:
		out = short("IPv6", data, 40)
		if out == nil && binary.BigEndian.Uint16(data[4:6]) == 0 && data[6] != 0 {
			out = decode.BadLength("IPv6", "payload_length", 4,
				"0 (a jumbogram) where the next header is "+strconv.Itoa(int(data[6]))+", not hop-by-hop (RFC 2675)")
		}
	case layers.LayerTypeUDP:
		out = short("UDP", data, 8)
		if out == nil {
			if n := int(binary.BigEndian.Uint16(data[4:6])); n > 0 && n < 8 {
				out = decode.BadLength("UDP", "length", 4, strconv.Itoa(n)+" bytes, under its own header's 8")
			}
		}
	case layers.LayerTypeTCP:
		out = short("TCP", data, 20)
		if out == nil {
			switch off := int(data[12] >> 4); {
			case off < 5:
				out = decode.BadLength("TCP", "data_offset", 12,
					"data offset "+strconv.Itoa(off)+" ("+strconv.Itoa(off*4)+" bytes), under the minimum 5 (20 bytes)")
			case off*4 > len(data):
				out = decode.Truncated("TCP", "data_offset", 12, off*4, len(data))
			}
		}
	}
	if out != nil {
		return out
	}
	return &decode.Error{Layer: typ.String(), Err: err}
}

// short is the error of a header of need bytes of which data holds fewer;
// nil when it holds them.
func short(layer string, data []byte, need int) error {
	if len(data) >= need {
		return nil
	}
	return decode.Truncated(layer, "", 0, need, len(data))
}

// ipv4HeaderError is what is wrong with IPv4 header data, as
// layers.IPv4's decoder checks it: its length, total length, header
// length (IHL) and options (RFC 791 3.1); nil when none is.
func ipv4HeaderError(data []byte) error {
	if e := short("IPv4", data, 20); e != nil {
		return e
	}
	ihl := int(data[0] & 0x0f)
	total := int(binary.BigEndian.Uint16(data[2:4]))
	if total == 0 {
		total = len(data) // a segmentation offload's: the frame's length
	}
	switch {
	case total < 20:
		return decode.BadLength("IPv4", "total_length", 2, strconv.Itoa(total)+" bytes, under the header's 20")
	case ihl < 5:
		return decode.BadLength("IPv4", "ihl", 0, "IHL "+strconv.Itoa(ihl)+" ("+strconv.Itoa(ihl*4)+" bytes), under the minimum 5 (20 bytes)")
	case ihl*4 > total:
		return decode.BadLength("IPv4", "ihl", 0, strconv.Itoa(ihl*4)+" bytes of header, past the total length's "+strconv.Itoa(total))
	case ihl*4 > len(data):
		return decode.Truncated("IPv4", "ihl", 0, ihl*4, len(data))
	}
	for o := 20; o < ihl*4; {
		switch data[o] {
		case 0: // end of the option list
			return nil
		case 1: // no operation
			o++
			continue
		}
		typ := "option type " + strconv.Itoa(int(data[o]))
		if o+1 >= ihl*4 {
			return &decode.Error{Layer: "IPv4", Field: "option length", Offset: o + 1, Err: decode.ErrTruncated,
				Detail: typ + " at offset " + strconv.Itoa(o) + " ends the header before its length"}
		}
		switch n := int(data[o+1]); {
		case n < 2:
			return decode.BadLength("IPv4", "option length", o+1, typ+" of length "+strconv.Itoa(n)+", under its type and length's 2 bytes")
		case o+n > ihl*4:
			return decode.BadLength("IPv4", "option length", o+1, typ+" of length "+strconv.Itoa(n)+", past the header's end at "+strconv.Itoa(ihl*4))
		default:
			o += n
		}
	}
	return nil
}
