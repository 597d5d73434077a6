package cuda

import (
	"fmt"
	"unsafe"
)

// cuBLAS entry points.
var (
	cublasCreate               uintptr
	cublasDestroy              uintptr
	cublasSetStream            uintptr
	cublasGetVersion           uintptr
	cublasGetStatusName        uintptr
	cublasGetStatusString      uintptr
	cublasSgemm                uintptr
	cublasDgemm                uintptr
	cublasSgemmStridedBatched  uintptr
	cublasDgemmStridedBatched  uintptr
	cublasGemmStridedBatchedEx uintptr
	cublasSsyrk                uintptr
	cublasDsyrk                uintptr
)

var cublasLib = &library{
	what:    "cuBLAS (libcublas.so.13 or .12)",
	env:     "DSPK_LIBCUBLAS",
	stem:    "libcublas.so",
	sonames: []string{"libcublas.so.13", "libcublas.so.12"},
	dirs:    wheelDirs("nvidia/cu13/lib", "nvidia/cublas/lib"),
	preload: []string{"libcublasLt.so*"},
	syms: []symbol{
		{name: "cublasCreate_v2", addr: &cublasCreate},
		{name: "cublasDestroy_v2", addr: &cublasDestroy},
		{name: "cublasSetStream_v2", addr: &cublasSetStream},
		{name: "cublasGetVersion_v2", addr: &cublasGetVersion},
		{name: "cublasGetStatusName", addr: &cublasGetStatusName},
		{name: "cublasGetStatusString", addr: &cublasGetStatusString},
		{name: "cublasSgemm_v2", addr: &cublasSgemm},
		{name: "cublasDgemm_v2", addr: &cublasDgemm},
		{name: "cublasSgemmStridedBatched", addr: &cublasSgemmStridedBatched},
		{name: "cublasDgemmStridedBatched", addr: &cublasDgemmStridedBatched},
		{name: "cublasGemmStridedBatchedEx", addr: &cublasGemmStridedBatchedEx},
		{name: "cublasSsyrk_v2", addr: &cublasSsyrk},
		{name: "cublasDsyrk_v2", addr: &cublasDsyrk},
	},
}

// Transpose selects op(A) in cuBLAS calls (column-major: a row-major
// matrix is its transpose).
type Transpose int

// Transpose values (cublasOperation_t).
const (
	NoTrans Transpose = 0
	Trans   Transpose = 1
)

// Fill selects the stored triangle of a symmetric result
// (cublasFillMode_t, column-major).
type Fill int

// Fill values.
const (
	Lower Fill = 0
	Upper Fill = 1
)

// DataType is a cudaDataType_t element type.
type DataType int

// DataType values.
const (
	R32F  DataType = 0
	R64F  DataType = 1
	R16F  DataType = 2
	R16BF DataType = 14
)

// ComputeType is a cublasComputeType_t.
type ComputeType int

// ComputeType values. Compute32FFastTF32 rounds inputs to TF32 (about
// 1e-4 relative error on Gram matrices, gpu.md §6): opt-in only.
const (
	Compute32F         ComputeType = 68
	Compute32FFast16BF ComputeType = 75
	Compute32FFastTF32 ComputeType = 77
	Compute64F         ComputeType = 70
)

// gemmDefault is CUBLAS_GEMM_DEFAULT.
const gemmDefault = -1

// blasError builds the *Error of cuBLAS status r.
func blasError(fn, op string, r int) *Error {
	return &Error{Lib: LibCUBLAS, Func: fn, Code: r, Op: op,
		Name: cstring(call(cublasGetStatusName, uintptr(r))),
		Msg:  cstring(call(cublasGetStatusString, uintptr(r)))}
}

// blasCheck converts the cuBLAS status returned by a call.
func blasCheck(fn, op string, r uintptr) error {
	if s := int(int32(r)); s != 0 {
		return blasError(fn, op, s)
	}
	return nil
}

// handle returns the device's cuBLAS handle bound to c's stream, creating
// it on first use.
func (c *Ctx) handle() (uintptr, error) {
	d := c.live()
	if e := d.lost.Load(); e != nil {
		return 0, e
	}
	if d.blas == 0 {
		if err := cublasLib.load(); err != nil {
			return 0, err
		}
		var h uintptr
		if err := blasCheck("cublasCreate_v2", "", call(cublasCreate, uintptr(unsafe.Pointer(&h)))); err != nil {
			return 0, err
		}
		d.blas, d.blasSet = h, 0
	}
	if d.blasSet != c.stream {
		if err := blasCheck("cublasSetStream_v2", "", call(cublasSetStream, d.blas, c.stream)); err != nil {
			return 0, err
		}
		d.blasSet = c.stream
	}
	return d.blas, nil
}

// blas calls the cuBLAS function *fn on the device's handle (inserted as
// the first argument). fn points at the entry point's variable, which
// holds it once handle has loaded cuBLAS.
//
//go:uintptrescapes
func (c *Ctx) blas(name, op string, fn *uintptr, args ...uintptr) error {
	h, err := c.handle()
	if err != nil {
		return err
	}
	all := make([]uintptr, 0, 24)
	all = append(append(all, h), args...)
	if err := blasCheck(name, op, call(*fn, all...)); err != nil {
		return err
	}
	if c.dev.debugSync && !c.capturing {
		return c.SyncOp(name)
	}
	return nil
}

// BLASVersion returns cuBLAS's version (130100 for 13.1.0).
func (c *Ctx) BLASVersion() (int, error) {
	h, err := c.handle()
	if err != nil {
		return 0, err
	}
	var v int32
	err = blasCheck("cublasGetVersion_v2", "", call(cublasGetVersion, h, uintptr(unsafe.Pointer(&v))))
	return int(v), err
}

func checkDims(fn string, m, n, k, batch int) {
	if m < 0 || n < 0 || k < 0 || batch < 0 {
		panic(fmt.Sprintf("cuda: %s with m=%d n=%d k=%d batch=%d", fn, m, n, k, batch))
	}
}

// Sgemm computes C = alpha·op(A)·op(B) + beta·C in float32, column-major
// (cublasSgemm_v2): op(A) is m×k, op(B) k×n, C m×n. For row-major X
// [rows][ld], X·Xᵀ is Sgemm(Trans, NoTrans, rows, rows, cols, …, X, ld, X,
// ld, …).
func (c *Ctx) Sgemm(ta, tb Transpose, m, n, k int, alpha float32, a DevicePtr, lda int, b DevicePtr, ldb int, beta float32, cc DevicePtr, ldc int) error {
	checkDims("Sgemm", m, n, k, 1)
	return c.blas("cublasSgemm_v2", "", &cublasSgemm, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb),
		uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc))
}

// Dgemm is Sgemm in float64 (cublasDgemm_v2).
func (c *Ctx) Dgemm(ta, tb Transpose, m, n, k int, alpha float64, a DevicePtr, lda int, b DevicePtr, ldb int, beta float64, cc DevicePtr, ldc int) error {
	checkDims("Dgemm", m, n, k, 1)
	return c.blas("cublasDgemm_v2", "", &cublasDgemm, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(b), uintptr(ldb),
		uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc))
}

// SgemmStridedBatched computes batch products C_i = alpha·op(A_i)·op(B_i) +
// beta·C_i, with A_i at a + i·strideA elements (likewise B, C).
func (c *Ctx) SgemmStridedBatched(ta, tb Transpose, m, n, k int, alpha float32, a DevicePtr, lda int, strideA int64, b DevicePtr, ldb int, strideB int64, beta float32, cc DevicePtr, ldc int, strideC int64, batch int) error {
	checkDims("SgemmStridedBatched", m, n, k, batch)
	return c.blas("cublasSgemmStridedBatched", "", &cublasSgemmStridedBatched, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(strideA), uintptr(b), uintptr(ldb), uintptr(strideB),
		uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc), uintptr(strideC), uintptr(batch))
}

// DgemmStridedBatched is SgemmStridedBatched in float64.
func (c *Ctx) DgemmStridedBatched(ta, tb Transpose, m, n, k int, alpha float64, a DevicePtr, lda int, strideA int64, b DevicePtr, ldb int, strideB int64, beta float64, cc DevicePtr, ldc int, strideC int64, batch int) error {
	checkDims("DgemmStridedBatched", m, n, k, batch)
	return c.blas("cublasDgemmStridedBatched", "", &cublasDgemmStridedBatched, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(strideA), uintptr(b), uintptr(ldb), uintptr(strideB),
		uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc), uintptr(strideC), uintptr(batch))
}

// GemmStridedBatchedEx is the mixed-precision strided batched GEMM
// (cublasGemmStridedBatchedEx) with element types at, bt, ct and compute
// type ct; alpha and beta are passed as float64 for Compute64F and as
// float32 otherwise.
func (c *Ctx) GemmStridedBatchedEx(ta, tb Transpose, m, n, k int, alpha float64, a DevicePtr, at DataType, lda int, strideA int64, b DevicePtr, bt DataType, ldb int, strideB int64, beta float64, cc DevicePtr, ctype DataType, ldc int, strideC int64, batch int, compute ComputeType) error {
	checkDims("GemmStridedBatchedEx", m, n, k, batch)
	var al, be unsafe.Pointer
	if compute == Compute64F {
		al, be = unsafe.Pointer(&alpha), unsafe.Pointer(&beta)
	} else {
		a32, b32 := float32(alpha), float32(beta)
		al, be = unsafe.Pointer(&a32), unsafe.Pointer(&b32)
	}
	algo := int32(gemmDefault)
	return c.blas("cublasGemmStridedBatchedEx", "", &cublasGemmStridedBatchedEx, uintptr(ta), uintptr(tb), uintptr(m), uintptr(n), uintptr(k),
		uintptr(al), uintptr(a), uintptr(at), uintptr(lda), uintptr(strideA), uintptr(b), uintptr(bt), uintptr(ldb), uintptr(strideB),
		uintptr(be), uintptr(cc), uintptr(ctype), uintptr(ldc), uintptr(strideC), uintptr(batch), uintptr(compute), uintptr(uint32(algo)))
}

// Ssyrk computes the uplo triangle of C = alpha·op(A)·op(A)ᵀ + beta·C in
// float32 (cublasSsyrk_v2): with trans = Trans, A is k×n (lda ≥ k) and
// op(A)·op(A)ᵀ = AᵀA is n×n. The other triangle is not written.
func (c *Ctx) Ssyrk(uplo Fill, trans Transpose, n, k int, alpha float32, a DevicePtr, lda int, beta float32, cc DevicePtr, ldc int) error {
	checkDims("Ssyrk", n, n, k, 1)
	return c.blas("cublasSsyrk_v2", "", &cublasSsyrk, uintptr(uplo), uintptr(trans), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc))
}

// Dsyrk is Ssyrk in float64.
func (c *Ctx) Dsyrk(uplo Fill, trans Transpose, n, k int, alpha float64, a DevicePtr, lda int, beta float64, cc DevicePtr, ldc int) error {
	checkDims("Dsyrk", n, n, k, 1)
	return c.blas("cublasDsyrk_v2", "", &cublasDsyrk, uintptr(uplo), uintptr(trans), uintptr(n), uintptr(k),
		uintptr(unsafe.Pointer(&alpha)), uintptr(a), uintptr(lda), uintptr(unsafe.Pointer(&beta)), uintptr(cc), uintptr(ldc))
}
