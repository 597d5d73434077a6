package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gemmRef computes the column-major C = alpha·op(A)·op(B) + beta·C in
// float64 over the m×n result (ldc ≥ m).
func gemmRef(ta, tb Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for l := 0; l < k; l++ {
				var av, bv float64
				if ta == Trans {
					av = a[i*lda+l]
				} else {
					av = a[l*lda+i]
				}
				if tb == Trans {
					bv = b[l*ldb+j]
				} else {
					bv = b[j*ldb+l]
				}
				s += av * bv
			}
			if beta == 0 {
				c[j*ldc+i] = alpha * s
			} else {
				c[j*ldc+i] = alpha*s + beta*c[j*ldc+i]
			}
		}
	}
}

func randVec(rng *rand.Rand, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

func to32(v []float64) []float32 {
	o := make([]float32, len(v))
	for i, x := range v {
		o[i] = float32(x)
	}
	return o
}

func from32(v []float32) []float64 {
	o := make([]float64, len(v))
	for i, x := range v {
		o[i] = float64(x)
	}
	return o
}

// compareMat checks the m×n column-major matrices in every batch against
// ref (relative Frobenius error ≤ tol) and that the padding rows of ldc
// (and, for a triangle, the other triangle) kept their NaN poison.
func compareMat(t *testing.T, what string, got, ref []float64, m, n, ldc, batch int, strideC int, tri Fill, triangle bool, tol float64) {
	t.Helper()
	var d, r float64
	for bi := 0; bi < batch; bi++ {
		for j := 0; j < n; j++ {
			for i := 0; i < ldc; i++ {
				k := bi*strideC + j*ldc + i
				inside := i < m
				if triangle && ((tri == Upper && i > j) || (tri == Lower && i < j)) {
					inside = false
				}
				if !inside {
					if !math.IsNaN(got[k]) {
						t.Fatalf("%s: element (%d,%d) of batch %d outside the result was written: %v", what, i, j, bi, got[k])
					}
					continue
				}
				e := got[k] - ref[k]
				d += e * e
				r += ref[k] * ref[k]
			}
		}
	}
	rel := math.Sqrt(d / r)
	t.Logf("%s: relative error %.3g", what, rel)
	if !(rel <= tol) {
		t.Errorf("%s: relative error %.3g > %g", what, rel, tol)
	}
}

func nanVec(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

// TestBLAS checks every cuBLAS binding against a float64 reference on odd
// sizes with padded leading dimensions and NaN-poisoned outputs.
func TestBLAS(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const m, n, k, batch = 5, 7, 33, 3
	for _, ta := range []Transpose{NoTrans, Trans} {
		for _, tb := range []Transpose{NoTrans, Trans} {
			ar, ac := m, k // stored rows (leading) and columns of A
			if ta == Trans {
				ar, ac = k, m
			}
			br, bc := k, n
			if tb == Trans {
				br, bc = n, k
			}
			lda, ldb, ldc := ar+2, br+1, m+3
			sa, sb, sc := lda*ac+5, ldb*bc+1, ldc*n+2
			a, b := randVec(rng, sa*batch), randVec(rng, sb*batch)
			a32, b32 := from32(to32(a)), from32(to32(b))
			ref := nanVec(sc * batch)
			ref64 := nanVec(sc * batch)
			for bi := 0; bi < batch; bi++ {
				gemmRef(ta, tb, m, n, k, 0.5, a32[bi*sa:], lda, b32[bi*sb:], ldb, 0, ref[bi*sc:], ldc)
				gemmRef(ta, tb, m, n, k, 0.5, a[bi*sa:], lda, b[bi*sb:], ldb, 0, ref64[bi*sc:], ldc)
			}
			name := fmt.Sprintf("ta=%d tb=%d", ta, tb)
			do(t, func(c *Ctx) error {
				da, _ := c.Alloc(8 * len(a))
				db, _ := c.Alloc(8 * len(b))
				dc, err := c.Alloc(8 * len(ref))
				if err != nil {
					return err
				}
				defer c.Free(da)
				defer c.Free(db)
				defer c.Free(dc)
				run32 := func(what string, f func() error, tol float64, batches int) error {
					if err := Upload(c, da.Ptr, to32(a)); err != nil {
						return err
					}
					if err := Upload(c, db.Ptr, to32(b)); err != nil {
						return err
					}
					if err := c.Memset32(dc.Ptr, 0x7fc00000, len(ref)); err != nil {
						return err
					}
					if err := f(); err != nil {
						return err
					}
					got := make([]float32, len(ref))
					if err := Download(c, got, dc.Ptr); err != nil {
						return err
					}
					compareMat(t, name+" "+what, from32(got), ref, m, n, ldc, batches, sc, Upper, false, tol)
					return nil
				}
				run64 := func(what string, f func() error, batches int) error {
					if err := Upload(c, da.Ptr, a); err != nil {
						return err
					}
					if err := Upload(c, db.Ptr, b); err != nil {
						return err
					}
					if err := c.Memset8(dc.Ptr, 0xff, 8*len(ref)); err != nil {
						return err
					}
					if err := f(); err != nil {
						return err
					}
					got := make([]float64, len(ref))
					if err := Download(c, got, dc.Ptr); err != nil {
						return err
					}
					compareMat(t, name+" "+what, got, ref64, m, n, ldc, batches, sc, Upper, false, 1e-14)
					return nil
				}
				for _, step := range []error{
					run32("Sgemm", func() error {
						return c.Sgemm(ta, tb, m, n, k, 0.5, da.Ptr, lda, db.Ptr, ldb, 0, dc.Ptr, ldc)
					}, 2e-6, 1),
					run32("SgemmStridedBatched", func() error {
						return c.SgemmStridedBatched(ta, tb, m, n, k, 0.5, da.Ptr, lda, int64(sa), db.Ptr, ldb, int64(sb), 0, dc.Ptr, ldc, int64(sc), batch)
					}, 2e-6, batch),
					run32("GemmStridedBatchedEx 32F", func() error {
						return c.GemmStridedBatchedEx(ta, tb, m, n, k, 0.5, da.Ptr, R32F, lda, int64(sa), db.Ptr, R32F, ldb, int64(sb), 0, dc.Ptr, R32F, ldc, int64(sc), batch, Compute32F)
					}, 2e-6, batch),
					run32("GemmStridedBatchedEx TF32", func() error {
						return c.GemmStridedBatchedEx(ta, tb, m, n, k, 0.5, da.Ptr, R32F, lda, int64(sa), db.Ptr, R32F, ldb, int64(sb), 0, dc.Ptr, R32F, ldc, int64(sc), batch, Compute32FFastTF32)
					}, 5e-3, batch),
					run64("Dgemm", func() error {
						return c.Dgemm(ta, tb, m, n, k, 0.5, da.Ptr, lda, db.Ptr, ldb, 0, dc.Ptr, ldc)
					}, 1),
					run64("DgemmStridedBatched", func() error {
						return c.DgemmStridedBatched(ta, tb, m, n, k, 0.5, da.Ptr, lda, int64(sa), db.Ptr, ldb, int64(sb), 0, dc.Ptr, ldc, int64(sc), batch)
					}, batch),
					run64("GemmStridedBatchedEx 64F", func() error {
						return c.GemmStridedBatchedEx(ta, tb, m, n, k, 0.5, da.Ptr, R64F, lda, int64(sa), db.Ptr, R64F, ldb, int64(sb), 0, dc.Ptr, R64F, ldc, int64(sc), batch, Compute64F)
					}, batch),
				} {
					if step != nil {
						return step
					}
				}
				return nil
			})
		}
	}
}

// TestSyrk checks Ssyrk and Dsyrk (upper and lower triangles of AᵀA, A
// k×n with a padded leading dimension): the other triangle keeps its
// poison.
func TestSyrk(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, k = 9, 37
	lda, ldc := k+3, n+1
	a := randVec(rng, lda*n)
	a32 := from32(to32(a))
	ref, ref64 := nanVec(ldc*n), nanVec(ldc*n)
	gemmRef(Trans, NoTrans, n, n, k, 1, a32, lda, a32, lda, 0, ref, ldc)
	gemmRef(Trans, NoTrans, n, n, k, 1, a, lda, a, lda, 0, ref64, ldc)
	for _, uplo := range []Fill{Upper, Lower} {
		do(t, func(c *Ctx) error {
			da, _ := c.Alloc(8 * len(a))
			dc, err := c.Alloc(8 * len(ref))
			if err != nil {
				return err
			}
			defer c.Free(da)
			defer c.Free(dc)
			if err := Upload(c, da.Ptr, to32(a)); err != nil {
				return err
			}
			if err := c.Memset32(dc.Ptr, 0x7fc00000, len(ref)); err != nil {
				return err
			}
			if err := c.Ssyrk(uplo, Trans, n, k, 1, da.Ptr, lda, 0, dc.Ptr, ldc); err != nil {
				return err
			}
			got := make([]float32, len(ref))
			if err := Download(c, got, dc.Ptr); err != nil {
				return err
			}
			compareMat(t, fmt.Sprintf("Ssyrk uplo=%d", uplo), from32(got), ref, n, n, ldc, 1, 0, uplo, true, 2e-6)
			if err := Upload(c, da.Ptr, a); err != nil {
				return err
			}
			if err := c.Memset8(dc.Ptr, 0xff, 8*len(ref)); err != nil {
				return err
			}
			if err := c.Dsyrk(uplo, Trans, n, k, 1, da.Ptr, lda, 0, dc.Ptr, ldc); err != nil {
				return err
			}
			got64 := make([]float64, len(ref))
			if err := Download(c, got64, dc.Ptr); err != nil {
				return err
			}
			compareMat(t, fmt.Sprintf("Dsyrk uplo=%d", uplo), got64, ref64, n, n, ldc, 1, 0, uplo, true, 1e-14)
			return nil
		})
	}
}

// TestBLASError checks that a cuBLAS status is reported with its name.
func TestBLASError(t *testing.T) {
	err := device(t).Do(func(c *Ctx) error {
		return c.Sgemm(NoTrans, NoTrans, 8, 8, 8, 1, 0, 4, 0, 8, 0, 0, 8) // lda < m
	})
	var e *Error
	if !errors.As(err, &e) || e.Lib != LibCUBLAS || e.Name != "CUBLAS_STATUS_INVALID_VALUE" || e.Code != 7 {
		t.Fatalf("err = %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
	t.Logf("%v", err)
}
