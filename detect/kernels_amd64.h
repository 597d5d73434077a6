// Constants shared by the detector's AVX-512 and AVX2 kernels. Each
// assembly file that needs them includes this header; the symbols are
// file-local (<>), so every such file holds its own copy.

// Sign masks: negate the real (even) or the imaginary (odd) float64 lanes.
DATA negRe<>+0(SB)/8, $0x8000000000000000
DATA negRe<>+8(SB)/8, $0
DATA negRe<>+16(SB)/8, $0x8000000000000000
DATA negRe<>+24(SB)/8, $0
DATA negRe<>+32(SB)/8, $0x8000000000000000
DATA negRe<>+40(SB)/8, $0
DATA negRe<>+48(SB)/8, $0x8000000000000000
DATA negRe<>+56(SB)/8, $0
GLOBL negRe<>(SB), RODATA|NOPTR, $64

DATA negIm<>+0(SB)/8, $0
DATA negIm<>+8(SB)/8, $0x8000000000000000
DATA negIm<>+16(SB)/8, $0
DATA negIm<>+24(SB)/8, $0x8000000000000000
DATA negIm<>+32(SB)/8, $0
DATA negIm<>+40(SB)/8, $0x8000000000000000
DATA negIm<>+48(SB)/8, $0
DATA negIm<>+56(SB)/8, $0x8000000000000000
GLOBL negIm<>(SB), RODATA|NOPTR, $64

DATA nan32<>+0(SB)/4, $0x7fc00000
GLOBL nan32<>(SB), RODATA|NOPTR, $4

// Constants of resp5AVX512 (float32, broadcast).
DATA absMask32<>+0(SB)/4, $0x7fffffff
GLOBL absMask32<>(SB), RODATA|NOPTR, $4

DATA minusOne32<>+0(SB)/4, $0xbf800000
GLOBL minusOne32<>(SB), RODATA|NOPTR, $4

DATA sizeIdx32<>+0(SB)/4, $0x00000000
DATA sizeIdx32<>+4(SB)/4, $0x3f800000
DATA sizeIdx32<>+8(SB)/4, $0x40000000
DATA sizeIdx32<>+12(SB)/4, $0x40400000
DATA sizeIdx32<>+16(SB)/4, $0x40800000
GLOBL sizeIdx32<>(SB), RODATA|NOPTR, $20

// Eight-lane constants of chooseAVX2 (memory operands): |x| mask, 1, −1,
// −Inf.
DATA abs8<>+0(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+8(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+16(SB)/8, $0x7fffffff7fffffff
DATA abs8<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL abs8<>(SB), RODATA|NOPTR, $32

DATA one8<>+0(SB)/8, $0x3f8000003f800000
DATA one8<>+8(SB)/8, $0x3f8000003f800000
DATA one8<>+16(SB)/8, $0x3f8000003f800000
DATA one8<>+24(SB)/8, $0x3f8000003f800000
GLOBL one8<>(SB), RODATA|NOPTR, $32

DATA minusOne8<>+0(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+8(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+16(SB)/8, $0xbf800000bf800000
DATA minusOne8<>+24(SB)/8, $0xbf800000bf800000
GLOBL minusOne8<>(SB), RODATA|NOPTR, $32

DATA negInf8<>+0(SB)/8, $0xff800000ff800000
DATA negInf8<>+8(SB)/8, $0xff800000ff800000
DATA negInf8<>+16(SB)/8, $0xff800000ff800000
DATA negInf8<>+24(SB)/8, $0xff800000ff800000
GLOBL negInf8<>(SB), RODATA|NOPTR, $32
