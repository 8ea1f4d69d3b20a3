package capture

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestRecordedStatistics: a pcapng file's interface statistics block says
// when the capture ended (after its last frame) and how many packets the
// interface dropped; Recorded reports both once the file is read.
func TestRecordedStatistics(t *testing.T) {
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	frame := make([]byte, 60)
	if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: t0, CaptureLength: 60, Length: 60}, frame); err != nil {
		t.Fatal(err)
	}
	end := t0.Add(7 * time.Second)
	if err := w.WriteInterfaceStats(0, pcapgo.NgInterfaceStatistics{LastUpdate: end, StartTime: t0, EndTime: end, PacketsReceived: 10, PacketsDropped: 3}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	r, err := NewFileReader("isb.pcapng", &buf)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := r.Next(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	got, dropped, ok := r.Recorded()
	if !got.Equal(end) || dropped != 3 || !ok {
		t.Errorf("Recorded: end %v, dropped %d, %v; want %v, 3, true", got, dropped, ok, end)
	}
}
