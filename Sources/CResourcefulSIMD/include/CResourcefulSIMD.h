// What Swift's SIMD types lack for ResourcefulJSON's stage one: a move mask, the top bit of each
// of a vector's bytes gathered into an integer. On x86-64 it is one SSE2 instruction
// (`pmovmskb`), part of every x86-64 processor; elsewhere ResourcefulJSON gathers the bits in
// Swift (`JSONBlock.multipliedBits`).
#ifndef C_RESOURCEFUL_SIMD_H
#define C_RESOURCEFUL_SIMD_H

#include <stdint.h>

/// Sixteen signed bytes: Swift's `SIMD16<Int8>`.
typedef int8_t resourceful_i8x16 __attribute__((ext_vector_type(16)));

#if defined(__SSE2__)
#include <emmintrin.h>

/// The top bit of byte `i` of `bytes` as bit `i`, the bits above 15 clear.
static inline uint32_t resourceful_move_mask(resourceful_i8x16 bytes) {
    return (uint32_t)_mm_movemask_epi8((__m128i)bytes);
}
#else
/// The same, a byte at a time, where SSE2 is not available (an x86-64 build with it turned off).
static inline uint32_t resourceful_move_mask(resourceful_i8x16 bytes) {
    uint32_t mask = 0;
    for (int lane = 0; lane < 16; lane++) {
        mask |= (uint32_t)((uint8_t)bytes[lane] >> 7) << lane;
    }
    return mask;
}
#endif

#endif
