package probe

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math/rand/v2"
)

// digest is --digest on one connection: each message's payload after the
// header comes from a generator seeded by the connection's number, so no
// two messages' bytes repeat (a byte a reassembly puts in the wrong place
// changes the stream), and what the application wrote and read is counted
// and hashed (SHA-256): the truth a capture's reassembled streams are
// compared with (smcdump's -z smc,follow, lab/e2e_test.go).
type digest struct {
	rng        *rand.ChaCha8
	tx, rx     hash.Hash
	txN, rxN   uint64
	local, rem string
}

func newDigest(seed uint64, local, remote string) *digest {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return &digest{rng: rand.NewChaCha8(s), tx: sha256.New(), rx: sha256.New(), local: local, rem: remote}
}

// EnableDigest turns --digest on for this Pinger: payloads from the
// generator seeded by seed, the bytes written and read hashed. local and
// remote name the connection in DigestLine.
func (p *Pinger) EnableDigest(seed uint64, local, remote string) {
	p.dig = newDigest(seed, local, remote)
}

// fill writes the next payload after the header of a size-byte message.
func (d *digest) fill(b []byte) { d.rng.Read(b) }

func (d *digest) wrote(b []byte) { d.tx.Write(b); d.txN += uint64(len(b)) }
func (d *digest) read(b []byte)  { d.rx.Write(b); d.rxN += uint64(len(b)) }

// DigestLine says what the application wrote and read on the connection,
// client to server (c2s) and back (s2c); "" without --digest.
func (p *Pinger) DigestLine() string {
	d := p.dig
	if d == nil {
		return ""
	}
	return fmt.Sprintf("src=%s dst=%s c2s_bytes=%d c2s_sha256=%s s2c_bytes=%d s2c_sha256=%s",
		d.local, d.rem, d.txN, hex.EncodeToString(d.tx.Sum(nil)), d.rxN, hex.EncodeToString(d.rx.Sum(nil)))
}
