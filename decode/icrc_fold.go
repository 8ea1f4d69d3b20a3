package decode

// The ICRC by carry-less multiplication, every 16-byte chunk of the
// message multiplied at once by the constants of its distance from the
// last one (Intel, "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction", 2009, §4: the fold by any distance, not one
// chunk after another). hash/crc32 folds a message sequentially, each fold
// waiting for the one before, and reaches its code through a function
// variable behind a sync.Once: for the 64 to 128 bytes of most RoCE packets
// 14-19 ns a packet, the most of any one function in a tracked run.

// foldMax is the longest message foldSum takes, in 16-byte chunks: a
// packet of RoCE's largest MTU (4096 bytes of payload) with IPv6, UDP,
// BTH, RETH and the LRH stand-in, rounded up.
const foldMax = 272

// foldRev holds, at index foldMax-1-d, the multipliers that move a chunk
// d chunks before a message's last one there: x^(128d+32) and
// x^(128d-32) modulo the CRC-32 polynomial, bit-reflected (shifted up by
// one) as the chunk is; for the last chunk itself x^32 and x^-32, which
// leave it as it is, so that every chunk goes through the same multiply. Reversed, so that
// a message's chunks and their multipliers are read in the same
// direction; three zero entries after the last for the lanes of a first
// load past the end of a message shorter than four chunks. Written by
// TestFoldTable with -update-fold: icrc_fold_table.go.

// The reduction of the last 128 bits to the CRC (the paper's §4.2 and
// its Barrett reduction) takes x^96 and x^64 modulo P, floor(x^64 / P)
// and P, bit-reflected as the constants above: the assembly carries them
// (foldRed in icrc_amd64.s), and every test of a sum checks them.
