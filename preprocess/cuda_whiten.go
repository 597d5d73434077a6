package preprocess

import (
	"fmt"
	"math"
	"slices"

	"dspk/compute"
	"dspk/linalg"
)

// SetWhitening sets the whitening that Process applies after the
// high-pass (nil: none), uploading it to the device; w may change
// afterwards without effect. It waits for the work on c's stream first.
// It panics if w.C ≠ C.
func (g *cudaPreprocessor) SetWhitening(c *compute.Ctx, w *linalg.Whitening) error {
	g.check("SetWhitening")
	if w == nil {
		g.white = false
		return nil
	}
	if w.C != g.c {
		panic(fmt.Sprintf("preprocess: cudaPreprocessor.SetWhitening: whitening of %d channels for %d", w.C, g.c))
	}
	d := w.Dense() // panics if w is malformed (indices out of range)
	C, T := g.c, g.t
	// Buffers in use by queued work must not be freed or overwritten
	// before it finishes.
	if err := c.Sync(); err != nil {
		return err
	}
	if g.z.Ptr == 0 {
		var err error
		if g.z, err = c.Alloc(C * T * 4); err != nil {
			return err
		}
	}
	if g.cfg.dense {
		if g.wDense.Ptr == 0 {
			var err error
			if g.wDense, err = c.Alloc(C * C * 4); err != nil {
				return err
			}
		}
		d32 := make([]float32, len(d))
		for i, v := range d {
			d32[i] = float32(v)
		}
		if err := compute.Upload(c, g.wDense.Ptr, d32); err != nil {
			return err
		}
		g.white = true
		return nil
	}
	// The output rows in groups, each reading the band of input rows its
	// entries name; pairs local column | weight bits << 32, one 8-byte
	// load per entry.
	tw := 32 * g.whiteCols
	rg, groups := whiteGroups(w, g.cfg.whiteRows, whiteBandShared/(tw*4))
	pairs := make([]uint64, C*w.K)
	for i, col := range w.Index {
		lo := groups[2*((i/w.K)/rg)]
		pairs[i] = uint64(uint32(col-lo)) | uint64(math.Float32bits(w.Value[i]))<<32
	}
	span := 0
	for i := 1; i < len(groups); i += 2 {
		span = max(span, int(groups[i]))
	}
	for _, b := range []struct {
		m     *compute.Mem
		bytes int
	}{{&g.wPairs, max(len(pairs), 1) * 8}, {&g.wGroups, len(groups) * 4}} {
		if b.m.Bytes >= b.bytes {
			continue
		}
		if err := c.Free(*b.m); err != nil {
			return err
		}
		*b.m = compute.Mem{}
		var err error
		if *b.m, err = c.Alloc(b.bytes); err != nil {
			return err
		}
	}
	if err := compute.Upload(c, g.wPairs.Ptr, pairs); err != nil {
		return err
	}
	if err := compute.Upload(c, g.wGroups.Ptr, groups); err != nil {
		return err
	}
	if g.fWhite != nil {
		g.fWhite.Free()
	}
	threads := 128 * g.whiteCols
	if rg < C {
		threads = 256
	}
	g.fWhite = g.whiteFn.Prepare(compute.Dim3{X: len(groups) / 2, Y: ceilDiv(T, tw), Z: 1}, compute.D1(threads), span*tw*4,
		g.z, g.y, g.wPairs, g.wGroups, int32(C), int32(w.K), int32(T), int32(rg))
	g.white = true
	return nil
}

// whiteGroups cuts the C output rows of w into groups for the whitening
// kernel and returns the rows per group and (lo, span) of each group's
// input band (the rows its entries name): groups of rows rows (if rows > 0;
// whiteGroupRows if rows is 0) when every band spans at most maxSpan rows
// and there is more than one group, else one group of all C rows
// reading them all.
func whiteGroups(w *linalg.Whitening, rows, maxSpan int) (int, []int32) {
	C, K := w.C, w.K
	if rows == 0 {
		rows = whiteGroupRows
	}
	if rows > 0 && rows < C && K > 0 {
		var groups []int32
		ok := true
		for r0 := 0; r0 < C && ok; r0 += rows {
			idx := w.Index[r0*K : min(C, r0+rows)*K]
			lo, hi := slices.Min(idx), slices.Max(idx)
			ok = int(hi-lo) < maxSpan
			groups = append(groups, lo, hi-lo+1)
		}
		if ok {
			return rows, groups
		}
	}
	return C, []int32{0, int32(C)}
}
