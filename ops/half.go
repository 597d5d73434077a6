package ops

import "math"

// Float16 is an IEEE 754 binary16 value stored as its bit pattern.
type Float16 uint16

// BFloat16 is a bfloat16 value (the top half of a float32) stored as its bits.
type BFloat16 uint16

// Float32 returns h as a float32, exactly (NaN payloads shifted up).
func (h Float16) Float32() float32 {
	return math.Float32frombits(f16bits32(uint16(h)))
}

// Float64 returns h as a float64; the conversion is exact.
func (h Float16) Float64() float64 { return float64(h.Float32()) }

// f16bits32 returns the float32 bit pattern of the binary16 pattern h.
func f16bits32(h uint16) uint32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN
		return sign | 0x7f800000 | mant<<13
	case exp != 0: // normal
		return sign | (exp+127-15)<<23 | mant<<13
	case mant == 0: // ±0
		return sign
	}
	// Subnormal mant·2^-24: normalise, leading one at bit 10.
	e := uint32(127 - 15 + 1)
	for mant&0x400 == 0 {
		mant <<= 1
		e--
	}
	return sign | e<<23 | (mant&0x3ff)<<13
}

// Float16FromFloat32 returns f rounded to binary16, ties to even (±Inf from 65520; NaN quiet).
func Float16FromFloat32(f float32) Float16 {
	return Float16(f32toF16(math.Float32bits(f)))
}

// f32toF16 rounds the float32 bit pattern b to binary16, ties to even.
func f32toF16(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13) // quiet NaN
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15 // binary16 biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		// Subnormal or zero: m·2^(exp-150), in units of 2^-24 m >> (14-e).
		if exp == 0 {
			return sign // float32 subnormals are far below 2^-25
		}
		shift := uint32(14 - e)
		if shift > 24 {
			return sign // below half the smallest subnormal
		}
		m := mant | 0x800000
		q := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && q&1 == 1 {
			q++
		}
		return sign | uint16(q)
	}
	q := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && q&1 == 1 {
		q++ // a carry into the exponent is correct, up to Inf
	}
	return sign | uint16(q)
}

// Float16FromFloat64 returns x rounded once to the nearest binary16, ties to even.
func Float16FromFloat64(x float64) Float16 {
	return Float16(f32toF16(math.Float32bits(roundToOdd32(x))))
}

// Float32 returns b as a float32; the conversion is exact.
func (b BFloat16) Float32() float32 { return math.Float32frombits(uint32(b) << 16) }

// Float64 returns b as a float64; the conversion is exact.
func (b BFloat16) Float64() float64 { return float64(b.Float32()) }

// BFloat16FromFloat32 returns f rounded to bfloat16, ties to even (NaN made quiet).
func BFloat16FromFloat32(f float32) BFloat16 {
	return BFloat16(f32toBF16(math.Float32bits(f)))
}

// f32toBF16 rounds the float32 bit pattern b to bfloat16, ties to even.
func f32toBF16(b uint32) uint16 {
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // quiet NaN
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BFloat16FromFloat64 returns x rounded once to the nearest bfloat16, ties to even.
func BFloat16FromFloat64(x float64) BFloat16 {
	return BFloat16(f32toBF16(math.Float32bits(roundToOdd32(x))))
}

// roundToOdd32 rounds x to float32 to odd, so rounding that to 8 or 11 bits rounds x correctly.
func roundToOdd32(x float64) float32 {
	f := float32(x)
	if float64(f) == x || x != x {
		return f
	}
	b := math.Float32bits(f)
	if b&1 == 0 {
		if math.Abs(float64(f)) > math.Abs(x) {
			b--
		} else {
			b++
		}
	}
	return math.Float32frombits(b)
}
