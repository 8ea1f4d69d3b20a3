package decode

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// contractSamples collects the bytes every layer of this package decoded
// from the lab's captures and the published vectors: RoCE frames through
// gopacket (BTH, extension headers, LLC, CDC), CLC messages from the TCP
// streams, and the RoCEv1 GRH vector.
func contractSamples(t *testing.T) map[gopacket.LayerType][][]byte {
	t.Helper()
	out := map[gopacket.LayerType][][]byte{}
	seen := map[string]bool{}
	add := func(lt gopacket.LayerType, b []byte) {
		k := lt.String() + string(b)
		if len(b) == 0 || seen[k] || len(out[lt]) >= 200 {
			return
		}
		seen[k] = true
		out[lt] = append(out[lt], append([]byte(nil), b...))
	}
	// The public rxe captures add what SMC-R never sends: ImmDt (NCCL's
	// WRITE with Immediate) and DETH (UD SEND).
	for _, f := range []string{"samples/pingpong.pcap", "samples/multilink.pcap", "samples/teardown.pcap",
		"testdata/public/linlinw5_rdma_ib_tutorial/nccl__nccl_node0.pcap", "testdata/public/linlinw5_rdma_ib_tutorial/pingpong_ud.pcap"} {
		for _, data := range roceReadPcap(t, filepath.Join("..", f)) {
			p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.Default)
			if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok && u.DstPort == 4791 {
				add(LayerTypeBTH, u.Payload) // with its ICRC trailer
			}
			for _, l := range p.Layers() {
				switch l.LayerType() {
				case LayerTypeRETH, LayerTypeAETH, LayerTypeImmDt, LayerTypeIETH, LayerTypeDETH, LayerTypeLLC, LayerTypeCDC:
					add(l.LayerType(), append(append([]byte(nil), l.LayerContents()...), l.LayerPayload()...))
				}
			}
		}
	}
	for _, v := range []string{"accept_ipv4", "accept_ipv6", "confirm_ipv4", "confirm_ipv6", "decline_nosmcdev", "proposal_ipv4", "proposal_ipv6"} {
		add(LayerTypeCLC, clcReadVector(t, "clc_v1_smcr_"+v+".hex"))
	}
	for _, f := range []string{"reference/pingpong.pcap", "reference/decline-nordma.pcap", "reference/no-ueid.pcap",
		"../samples/multilink.pcap", "../samples/multiconn.pcap", "../samples/decline-ueid.pcap", "../samples/ipv6.pcap", "../samples/no-ueid.pcap"} {
		for _, b := range clcFrames(t, f) {
			if n, ok := CLCMessageLength(b); ok && n <= len(b) {
				add(LayerTypeCLC, b[:n])
			}
		}
	}
	add(LayerTypeGRH, roceV1Packet(t))
	for _, v := range []string{"llc_v1_add_link_req", "llc_v1_confirm_link_req", "llc_v1_confirm_rkey_req", "llc_v1_delete_link_req_all_orderly", "llc_v1_delete_rkey_req"} {
		add(LayerTypeLLC, roceVector(t, v))
	}
	add(LayerTypeCDC, roceVector(t, "cdc_v1_seq1_token3_prod13"))
	return out
}

func newLayer(lt gopacket.LayerType) gopacket.DecodingLayer {
	switch lt {
	case LayerTypeBTH:
		return &BTH{}
	case LayerTypeRETH:
		return &RETH{}
	case LayerTypeAETH:
		return &AETH{}
	case LayerTypeImmDt:
		return &ImmDt{}
	case LayerTypeIETH:
		return &IETH{}
	case LayerTypeDETH:
		return &DETH{}
	case LayerTypeLLC:
		return &LLC{}
	case LayerTypeCDC:
		return &CDC{}
	case LayerTypeCLC:
		return &CLC{}
	case LayerTypeGRH:
		return &GRH{}
	}
	return nil
}

// TestDecodeContract holds every layer to gopacket's decoding contract:
// a failed DecodeFromBytes leaves the layer as new (no half-filled struct,
// even after a successful decode of another message), and NextLayerType
// names a layer exactly when LayerPayload has bytes.
func TestDecodeContract(t *testing.T) {
	samples := contractSamples(t)
	// IETH is missing: no capture at hand has a SEND with Invalidate.
	for _, lt := range []gopacket.LayerType{LayerTypeBTH, LayerTypeRETH, LayerTypeAETH, LayerTypeImmDt, LayerTypeDETH, LayerTypeLLC, LayerTypeCDC, LayerTypeCLC, LayerTypeGRH} {
		if len(samples[lt]) == 0 {
			t.Errorf("%s: no sample in the captures", lt)
		}
	}
	for lt, msgs := range samples {
		t.Run(lt.String(), func(t *testing.T) {
			l := newLayer(lt)
			zero := reflect.New(reflect.TypeOf(l).Elem()).Interface()
			for _, b := range msgs {
				if err := l.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
					t.Fatalf("real message % x: %v", b, err)
				}
				pl := l.(interface{ LayerPayload() []byte }).LayerPayload()
				if (l.NextLayerType() == gopacket.LayerTypeZero) != (len(pl) == 0) {
					t.Errorf("NextLayerType %v with %d payload bytes after % x", l.NextLayerType(), len(pl), b)
				}
				for n := 0; n < len(b); n++ {
					// Decode the whole message first, so a reset is needed.
					if err := l.DecodeFromBytes(b, gopacket.NilDecodeFeedback); err != nil {
						t.Fatal(err)
					}
					if err := l.DecodeFromBytes(b[:n], gopacket.NilDecodeFeedback); err == nil {
						continue // a shorter message can be valid (a payload cut)
					}
					if !reflect.DeepEqual(l, zero) {
						t.Fatalf("after failing on %d of %d bytes the layer is not reset: %+v", n, len(b), l)
					}
				}
			}
		})
	}
}

// TestGRHNetworkLayer: gopacket finds the GRH as a RoCEv1 frame's network
// layer, with a flow between the GIDs.
func TestGRHNetworkLayer(t *testing.T) {
	eth := []byte{0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x89, 0x15}
	p := gopacket.NewPacket(append(eth, roceV1Packet(t)...), layers.LayerTypeEthernet, gopacket.Default)
	nl := p.NetworkLayer()
	if nl == nil || nl.LayerType() != LayerTypeGRH {
		t.Fatalf("network layer %v, want the GRH (layers %v)", nl, roceLayerTypes(p))
	}
	src, dst := nl.NetworkFlow().Endpoints()
	if src.String() != "fe80::9a03:9bff:feab:cdef" || dst.String() != "fe80::9a03:9bff:feab:cdef" {
		t.Errorf("flow %v -> %v", src, dst)
	}
}
