#include "textflag.h"

// func cbcDecryptAESNI(nr int, rk *byte, iv *[16]byte, buf []byte)
TEXT ·cbcDecryptAESNI(SB), NOSPLIT, $0-48
	MOVQ   nr+0(FP), CX
	MOVQ   rk+8(FP), AX
	MOVQ   iv+16(FP), DX
	MOVQ   buf_base+24(FP), SI
	MOVQ   buf_len+32(FP), BX
	MOVUPS (DX), X15            // the previous ciphertext block
	MOVQ   CX, R10
	SHLQ   $4, R10              // offset of the last round key
	MOVUPS (AX)(R10*1), X14     // last round key: the first applied

block:
	CMPQ   BX, $16
	JB     done
	MOVUPS (SI), X1             // state
	MOVO   X1, X2               // this block's ciphertext, for the next
	PXOR   X14, X1
	MOVQ   R10, R8

round:
	SUBQ   $16, R8
	JZ     last
	MOVUPS (AX)(R8*1), X3
	AESIMC X3, X3               // equivalent inverse cipher's round key
	AESDEC X3, X1
	JMP    round

last:
	MOVUPS     (AX), X3
	AESDECLAST X3, X1
	PXOR       X15, X1
	MOVUPS     X1, (SI)
	MOVO       X2, X15
	ADDQ       $16, SI
	SUBQ       $16, BX
	JMP        block

done:
	PXOR X3, X3                 // no key material left behind
	PXOR X14, X14
	RET
