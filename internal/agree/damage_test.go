package agree

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/smcscope/smcscope/capture"
	"github.com/smcscope/smcscope/expert"
	"github.com/smcscope/smcscope/internal/testutil"
	"github.com/smcscope/smcscope/track"
	"github.com/smcscope/smcscope/track/rows"
)

// TestDamagedHeaderIsMissedFrame: a classic pcap whose record k has a
// header no record has (its captured length beyond any snap length, or
// three bytes off) tells everything the same capture without frame k
// tells, the frames after it numbered alike (the frame read past the
// damage takes k's number, as the next frame of the capture without it
// does): connections, link groups and every finding, but the one that
// names the damage (smc.capture.damaged, on the frame after it). The
// file's damage is a frame the capture missed, no more. Records picked
// at random (seeded) in every sample capture.
func TestDamagedHeaderIsMissedFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(34, 7))
	for _, path := range testutil.Samples(t) {
		clean, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		offs := testutil.RecordOffsets(clean)
		for range 8 {
			k := rng.IntN(len(offs) - 1) // not the last: read past, it ends the file as truncated
			for _, how := range []string{"beyond", "off"} {
				name := fmt.Sprintf("%s record %d %s", filepath.Base(path), k+1, how)
				damaged := bytes.Clone(clean)
				c := binary.LittleEndian.Uint32(damaged[offs[k]+8:])
				if how == "beyond" {
					c = 0x7fffff00
				} else {
					c += 3
				}
				binary.LittleEndian.PutUint32(damaged[offs[k]+8:], c)
				missed := append(bytes.Clone(clean[:offs[k]]), clean[offs[k+1]:]...)
				a, aErr := trackAll(t, damaged)
				b, bErr := trackAll(t, missed)
				if !errors.Is(aErr, capture.ErrCorruptRecord) || bErr != nil {
					t.Fatalf("%s: read past with %v, the capture without it with %v", name, aErr, bErr)
				}
				compareTracked(t, name, &a, &b)
			}
		}
	}
}

// trackAll runs the tracker smcdump's views use over a whole capture and
// returns its snapshot, and the file's error (Reader.Damage at its end).
func trackAll(t *testing.T, data []byte) (track.Snapshot, error) {
	t.Helper()
	r, err := capture.NewFileReader("x.pcap", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := track.New(track.Options{Unshared: true})
	for {
		f, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return track.Snapshot{}, err
		}
		tr.Feed(f)
	}
	end, _, _ := r.Recorded()
	tr.EndCapture(end)
	return tr.Snapshot(), r.Damage()
}

// compareTracked fails t where a, read past damage, and b, without the
// damaged frame, differ but for smc.capture.damaged.
func compareTracked(t *testing.T, name string, a, b *track.Snapshot) {
	t.Helper()
	if x, y := rows.ConnRows(a), rows.ConnRows(b); !reflect.DeepEqual(x, y) {
		t.Errorf("%s: connections\n%+v\nwant\n%+v", name, x, y)
	}
	if x, y := rows.LGRRows(a), rows.LGRRows(b); !reflect.DeepEqual(x, y) {
		t.Errorf("%s: link groups\n%+v\nwant\n%+v", name, x, y)
	}
	var fa []track.Finding
	damage := 0
	for _, f := range a.Findings() {
		if f.ID == expert.CaptureDamaged {
			damage++
			continue
		}
		fa = append(fa, f)
	}
	if fb := b.Findings(); damage != 1 || !reflect.DeepEqual(fa, fb) {
		t.Errorf("%s: %d smc.capture.damaged, want 1; the other findings\n%+v\nwant\n%+v", name, damage, fa, fb)
	}
}
