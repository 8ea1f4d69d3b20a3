//go:build !amd64

package decode

const (
	haveFold    = false
	haveFoldZ   = false
	haveDirectZ = false
)

func foldSum(p1, p2 []byte) uint32        { panic("decode: foldSum without PCLMULQDQ") }
func directSum(pkt []byte) (uint32, bool) { return 0, false }

func directSumX(pkt []byte) (uint32, bool) { return 0, false }

const directXMax = 0
