#include "go_asm.h"
#include "textflag.h"

// The reduction's constants (icrc_fold.go): x^96 and x^64 modulo P,
// floor(x^64 / P) and P, bit-reflected.
DATA foldRed<>+0(SB)/8, $0x0ccaa009e
DATA foldRed<>+8(SB)/8, $0x163cd6124
DATA foldRed<>+16(SB)/8, $0x1f7011641
DATA foldRed<>+24(SB)/8, $0x1db710641
GLOBL foldRed<>(SB), RODATA, $32

// FOLD4 multiplies the four chunks at src by the multipliers at DX
// and adds the products to Z1; FOLD4_MASKED loads only the quadwords of
// mask k (the others zero).
#define FOLD4(src) \
	VMOVDQU64 src, Z2 \
	VMOVDQU64 (DX), Z3 \
	VPCLMULQDQ $0x00, Z3, Z2, Z4 \
	VPCLMULQDQ $0x11, Z3, Z2, Z5 \
	VPTERNLOGD $0x96, Z4, Z5, Z1

#define FOLD4_MASKED(src, k) \
	VMOVDQU64.Z src, k, Z2 \
	VMOVDQU64.Z (DX), k, Z3 \
	VPCLMULQDQ $0x00, Z3, Z2, Z4 \
	VPCLMULQDQ $0x11, Z3, Z2, Z5 \
	VPTERNLOGD $0x96, Z4, Z5, Z1

// LANES_Z adds the four 128-bit lanes of Z1 into X1.
#define LANES_Z \
	VEXTRACTI32X4 $1, Z1, X2 \
	VEXTRACTI32X4 $2, Z1, X3 \
	VEXTRACTI32X4 $3, Z1, X4 \
	VPXOR  X2, X1, X1 \
	VPXOR  X3, X4, X4 \
	VPXOR  X4, X1, X1

// REDUCE_VEX reduces the 128 bits of X1 to the CRC register in AX: by x^96
// to 96 bits, by x^64 to 64, then Barrett's reduction (the quotient by
// floor(x^64 / P), times P). VEX encoded, as the AVX-512 code around it.
#define REDUCE_VEX \
	VPCMPEQB X5, X5, X5 \
	VPSRLQ $32, X5, X5 \
	VMOVQ  foldRed<>+0(SB), X0 \
	VPCLMULQDQ $0x00, X0, X1, X2 \
	VPSRLDQ $8, X1, X1 \
	VPXOR  X2, X1, X1 \
	VPSRLDQ $4, X1, X2 \
	VPAND  X5, X1, X1 \
	VMOVQ  foldRed<>+8(SB), X0 \
	VPCLMULQDQ $0x00, X0, X1, X1 \
	VPXOR  X2, X1, X1 \
	VPAND  X5, X1, X3 \
	VMOVQ  foldRed<>+16(SB), X0 \
	VPCLMULQDQ $0x00, X0, X3, X3 \
	VPAND  X5, X3, X3 \
	VMOVQ  foldRed<>+24(SB), X0 \
	VPCLMULQDQ $0x00, X0, X3, X3 \
	VPXOR  X1, X3, X3 \
	VPEXTRD $1, X3, AX

// REDUCE_SSE is REDUCE_VEX in SSE encodings, for the SSE folds.
#define REDUCE_SSE \
	PCMPEQB X5, X5 \
	PSRLQ   $32, X5 \
	MOVQ   foldRed<>+0(SB), X0 \
	MOVOA  X1, X2 \
	PCLMULQDQ $0x00, X0, X2 \
	PSRLDQ $8, X1 \
	PXOR   X2, X1 \
	MOVOA  X1, X2 \
	PSRLDQ $4, X2 \
	PAND   X5, X1 \
	MOVQ   foldRed<>+8(SB), X0 \
	PCLMULQDQ $0x00, X0, X1 \
	PXOR   X2, X1 \
	MOVOA  X1, X2 \
	PAND   X5, X1 \
	MOVQ   foldRed<>+16(SB), X0 \
	PCLMULQDQ $0x00, X0, X1 \
	PAND   X5, X1 \
	MOVQ   foldRed<>+24(SB), X0 \
	PCLMULQDQ $0x00, X0, X1 \
	PXOR   X2, X1 \
	PEXTRD $1, X1, AX

// DIRECT_START loads icrcDirectZ's and icrcDirectX's packet: SI its
// start, AX the padded message's length, BX its pad, DX the first
// chunk's multipliers (foldRev[foldMax-chunks]), R9 directMasks[pad].
#define DIRECT_START \
	MOVQ   pkt_base+0(FP), SI \
	MOVQ   pkt_len+8(FP), CX \
	LEAQ   4(CX), AX \
	MOVQ   AX, BX \
	NEGQ   BX \
	ANDQ   $15, BX \
	ADDQ   BX, AX \
	LEAQ   ·foldRev+(const_foldMax*16)(SB), DX \
	SUBQ   AX, DX \
	MOVQ   BX, R9 \
	SHLQ   $6, R9 \
	LEAQ   ·directMasks(SB), R10 \
	ADDQ   R10, R9

// FOLD1 multiplies the chunk in X2 by the multipliers at DX, adds the
// products to X1 (low) and X6 (high) and moves DX to the next chunk's.
#define FOLD1 \
	MOVOU  (DX), X3 \
	MOVOA  X2, X4 \
	PCLMULQDQ $0x00, X3, X2 \
	PCLMULQDQ $0x11, X3, X4 \
	PXOR   X2, X1 \
	PXOR   X4, X6 \
	ADDQ   $16, DX

// PIECES loads the two pieces of icrcFoldX's and icrcFoldZ's message:
// p1 at SI with CX chunks, p2 at R8 with R9, and R10 the pieces to go.
#define PIECES \
	MOVQ   p1_base+0(FP), SI \
	MOVQ   p1_len+8(FP), CX \
	MOVQ   p2_base+24(FP), R8 \
	MOVQ   p2_len+32(FP), R9 \
	SHRQ   $4, CX \
	SHRQ   $4, R9 \
	MOVQ   $2, R10

// func icrcFoldX(p1, p2 []byte, k *[2]uint64) uint32
// func icrcFoldZ(p1, p2 []byte, k *[2]uint64) uint32
//
// The message is p1 then p2, each a multiple of 16 bytes long. Each
// 16-byte chunk is multiplied by the constants of its distance d from the
// last (k for the first chunk, k+16 for the next, ...: x^(128d+32) for its
// low quadword, x^(128d-32) for its high one; the last's, d = 0, leave it
// as it is) and the products summed: they do not wait for each other. The sum,
// congruent to the message's remainder, is reduced to 32 bits: 128 -> 96
// bits by x^96, 96 -> 64 by x^64, then Barrett's reduction by floor(x^64
// / P) and P. The result is the CRC register from a zero register.

// icrcFoldX: SSE4.1 and PCLMULQDQ, a chunk at a time.
TEXT ·icrcFoldX(SB), NOSPLIT, $0-60
	MOVQ   k+48(FP), DX
	PXOR   X1, X1                // the low products' sum
	PXOR   X6, X6                // the high products'
	PIECES
xseg:
	TESTQ  CX, CX
	JZ     xnext
xloop:
	MOVOU  (SI), X2
	FOLD1
	ADDQ   $16, SI
	DECQ   CX
	JNZ    xloop
xnext:
	DECQ   R10
	JZ     xlast
	MOVQ   R8, SI
	MOVQ   R9, CX
	JMP    xseg
xlast:
	PXOR   X6, X1

	REDUCE_SSE
	MOVL   AX, ret+56(FP)
	RET

// icrcFoldZ: AVX-512 with VPCLMULQDQ, four chunks at a time, the one to
// three left of each piece in one masked load.
TEXT ·icrcFoldZ(SB), NOSPLIT, $0-60
	MOVQ   k+48(FP), DX
	VPXORQ Z1, Z1, Z1            // the products' sum
	PIECES
zseg:
	CMPQ   CX, $4
	JB     zrest
	FOLD4((SI))
	ADDQ   $64, SI
	ADDQ   $64, DX
	SUBQ   $4, CX
	JMP    zseg
zrest:
	TESTQ  CX, CX
	JZ     znext
	// 1-3 chunks: two quadwords each, the other lanes loaded as zeros.
	MOVQ   $1, AX
	SHLQ   CX, AX
	SHLQ   CX, AX
	DECQ   AX
	KMOVW  AX, K1
	FOLD4_MASKED((SI), K1)
	SHLQ   $4, CX
	ADDQ   CX, DX
znext:
	DECQ   R10
	JZ     zlast
	MOVQ   R8, SI
	MOVQ   R9, CX
	JMP    zseg
zlast:
	LANES_Z
	REDUCE_VEX
	VZEROUPPER
	MOVL   AX, ret+56(FP)
	RET

// func icrcDirectZ(pkt []byte) uint32
//
// The ICRC message of a RoCEv2 packet over IPv4 without options read in
// place: the four bytes of ones left of the LRH stand-in, then pkt (the
// packet from the IP header to the ICRC), with the fields a router may
// change set to ones. Zeros in front make it a multiple of 16 bytes long
// (pad of them); the first four chunks are loaded under a byte mask that
// leaves out what lies before pkt (never read: a masked load does not
// touch it) and past its end, and the ones are ORed in from masks (the
// pattern for this pad: directMasks[pad]). Nothing is copied: a copy's narrow stores read
// back by wide loads cost more than the CRC (the CPU cannot forward
// them). The multipliers of the first chunk's distance d are those of
// foldRev[foldMax-1-d]; the last chunk takes those of distance 0, so every
// chunk is multiplied alike.
TEXT ·icrcDirectZ(SB), NOSPLIT, $0-28
	DIRECT_START
	LEAQ   4(BX), R11            // where pkt starts in the padded message
	MOVQ   SI, R8
	SUBQ   R11, R8               // where the padded message would start
	MOVQ   $-1, R12
	SHLXQ  R11, R12, R12         // bytes from pkt's start
	CMPQ   AX, $64
	JAE    dwhole
	BZHIQ  AX, R12, R12          // and before the message's end (BZHI reads 8 bits of AX)
dwhole:
	KMOVQ  R12, K1
	VMOVDQU8.Z (R8), K1, Z2
	VPORQ  (R9), Z2, Z2
	VMOVDQU64 (DX), Z3
	VPCLMULQDQ $0x00, Z3, Z2, Z4
	VPCLMULQDQ $0x11, Z3, Z2, Z5
	VPXORQ Z4, Z5, Z1
	SHRQ   $4, AX
	SUBQ   $4, AX                // chunks after the first four
	JLE    dfold
	ADDQ   $64, R8
	ADDQ   $64, DX
dloop:
	CMPQ   AX, $4
	JB     drest
	FOLD4((R8))
	ADDQ   $64, R8
	ADDQ   $64, DX
	SUBQ   $4, AX
	JMP    dloop
drest:
	TESTQ  AX, AX
	JZ     dfold
	MOVQ   AX, CX
	MOVQ   $1, R12
	SHLQ   CX, R12
	SHLQ   CX, R12
	DECQ   R12
	KMOVW  R12, K2
	FOLD4_MASKED((R8), K2)
dfold:
	LANES_Z

	REDUCE_VEX
	VZEROUPPER
	MOVL   AX, ret+24(FP)
	RET

// func icrcDirectX(pkt []byte) uint32
//
// icrcDirectZ with SSE4.1 and PCLMULQDQ, a chunk at a time: the padded
// message's chunks are loaded in place, the first from up to 19 bytes
// before pkt (directSumX checks that they lie on pkt's page), whose bytes
// before the ones are cleared (directKeep[pad]); the first four chunks
// take the ones of directMasks[pad]. The last chunk ends with pkt, so
// nothing after it is read.
TEXT ·icrcDirectX(SB), NOSPLIT, $0-28
	DIRECT_START
	SHRQ   $4, AX                // chunks
	MOVQ   BX, R11
	SHLQ   $4, R11
	LEAQ   ·directKeep(SB), R10
	ADDQ   R10, R11              // directKeep[pad]
	LEAQ   4(BX), R12
	MOVQ   SI, R8
	SUBQ   R12, R8               // where the padded message starts
	PXOR   X1, X1                // the low products' sum
	PXOR   X6, X6                // the high products'
	MOVOU  (R8), X2
	MOVOU  (R11), X7
	PAND   X7, X2
	MOVQ   $4, R12               // chunks that take ones
xdmask:
	MOVOU  (R9), X7
	POR    X7, X2
	ADDQ   $16, R9
	DECQ   R12
xdfold:
	FOLD1
	ADDQ   $16, R8
	DECQ   AX
	JZ     xdlast
	MOVOU  (R8), X2
	TESTQ  R12, R12
	JNZ    xdmask
	JMP    xdfold
xdlast:
	PXOR   X6, X1

	REDUCE_SSE
	MOVL   AX, ret+24(FP)
	RET
