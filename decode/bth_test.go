package decode

import (
	"errors"
	"testing"

	"github.com/gopacket/gopacket"
)

// roceBTH decodes the BTH of a frame of a capture (path relative to
// testdata), failing the test on error.
func roceBTH(t testing.TB, path string, n int) (*BTH, []byte) {
	t.Helper()
	frames := roceReadPcap(t, "../testdata/"+path)
	_, raw, ok := roceSplit(frames[n-1])
	if !ok {
		t.Fatalf("%s frame %d is not RoCEv2", path, n)
	}
	b := &BTH{}
	if err := b.DecodeFromBytes(raw, &roceFeedback{}); err != nil {
		t.Fatalf("%s frame %d: %v", path, n, err)
	}
	return b, raw
}

// roceBTHFields is the comparable part of a BTH.
type roceBTHFields struct {
	Opcode             BTHOpcode
	SE, M              bool
	PadCount, TVer     uint8
	PKey               uint16
	FECN, BECN, AckReq bool
	DestQP, PSN, ICRC  uint32
}

func roceBTHView(b *BTH) roceBTHFields {
	return roceBTHFields{b.Opcode, b.SE, b.M, b.PadCount, b.TVer, b.PKey, b.FECN, b.BECN, b.AckReq, b.DestQP, b.PSN, b.ICRC}
}

// TestBTHVector is the hwipl BTH of an SMC-R v1 RC SEND Only (SOURCES.md:
// OpCode RC SEND Only, SE, M, Pad 0, TVer 0, PKey 65535, DestQP 263, A,
// PSN 8071316), in front of the CONFIRM RKEY and zero ICRC it came with.
func TestBTHVector(t *testing.T) {
	p := roceV1Packet(t)
	var b BTH
	if err := b.DecodeFromBytes(p[40:], &roceFeedback{}); err != nil {
		t.Fatal(err)
	}
	want := roceBTHFields{Opcode: OpSendOnly, SE: true, M: true, PadCount: 0, TVer: 0, PKey: 65535,
		DestQP: 263, AckReq: true, PSN: 8071316}
	if got := roceBTHView(&b); got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if len(b.Payload) != 44 || b.NextLayerType() != LayerTypeLLC {
		t.Errorf("payload %d bytes, next %v; want 44, SMC-LLC", len(b.Payload), b.NextLayerType())
	}
}

// TestBTHReference checks the frames of §11.14 field by field.
func TestBTHReference(t *testing.T) {
	cases := []struct {
		frame   int
		want    roceBTHFields
		next    gopacket.LayerType
		payload int
		summary string
	}{
		{22, roceBTHFields{Opcode: OpWriteOnly, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0xddf8a2, ICRC: 0x68403c8c},
			LayerTypeRETH, 16 + 24, "RoCE RC RDMA WRITE Only QP 0x000011 PSN 0xddf8a2"},
		{23, roceBTHFields{Opcode: OpSendOnly, SE: true, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0xddf8a3, ICRC: 0x29e05828},
			LayerTypeCDC, 44, "RoCE RC SEND Only QP 0x000011 PSN 0xddf8a3"},
		{24, roceBTHFields{Opcode: OpAcknowledge, PKey: 0xFFFF, DestQP: 0x11, PSN: 0xddf8a2, ICRC: 0x623aebd0},
			LayerTypeAETH, 4, "RoCE RC ACK QP 0x000011 PSN 0xddf8a2"},
		{14, roceBTHFields{Opcode: OpSendOnly, SE: true, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0xa6ac2e},
			LayerTypeLLC, 44, "RoCE RC SEND Only QP 0x000011 PSN 0xa6ac2e"},
	}
	for _, c := range cases {
		b, _ := roceBTH(t, "reference/pingpong.pcap", c.frame)
		got := roceBTHView(b)
		if c.want.ICRC == 0 {
			got.ICRC = 0
		}
		if got != c.want {
			t.Errorf("frame %d:\n got %+v\nwant %+v", c.frame, got, c.want)
		}
		if b.NextLayerType() != c.next || len(b.Payload) != c.payload || len(b.Contents) != 12 {
			t.Errorf("frame %d: next %v payload %d contents %d", c.frame, b.NextLayerType(), len(b.Payload), len(b.Contents))
		}
		if s := string(b.AppendSummary(nil)); s != c.summary {
			t.Errorf("frame %d: summary %q, want %q", c.frame, s, c.summary)
		}
	}
}

// TestBTHPublic checks the other transports and extension headers on the
// public rxe captures, against tshark 4.0's decode of the same frames.
func TestBTHPublic(t *testing.T) {
	t.Run("UD SEND Only + DETH", func(t *testing.T) {
		b, _ := roceBTH(t, "public/linlinw5_rdma_ib_tutorial/pingpong_ud.pcap", 12)
		if b.Opcode != 0x64 || b.Opcode.String() != "UD SEND Only" || b.DestQP != 0x22 || b.PSN != 7487594 {
			t.Errorf("BTH %+v (%v)", b, b.Opcode)
		}
		if b.NextLayerType() != LayerTypeDETH {
			t.Fatalf("next %v", b.NextLayerType())
		}
		var d DETH
		if err := d.DecodeFromBytes(b.Payload, &roceFeedback{}); err != nil {
			t.Fatal(err)
		}
		if d.QKey != 0x11111111 || d.SrcQP != 0x23 || len(d.Payload) != 1024 {
			t.Errorf("DETH %+v, payload %d", d, len(d.Payload))
		}
		if len(b.Data()) != 1024 {
			t.Errorf("Data() %d bytes", len(b.Data()))
		}
	})
	t.Run("READ Request + RETH, READ Response Only + AETH", func(t *testing.T) {
		b, _ := roceBTH(t, "public/linlinw5_rdma_ib_tutorial/rdma_read_lat.pcap", 23)
		var r RETH
		if b.Opcode.String() != "RC RDMA READ Request" || b.NextLayerType() != LayerTypeRETH {
			t.Fatalf("%v next %v", b.Opcode, b.NextLayerType())
		}
		if err := r.DecodeFromBytes(b.Payload, &roceFeedback{}); err != nil {
			t.Fatal(err)
		}
		if r.VA != 0x0000651357838000 || r.RKey != 0x1853 || r.DMALen != 64 || len(r.Payload) != 0 {
			t.Errorf("RETH %+v", r)
		}
		if r.NextLayerType() != gopacket.LayerTypeZero {
			t.Errorf("RETH next %v", r.NextLayerType())
		}
		b, _ = roceBTH(t, "public/linlinw5_rdma_ib_tutorial/rdma_read_lat.pcap", 24)
		var a AETH
		if b.Opcode != 0x10 || b.NextLayerType() != LayerTypeAETH {
			t.Fatalf("%v next %v", b.Opcode, b.NextLayerType())
		}
		if err := a.DecodeFromBytes(b.Payload, &roceFeedback{}); err != nil {
			t.Fatal(err)
		}
		if a.Syndrome != 31 || a.MSN != 1 || len(a.Payload) != 64 || a.NextLayerType() != gopacket.LayerTypePayload {
			t.Errorf("AETH %+v, payload %d", a, len(a.Payload))
		}
	})
	t.Run("WRITE Only with Immediate", func(t *testing.T) {
		// nccl_node0 frame 510: BTH + RETH (DMA len 0) + ImmDt 0, no data.
		b, _ := roceBTH(t, "public/linlinw5_rdma_ib_tutorial/nccl__nccl_node0.pcap", 510)
		if b.Opcode != OpWriteOnlyImm || b.NextLayerType() != LayerTypeRETH || len(b.Payload) != 20 {
			t.Fatalf("%v next %v payload %d", b.Opcode, b.NextLayerType(), len(b.Payload))
		}
		if imm, ok := b.Imm(); !ok || imm != 0 {
			t.Errorf("Imm() = %#x, %v", imm, ok)
		}
		if len(b.Data()) != 0 {
			t.Errorf("Data() %d bytes, want 0", len(b.Data()))
		}
		// tshark shows the ImmDt of this frame; so does roce.immdt.
		var r Record
		b.AppendFields(&r)
		if d, _ := LookupField("roce.immdt"); !r.Has(d.ID) {
			t.Error("roce.immdt missing")
		}
	})
	t.Run("WRITE Last with Immediate + ImmDt", func(t *testing.T) {
		b, _ := roceBTH(t, "public/linlinw5_rdma_ib_tutorial/nccl__nccl_node0.pcap", 644)
		if b.Opcode != OpWriteLastImm || b.NextLayerType() != LayerTypeImmDt {
			t.Fatalf("%v next %v", b.Opcode, b.NextLayerType())
		}
		var im ImmDt
		if err := im.DecodeFromBytes(b.Payload, &roceFeedback{}); err != nil {
			t.Fatal(err)
		}
		imm, ok := b.Imm()
		if im.Imm != 0x00200000 || !ok || imm != im.Imm {
			t.Errorf("ImmDt %#x, Imm() %#x %v; want 0x00200000", im.Imm, imm, ok)
		}
		// Here the ImmDt layer reports it, the BTH does not repeat it.
		var r Record
		b.AppendFields(&r)
		im.AppendFields(&r)
		n := 0
		for _, id := range r.IDs {
			if d, _ := LookupField("roce.immdt"); id == d.ID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("roce.immdt %d times", n)
		}
	})
	t.Run("SEND First/Middle/Last", func(t *testing.T) {
		for n, op := range map[int]BTHOpcode{24: OpSendFirst, 25: OpSendMiddle, 26: OpSendLast} {
			b, _ := roceBTH(t, "public/linlinw5_rdma_ib_tutorial/rdma_send_bw.pcap", n)
			if b.Opcode != op || b.NextLayerType() != gopacket.LayerTypePayload {
				t.Errorf("frame %d: %v next %v", n, b.Opcode, b.NextLayerType())
			}
		}
	})
}

func TestBTHOpcodeNames(t *testing.T) {
	for o, want := range map[BTHOpcode]string{
		0x00: "RC SEND First", 0x04: "RC SEND Only", 0x06: "RC RDMA WRITE First",
		0x0A: "RC RDMA WRITE Only", 0x11: "RC Acknowledge", 0x12: "RC Atomic Acknowledge",
		0x14: "RC FetchAdd", 0x17: "RC SEND Only with Invalidate", 0x24: "UC SEND Only",
		0x2B: "UC RDMA WRITE Only with Immediate", 0x51: "RD Acknowledge", 0x55: "RD RESYNC",
		0x64: "UD SEND Only", 0x65: "UD SEND Only with Immediate", 0x81: "CNP",
		0xA4: "XRC SEND Only", 0x15: "RC reserved(0x15)", 0x2C: "UC reserved(0x2c)",
		0x60: "UD reserved(0x60)", 0x80: "CNP reserved(0x80)", 0xC0: "vendor reserved(0xc0)",
	} {
		if got := o.String(); got != want {
			t.Errorf("%#02x: %q, want %q", uint8(o), got, want)
		}
	}
	valid := 0
	for o := range 256 {
		if BTHOpcode(o).Valid() {
			valid++
		}
	}
	// RC 21 + 2 invalidate + FLUSH + ATOMIC WRITE, UC 12, RD 22 (RESYNC),
	// UD 2, CNP 1, XRC 21 + 2 invalidate.
	if valid != 25+12+22+2+1+23 {
		t.Errorf("%d valid opcodes", valid)
	}
}

// TestBTHReservedOpcode rewrites the opcode of a real SEND: reserved codes
// are ErrReserved, vendor codes ErrUnknownType, both *Error at offset 0.
func TestBTHReservedOpcode(t *testing.T) {
	_, raw := roceBTH(t, "reference/pingpong.pcap", 23)
	for _, c := range []struct {
		op   byte
		want error
	}{{0x15, ErrReserved}, {0x18, ErrReserved}, {0x1F, ErrReserved}, {0x30, ErrReserved},
		{0x66, ErrReserved}, {0x80, ErrReserved}, {0xB8, ErrReserved}, {0xC0, ErrUnknownType}, {0xFF, ErrUnknownType}} {
		p := append([]byte(nil), raw...)
		p[0] = c.op
		var b BTH
		err := b.DecodeFromBytes(p, &roceFeedback{})
		var de *Error
		if !errors.Is(err, c.want) || !errors.As(err, &de) || de.Offset != 0 || de.Layer != "BTH" {
			t.Errorf("opcode %#02x: %v, want %v", c.op, err, c.want)
		}
	}
}

// TestBTHTruncated cuts every RoCE frame of pingpong.pcap and of the
// public captures at every length: no panic, an error with SetTruncated
// below the size the opcode needs, and success from there.
func TestBTHTruncated(t *testing.T) {
	seen := map[BTHOpcode]bool{}
	for _, path := range roceCaptures(t) {
		for i, frame := range roceReadPcap(t, path) {
			_, raw, ok := roceSplit(frame)
			if !ok || seen[BTHOpcode(raw[0])] {
				continue
			}
			seen[BTHOpcode(raw[0])] = true
			op := BTHOpcode(raw[0])
			min := bthLen + op.extLen() + icrcLen + int(raw[1]>>4&3)
			for n := range len(raw) {
				var b BTH
				fb := &roceFeedback{}
				err := b.DecodeFromBytes(raw[:n], fb)
				// A shorter packet of the same opcode is still a valid one
				// once header, extension headers and ICRC fit.
				if n < min && (err == nil || !fb.truncated || !errors.Is(err, ErrTruncated)) {
					t.Errorf("%s frame %d (%v) cut to %d: err %v truncated %v", path, i+1, op, n, err, fb.truncated)
				}
				if n >= min && err != nil {
					t.Errorf("%s frame %d (%v) cut to %d: %v", path, i+1, op, n, err)
				}
			}
		}
	}
	// Opcodes in the corpus: RC 0x00-0x0B, 0x0C, 0x0D-0x11, 0x12, 0x14, UC 0x24, UD 0x64.
	if len(seen) < 15 {
		t.Errorf("only %d opcodes seen", len(seen))
	}
}

// TestExtTruncated: each extension header rejects short input.
func TestExtTruncated(t *testing.T) {
	_, raw := roceBTH(t, "reference/pingpong.pcap", 22)
	ext := raw[12:]
	for _, c := range []struct {
		l    gopacket.DecodingLayer
		need int
	}{{&RETH{}, 16}, {&AETH{}, 4}, {&ImmDt{}, 4}, {&IETH{}, 4}, {&DETH{}, 8}} {
		for n := range c.need {
			fb := &roceFeedback{}
			if err := c.l.DecodeFromBytes(ext[:n], fb); !errors.Is(err, ErrTruncated) || !fb.truncated {
				t.Errorf("%T cut to %d: %v", c.l, n, err)
			}
		}
		if err := c.l.DecodeFromBytes(ext[:c.need], &roceFeedback{}); err != nil {
			t.Errorf("%T: %v", c.l, err)
		}
	}
}

func TestAETHSyndrome(t *testing.T) {
	for s, want := range map[AETHSyndrome]string{
		0x1F: "ACK", 0x00: "ACK", 0x25: "RNR NAK timer 5", 0x60: "NAK PSN sequence error",
		0x61: "NAK invalid request", 0x62: "NAK remote access error",
		0x63: "NAK remote operational error", 0x64: "NAK invalid RD request",
		0x65: "NAK reserved NAK code 5",
	} {
		if got := s.String(); got != want {
			t.Errorf("%#02x: %q, want %q", uint8(s), got, want)
		}
	}
	// A reserved syndrome type on a real ACK is an error, not a panic.
	_, raw := roceBTH(t, "reference/pingpong.pcap", 24)
	p := append([]byte(nil), raw[12:16]...)
	p[0] = 0x40
	var a AETH
	if err := a.DecodeFromBytes(p, &roceFeedback{}); !errors.Is(err, ErrReserved) {
		t.Errorf("syndrome 0x40: %v", err)
	}
}

// TestRoCESummaryAndFields checks the one-line summaries of §11.14 and the
// mandatory field names.
func TestRoCESummaryAndFields(t *testing.T) {
	rp := newRoceParser()
	line := func(n int) string {
		if err := rp.decode(roceFrame(t, "pingpong.pcap", n)); err != nil {
			t.Fatal(err)
		}
		s := rp.bth.AppendSummary(nil)
		if rp.has(LayerTypeRETH) {
			s = rp.reth.AppendSummary(s)
		}
		if rp.has(LayerTypeAETH) {
			s = rp.aeth.AppendSummary(s)
		}
		return string(s)
	}
	for n, want := range map[int]string{
		22: "RoCE RC RDMA WRITE Only QP 0x000011 PSN 0xddf8a2 VA 0xff30243b84730000 rkey 0x3a9 len 24",
		24: "RoCE RC ACK QP 0x000011 PSN 0xddf8a2 MSN 3",
	} {
		if got := line(n); got != want {
			t.Errorf("frame %d: %q\nwant %q", n, got, want)
		}
	}
	// A NAK, made from the real ACK with the NAK syndrome bits.
	if err := rp.decode(roceFrame(t, "pingpong.pcap", 24)); err != nil {
		t.Fatal(err)
	}
	nak := append([]byte(nil), rp.bth.Contents...)
	nak = append(nak, 0x60, 0, 0, 3, 0, 0, 0, 0)
	var b BTH
	if err := b.DecodeFromBytes(nak, &roceFeedback{}); err != nil {
		t.Fatal(err)
	}
	if got, want := string(b.AppendSummary(nil)), "RoCE RC NAK PSN sequence error QP 0x000011 PSN 0xddf8a2"; got != want {
		t.Errorf("NAK: %q, want %q", got, want)
	}

	var r Record
	if err := rp.decode(roceFrame(t, "pingpong.pcap", 22)); err != nil {
		t.Fatal(err)
	}
	rp.bth.AppendFields(&r)
	rp.reth.AppendFields(&r)
	want := map[string]uint64{
		"roce.bth.opcode": 0x0A, "roce.bth.dqpn": 0x11, "roce.bth.psn": 0xddf8a2, "roce.bth.ackreq": 1,
		"roce.bth.se": 0, "roce.bth.pkey": 0xFFFF, "roce.icrc": 0x68403c8c,
		"roce.reth.va": 0xff30243b84730000, "roce.reth.rkey": 0x3a9, "roce.reth.len": 24,
	}
	roceCheckFields(t, &r, want)
	r.Reset()
	if err := rp.decode(roceFrame(t, "pingpong.pcap", 24)); err != nil {
		t.Fatal(err)
	}
	rp.aeth.AppendFields(&r)
	roceCheckFields(t, &r, map[string]uint64{"roce.aeth.syndrome": 0x1F, "roce.aeth.msn": 3,
		"roce.aeth.type": 0, "roce.aeth.code": 31})
	if d, _ := LookupField("roce.bth.opcode"); d.Enum == nil || d.Enum(0x0A) != "RC RDMA WRITE Only" {
		t.Errorf("roce.bth.opcode enum")
	}
	if d, _ := LookupField("roce.aeth.syndrome"); d.Enum == nil || (Value{U: 0x1F}).Display(d) != "0x1f (ACK)" {
		t.Errorf("roce.aeth.syndrome display")
	}
}

// roceCheckFields compares the first value of each named field.
func roceCheckFields(t *testing.T, r *Record, want map[string]uint64) {
	t.Helper()
	for name, w := range want {
		d, ok := LookupField(name)
		if !ok {
			t.Errorf("field %s not registered", name)
			continue
		}
		v, ok := r.First(d.ID)
		if !ok {
			t.Errorf("field %s missing", name)
			continue
		}
		if v.U != w {
			t.Errorf("%s = %#x, want %#x", name, v.U, w)
		}
	}
}

func TestRoCEDoesNotMalloc(t *testing.T) {
	_, write := roceBTH(t, "reference/pingpong.pcap", 22)
	_, ack := roceBTH(t, "reference/pingpong.pcap", 24)
	fb := &roceFeedback{}
	var b BTH
	var r RETH
	var a AETH
	var d DETH
	var im ImmDt
	var ie IETH
	var rec Record
	var line []byte
	rec.IDs = make([]FieldID, 0, 64)
	rec.Vals = make([]Value, 0, 64)
	line = make([]byte, 0, 256)
	for name, f := range map[string]func(){
		"BTH":   func() { _ = b.DecodeFromBytes(write, fb) },
		"RETH":  func() { _ = r.DecodeFromBytes(write[12:], fb) },
		"AETH":  func() { _ = a.DecodeFromBytes(ack[12:], fb) },
		"DETH":  func() { _ = d.DecodeFromBytes(write[12:], fb) },
		"ImmDt": func() { _ = im.DecodeFromBytes(write[12:], fb) },
		"IETH":  func() { _ = ie.DecodeFromBytes(write[12:], fb) },
		"fields+summary": func() {
			rec.Reset()
			_ = b.DecodeFromBytes(write, fb)
			_ = r.DecodeFromBytes(b.Payload, fb)
			b.AppendFields(&rec)
			r.AppendFields(&rec)
			line = r.AppendSummary(b.AppendSummary(line[:0]))
		},
	} {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocations", name, n)
		}
	}
	p := newRoceParser()
	frame := roceFrame(t, "pingpong.pcap", 23)
	if n := testing.AllocsPerRun(200, func() { _ = p.decode(frame) }); n != 0 {
		t.Errorf("parser stack: %v allocations", n)
	}
}

func BenchmarkBTH(b *testing.B) {
	for _, c := range []struct {
		name  string
		frame int
	}{{"SEND_Only_CDC", 23}, {"WRITE_Only", 22}, {"ACK", 24}} {
		_, raw := roceBTH(b, "reference/pingpong.pcap", c.frame)
		b.Run(c.name, func(b *testing.B) {
			var h BTH
			fb := &roceFeedback{}
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				_ = h.DecodeFromBytes(raw, fb)
			}
		})
	}
}

func BenchmarkRETH(b *testing.B) {
	_, raw := roceBTH(b, "reference/pingpong.pcap", 22)
	var h RETH
	fb := &roceFeedback{}
	b.ReportAllocs()
	for b.Loop() {
		_ = h.DecodeFromBytes(raw[12:], fb)
	}
}

func BenchmarkAETH(b *testing.B) {
	_, raw := roceBTH(b, "reference/pingpong.pcap", 24)
	var h AETH
	fb := &roceFeedback{}
	b.ReportAllocs()
	for b.Loop() {
		_ = h.DecodeFromBytes(raw[12:], fb)
	}
}

// BenchmarkParserStack is the whole DecodingLayerParser stack, Ethernet
// to CDC, on a real CDC frame, and a pass over pingpong.pcap.
func BenchmarkParserStack(b *testing.B) {
	frame := roceFrame(b, "pingpong.pcap", 23)
	b.Run("CDC_frame", func(b *testing.B) {
		p := newRoceParser()
		b.ReportAllocs()
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			_ = p.decode(frame)
		}
	})
	frames := roceReadPcap(b, "../testdata/reference/pingpong.pcap")
	b.Run("pingpong.pcap", func(b *testing.B) {
		p := newRoceParser()
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range frames {
				_ = p.decode(f)
			}
		}
		b.ReportMetric(float64(len(frames)*b.N)/b.Elapsed().Seconds(), "frames/s")
	})
}

// TestBTHDecodeCutExtension cuts one packet of every opcode of the
// corpus (as a snap length does: the wire length still says the whole)
// at every length from its BTH to the end of its extension headers: an
// RC or UC packet keeps its BTH, marked ExtCut, with nothing after it and
// the data's length on the wire; any other transport's packet, or one cut
// inside the BTH, is truncated as before.
func TestBTHDecodeCutExtension(t *testing.T) {
	seen := map[BTHOpcode]bool{}
	for _, path := range roceCaptures(t) {
		for _, frame := range roceReadPcap(t, path) {
			_, raw, ok := roceSplit(frame)
			if !ok || len(raw) == 0 || seen[BTHOpcode(raw[0])] || !BTHOpcode(raw[0]).Valid() {
				continue
			}
			op := BTHOpcode(raw[0])
			seen[op] = true
			var whole BTH
			if err := whole.DecodeFromBytes(raw, &roceFeedback{}); err != nil {
				continue
			}
			tr := op.Transport()
			for n := range bthLen + op.extLen() {
				var b BTH
				fb := &roceFeedback{}
				err := b.DecodeCut(raw[:n:n], len(raw), fb)
				switch {
				case n < bthLen || tr != TransportRC && tr != TransportUC:
					if !errors.Is(err, ErrTruncated) || !fb.truncated {
						t.Errorf("%v cut to %d: %v, want truncated", op, n, err)
					}
				case err != nil:
					t.Errorf("%v cut to %d: %v, want its BTH", op, n, err)
				default:
					if !b.ExtCut || !b.TrailerCut || b.PSN != whole.PSN || b.DestQP != whole.DestQP || b.Opcode != op {
						t.Errorf("%v cut to %d: ExtCut %v TrailerCut %v PSN %#x QP %#x, want the whole packet's PSN %#x QP %#x",
							op, n, b.ExtCut, b.TrailerCut, b.PSN, b.DestQP, whole.PSN, whole.DestQP)
					}
					if b.NextLayerType() != gopacket.LayerTypeZero || b.Data() != nil || len(b.Payload) != 0 {
						t.Errorf("%v cut to %d: next %v, data %d bytes, payload %d: want nothing after the BTH",
							op, n, b.NextLayerType(), len(b.Data()), len(b.Payload))
					}
					if got, want := b.DataWireLen(), len(whole.Data()); got != want {
						t.Errorf("%v cut to %d: data of %d bytes on the wire, want %d", op, n, got, want)
					}
				}
			}
		}
	}
	if !seen[OpWriteFirst] || !seen[OpAcknowledge] {
		t.Errorf("opcodes seen %v: want a WRITE First and an ACK among them", seen)
	}
}
