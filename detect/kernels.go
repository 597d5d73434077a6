package detect

import (
	"math"
	"math/bits"
)

// The Go kernels below are the reference for the vector kernels of
// kernels_*amd64.s and the path taken without them (other architectures,
// -tags noasm, CPUs without AVX-512). Each vector kernel computes every
// output with the same IEEE operations in the same order as its Go
// kernel, so the two agree bit for bit; the per-kernel tests check that.

// cmulGo sets p[i] = z[i]·s[i].
func cmulGo(p, z, s []complex128) {
	s = s[:len(z)]
	p = p[:len(z)]
	for i, v := range z {
		p[i] = v * s[i]
	}
}

// cvtGo sets dA[i] = float32(real(p[i])) and, unless dB is nil, dB[i] =
// float32(imag(p[i])).
func cvtGo(dA, dB []float32, p []complex128) {
	dA = dA[:len(p)]
	for i, v := range p {
		dA[i] = float32(real(v))
	}
	if dB != nil {
		dB = dB[:len(p)]
		for i, v := range p {
			dB[i] = float32(imag(v))
		}
	}
}

// maxSqGo sets m[i] = max_k b[k*W+i]² for the K rows of b (stride W).
func maxSqGo(m, b []float32, K, W int) {
	for i := range m {
		var mx float32
		for k := range K {
			v := b[k*W+i]
			mx = max(mx, v*v)
		}
		m[i] = mx
	}
}

// blockMaxGo sets mb[j] = max(0, m[j*boundBlock:(j+1)*boundBlock]…),
// the last block possibly short.
func blockMaxGo(mb, m []float32) {
	for j := range mb {
		var mx float32
		for _, v := range m[j*boundBlock : min(len(m), (j+1)*boundBlock)] {
			mx = max(mx, v)
		}
		mb[j] = mx
	}
}

// passBitsGo sets bit j%64 of bits[j/64] iff v[j] > thr2 (NaN: not), for
// j < len(v), and clears the rest of the last word.
func passBitsGo(bits []uint64, v []float32, thr2 float32) {
	n := len(v)
	bits = bits[:(n+63)/64]
	clear(bits)
	for j, x := range v {
		if x > thr2 {
			bits[j/64] |= 1 << (j % 64)
		}
	}
}

// rowOffs holds row offsets o (none negative) and the largest of them,
// formed once for many calls of the vector kernels on one source: a
// kernel reading n values from each offset then needs one bounds check.
type rowOffs struct {
	o  []int
	hi int
}

// newRowOffs returns the rowOffs of o (len(o) ≥ 1); it panics if an
// offset is negative.
func newRowOffs(o []int) rowOffs {
	lo, hi := o[0], o[0]
	for _, v := range o[1:] {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < 0 {
		panic("detect: negative row offset")
	}
	return rowOffs{o: o, hi: hi}
}

// rowSumGo sets dst[i] = src[offs[0]+i] + src[offs[1]+i] + …, added in
// the order of offs.
func rowSumGo(dst, src []float32, offs []int) {
	for i := range dst {
		s := src[offs[0]+i]
		for _, o := range offs[1:] {
			s += src[o+i]
		}
		dst[i] = s
	}
}

// finePassGo forms the fine bounds of the blocks of boundBlock columns
// whose bit is set in pass (bit j%64 of pass[j/64] for block j; a block
// starting at or past W ends the scan), in increasing order: for block
// j's columns i in [j·boundBlock, min(W, (j+1)·boundBlock)), u_i =
// rowSumGo's sum of m[offs[0]+i], m[offs[1]+i], …; bit i−j·boundBlock of
// cols is set iff u_i > thr2 (every column with noPrune). Each block with
// a set bit is appended: blks[n], cols[n] = j, its bits; the count n is
// returned. blks and cols need room for every set bit of pass.
func finePassGo(blks []int32, cols []uint32, pass []uint64, m []float32, offs []int, W int, thr2 float32, noPrune bool) int {
	n := 0
	var u [boundBlock]float32
	for wi, word := range pass {
		for ; word != 0; word &= word - 1 {
			blk := wi*64 + bits.TrailingZeros64(word)
			i0 := blk * boundBlock
			if i0 >= W {
				return n
			}
			i1 := min(W, i0+boundBlock)
			rowSumGo(u[:i1-i0], m[i0:], offs)
			var c uint32
			for ii, v := range u[:i1-i0] {
				if noPrune || v > thr2 {
					c |= 1 << ii
				}
			}
			if c != 0 {
				blks[n], cols[n] = int32(blk), c
				n++
			}
		}
	}
	return n
}

// respStride is the row stride of a response block (respGo): one
// bound block of columns.
const respStride = boundBlock

// respRows is the number of rows per shape of a response block.
const respRows = 3

// respGo forms, for each shape k < K and column i < n (n ≤ respStride),
// with v_j = b[offs[j]+k*W+i], the sums Detector.evaluate forms, each from
// 0 in channel order: the bound u = Σ_j v_j² and the S responses A_s =
// Σ_j wt[j*S+s]·v_j; and of those the size s whose |A_s| is largest, the
// lowest s on ties, NaNs never chosen. Row r of shape k is
// dst[(k*respRows+r)*respStride:]: r = 0 holds u, r = 1 the chosen A_s,
// r = 2 the chosen s as a float32 (−1 if every A_s is NaN). Unless
// noPrune, a shape with no column of u > thr2 gets row 0 only: chooseGo
// skips it in every column without reading its other rows.
//
// Choosing within a shape first gives evaluate's choice: evaluate keeps
// the largest |A|, the lowest q = s·K+k on ties, and for a fixed k a
// lower s is a lower q.
func respGo(dst, b []float32, offs []int, K, S, W, n int, wt []float32, thr2 float32, noPrune bool) {
	for k := range K {
		pass := noPrune
		for i := range n {
			var u float32
			for _, o := range offs {
				v := b[o+k*W+i]
				u += v * v
			}
			dst[k*respRows*respStride+i] = u
			pass = pass || u > thr2
		}
		if !pass {
			continue
		}
		for i := range n {
			ba, bA, bs := float32(-1), float32(0), float32(-1)
			for s := range S {
				var a float32
				for j, o := range offs {
					a += wt[j*S+s] * b[o+k*W+i]
				}
				if aa := float32(math.Abs(float64(a))); aa > ba {
					ba, bA, bs = aa, a, float32(s)
				}
			}
			r := dst[k*respRows*respStride+i:]
			r[respStride], r[2*respStride] = bA, bs
		}
	}
}

// chooseRows is the number of rows of chooseGo's output.
const chooseRows = 4

// chooseGo makes Detector.evaluate's choice for each column i of a
// response block (respGo) from its per-shape bounds and best responses:
// shapes in order k = 0 … K−1, shape k skipped (unless noPrune) when
// !(u_k > thr2) or (best > 0 && u_k < best·best·c), c = float32(1 −
// boundSlack); of the rest, the best |A| wins, the lowest q = s·K+k on
// ties. out[i] is the best |A| (−1 if none), out[respStride+i] its q,
// out[2·respStride+i] its sign (±1; 0 if none) and out[3·respStride+i]
// the number of shapes not skipped, all as float32.
func chooseGo(out, resp []float32, K int, thr2, c float32, noPrune bool) {
	for i := range respStride {
		best, bq, sign, n := float32(-1), 0, float32(0), 0
		for k := range K {
			row := resp[k*respRows*respStride+i:]
			if !noPrune {
				if uk := row[0]; !(uk > thr2) || (best > 0 && uk < best*best*c) {
					continue
				}
			}
			n++
			bs := row[2*respStride]
			if bs < 0 {
				continue
			}
			a := row[respStride]
			aa := float32(math.Abs(float64(a)))
			if q := int(bs)*K + k; aa > best || (aa == best && q < bq) {
				best, bq = aa, q
				sign = 1
				if a < 0 {
					sign = -1
				}
			}
		}
		out[i], out[respStride+i], out[2*respStride+i], out[3*respStride+i] = best, float32(bq), sign, float32(n)
	}
}

// fillGo sets z[j] = complex(float64(a[j]), float64(b[j])), or
// complex(float64(a[j]), 0) if b is nil.
func fillGo(z []complex128, a, b []float32) {
	a = a[:len(z)]
	if b != nil {
		b = b[:len(z)]
		for j := range z {
			z[j] = complex(float64(a[j]), float64(b[j]))
		}
		return
	}
	for j := range z {
		z[j] = complex(float64(a[j]), 0)
	}
}
