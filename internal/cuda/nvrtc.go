package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// NVRTC entry points.
var (
	nvrtcGetErrorString       uintptr
	nvrtcVersion              uintptr
	nvrtcGetNumSupportedArchs uintptr
	nvrtcGetSupportedArchs    uintptr
	nvrtcCreateProgram        uintptr
	nvrtcDestroyProgram       uintptr
	nvrtcCompileProgram       uintptr
	nvrtcGetProgramLogSize    uintptr
	nvrtcGetProgramLog        uintptr
	nvrtcGetCUBINSize         uintptr
	nvrtcGetCUBIN             uintptr
	nvrtcGetPTXSize           uintptr
	nvrtcGetPTX               uintptr
)

var nvrtcLib = &library{
	what:    "NVRTC (libnvrtc.so.13 or .12)",
	env:     "DSPK_LIBNVRTC",
	stem:    "libnvrtc.so",
	sonames: []string{"libnvrtc.so.13", "libnvrtc.so.12"},
	dirs:    wheelDirs("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"),
	preload: []string{"libnvrtc-builtins.so*"},
	syms: []symbol{
		{name: "nvrtcGetErrorString", addr: &nvrtcGetErrorString},
		{name: "nvrtcVersion", addr: &nvrtcVersion},
		{name: "nvrtcGetNumSupportedArchs", addr: &nvrtcGetNumSupportedArchs},
		{name: "nvrtcGetSupportedArchs", addr: &nvrtcGetSupportedArchs},
		{name: "nvrtcCreateProgram", addr: &nvrtcCreateProgram},
		{name: "nvrtcDestroyProgram", addr: &nvrtcDestroyProgram},
		{name: "nvrtcCompileProgram", addr: &nvrtcCompileProgram},
		{name: "nvrtcGetProgramLogSize", addr: &nvrtcGetProgramLogSize},
		{name: "nvrtcGetProgramLog", addr: &nvrtcGetProgramLog},
		{name: "nvrtcGetCUBINSize", addr: &nvrtcGetCUBINSize},
		{name: "nvrtcGetCUBIN", addr: &nvrtcGetCUBIN},
		{name: "nvrtcGetPTXSize", addr: &nvrtcGetPTXSize},
		{name: "nvrtcGetPTX", addr: &nvrtcGetPTX},
	},
}

// nvrtcError builds the *Error of NVRTC status r from function fn.
func nvrtcError(fn, op string, r int, log string) *Error {
	e := &Error{Lib: LibNVRTC, Func: fn, Code: r, Op: op}
	e.Name = cstring(call(nvrtcGetErrorString, uintptr(r)))
	e.Msg = strings.TrimSpace(log)
	if e.Msg == "" {
		e.Msg = "(no log)"
	}
	return e
}

// NVRTCVersion returns NVRTC's version, loading it if needed.
func NVRTCVersion() (major, minor int, err error) {
	if err := nvrtcLib.load(); err != nil {
		return 0, 0, err
	}
	var ma, mi int32
	if r := int(int32(call(nvrtcVersion, uintptr(unsafe.Pointer(&ma)), uintptr(unsafe.Pointer(&mi))))); r != 0 {
		return 0, 0, nvrtcError("nvrtcVersion", "", r, "")
	}
	return int(ma), int(mi), nil
}

// nvrtcArchs returns the compute capabilities NVRTC can target (e.g. 90).
func nvrtcArchs() ([]int, error) {
	var n int32
	if r := int(int32(call(nvrtcGetNumSupportedArchs, uintptr(unsafe.Pointer(&n))))); r != 0 {
		return nil, nvrtcError("nvrtcGetNumSupportedArchs", "", r, "")
	}
	if n <= 0 {
		return nil, nil
	}
	a := make([]int32, n)
	if r := int(int32(call(nvrtcGetSupportedArchs, uintptr(unsafe.Pointer(&a[0]))))); r != 0 {
		return nil, nvrtcError("nvrtcGetSupportedArchs", "", r, "")
	}
	out := make([]int, n)
	for i, v := range a {
		out[i] = int(v)
	}
	return out, nil
}

// image is compiled device code: a cubin, or PTX for the driver to JIT.
type image struct {
	data []byte
	ptx  bool
}

// imageCache holds compiled images for the life of the process, keyed by
// kernelKey.
var (
	imageMu    sync.Mutex
	imageCache = map[[32]byte]image{}
	// imageFlight holds, per key being compiled or read, a channel
	// closed when that ends (guarded by imageMu).
	imageFlight = map[[32]byte]chan struct{}{}
)

// target picks the NVRTC target for a device of compute capability cc: the
// exact sm_XY cubin when NVRTC supports it, otherwise PTX for the newest
// architecture NVRTC knows that is not newer than the device.
func target(cc int, archs []int) (string, bool, error) {
	best := -1
	for _, a := range archs {
		if a == cc {
			return fmt.Sprintf("sm_%d", cc), false, nil
		}
		if a < cc && a > best {
			best = a
		}
	}
	if best < 0 {
		return "", false, fmt.Errorf("cuda: NVRTC supports no architecture up to compute capability %d (supports %v)", cc, archs)
	}
	return fmt.Sprintf("compute_%d", best), true, nil
}

// Module is compiled device code loaded into a device's context.
type Module struct {
	dev   *Device
	h     uintptr
	name  string
	funcs map[string]*Function
}

// Compile compiles the CUDA C source (its name appears in messages) with
// NVRTC for the device's architecture (-std=c++17 plus options) and loads
// it. Compiled images are cached on disk (KernelCacheDir) and per process,
// and loaded modules per device, keyed by sha256 of source, options,
// target, NVRTC and driver versions and the device's compute capability
// (kernelKey). A compilation error carries NVRTC's log. Entry points must
// be extern "C".
func (c *Ctx) Compile(name, source string, options ...string) (*Module, error) {
	d := c.live()
	if err := d.Err(); err != nil {
		return nil, err
	}
	if err := nvrtcLib.load(); err != nil {
		return nil, err
	}
	key, opts, ptx, err := compileKey(d, source, options)
	if err != nil {
		return nil, err
	}
	if m := d.modules[key]; m != nil {
		noteCache(func(s *CompileStats) { s.Reused++ })
		return m, nil
	}
	t0 := time.Now()
	dir := KernelCacheDir()
	img, inMemory, release := claimImage(key)
	defer release()
	fromDisk := false
	compile := func(name, source string, opts []string, ptx bool) (image, error) {
		t := time.Now()
		img, err := compileImage(name, source, opts, ptx)
		noteCache(func(s *CompileStats) { s.NVRTC += time.Since(t) })
		return img, err
	}
	if !inMemory {
		img, fromDisk, err = cachedImage(dir, key, name, source, opts, ptx, compile)
		if err != nil {
			return nil, err
		}
	}
	var mod uintptr
	err = c.do("cuModuleLoadData", name, cuModuleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&img.data[0])))
	if err != nil && fromDisk && d.Err() == nil {
		// The driver refused a cached image: compile it afresh and
		// replace the entry.
		noteCache(func(s *CompileStats) { s.CacheErrors++; s.LastCacheError = err.Error() })
		os.Remove(kernelPath(dir, key, ptx))
		if img, fromDisk, err = cachedImage(dir, key, name, source, opts, ptx, compile); err != nil {
			return nil, err
		}
		err = c.do("cuModuleLoadData", name, cuModuleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&img.data[0])))
	}
	if err != nil {
		return nil, err
	}
	if !inMemory {
		imageMu.Lock()
		imageCache[key] = img
		imageMu.Unlock()
	}
	noteCache(func(s *CompileStats) {
		s.Modules++
		s.Wall += time.Since(t0)
		s.CacheDir = dir
		switch {
		case inMemory:
			s.FromMemory++
		case fromDisk:
			s.FromDisk++
		default:
			s.Compiled++
		}
	})
	m := &Module{dev: d, h: mod, name: name, funcs: map[string]*Function{}}
	d.modules[key] = m
	return m, nil
}

// compileKey returns the cache key of source compiled for d's
// architecture with options, the NVRTC options, and whether the image is
// PTX (for a device newer than NVRTC's architectures).
func compileKey(d *Device, source string, options []string) (key [32]byte, opts []string, ptx bool, err error) {
	ma, mi, err := NVRTCVersion()
	if err != nil {
		return key, nil, false, err
	}
	archs, err := nvrtcArchs()
	if err != nil {
		return key, nil, false, err
	}
	tgt, ptx, err := target(d.info.Major*10+d.info.Minor, archs)
	if err != nil {
		return key, nil, false, err
	}
	opts = append([]string{"--gpu-architecture=" + tgt, "-std=c++17"}, options...)
	drvVer, err := DriverVersion()
	if err != nil {
		return key, nil, false, err
	}
	key = kernelKey(keyInput{source: source, opts: opts, target: tgt, ptx: ptx, nvrtc: [2]int{ma, mi},
		driver: drvVer, drvFile: driverFileName(), deviceC: d.info.Major*10 + d.info.Minor})
	return key, opts, ptx, nil
}

// claimImage returns the process's image of key if it has one; otherwise
// it claims key's compile (or disk read), so that there is one per image
// at a time: a second caller of the same key (another device of the
// process, such as a warm-up's) waits for the first and takes its image;
// if the first failed, it claims the compile itself. The caller calls
// release (never nil) once it has stored the image or failed.
func claimImage(key [32]byte) (img image, inMemory bool, release func()) {
	imageMu.Lock()
	defer imageMu.Unlock()
	for {
		if img, ok := imageCache[key]; ok {
			return img, true, func() {}
		}
		ch, busy := imageFlight[key]
		if !busy {
			ch = make(chan struct{})
			imageFlight[key] = ch
			return image{}, false, func() {
				imageMu.Lock()
				delete(imageFlight, key)
				imageMu.Unlock()
				close(ch)
			}
		}
		imageMu.Unlock()
		<-ch
		imageMu.Lock()
	}
}

// compileImage runs NVRTC once; on NVRTC_ERROR_BUILTIN_OPERATION_FAILURE it
// preloads the builtins from NVRTC's own folder and tries again.
func compileImage(name, source string, opts []string, ptx bool) (image, error) {
	img, code, err := nvrtcCompile(name, source, opts, ptx)
	if err != nil && code == nvrtcBuiltinFailure {
		if real := mappedPath("libnvrtc.so"); real != "" {
			preloadFrom(filepath.Dir(real), []string{"libnvrtc-builtins.so*"})
			img, _, err = nvrtcCompile(name, source, opts, ptx)
		}
	}
	return img, err
}

// nvrtcCompile compiles source to a cubin (or PTX) and returns it, or the
// failing status with the program log.
func nvrtcCompile(name, source string, opts []string, ptx bool) (image, int, error) {
	var pin runtime.Pinner
	defer pin.Unpin()
	src := append([]byte(source), 0)
	nm := append([]byte(name), 0)
	copts := make([]*byte, len(opts))
	for i, o := range opts {
		b := append([]byte(o), 0)
		pin.Pin(&b[0])
		copts[i] = &b[0]
	}
	var optPtr uintptr
	if len(copts) > 0 {
		pin.Pin(&copts[0])
		optPtr = uintptr(unsafe.Pointer(&copts[0]))
	}
	var prog uintptr
	if r := int(int32(call(nvrtcCreateProgram, uintptr(unsafe.Pointer(&prog)), uintptr(unsafe.Pointer(&src[0])), uintptr(unsafe.Pointer(&nm[0])), 0, 0, 0))); r != 0 {
		return image{}, r, nvrtcError("nvrtcCreateProgram", name, r, "")
	}
	defer call(nvrtcDestroyProgram, uintptr(unsafe.Pointer(&prog)))
	r := int(int32(call(nvrtcCompileProgram, prog, uintptr(len(copts)), optPtr)))
	runtime.KeepAlive(src)
	runtime.KeepAlive(nm)
	if r != 0 {
		return image{}, r, nvrtcError("nvrtcCompileProgram", name, r, programLog(prog))
	}
	sizeFn, getFn, sizeName, getName := nvrtcGetCUBINSize, nvrtcGetCUBIN, "nvrtcGetCUBINSize", "nvrtcGetCUBIN"
	if ptx {
		sizeFn, getFn, sizeName, getName = nvrtcGetPTXSize, nvrtcGetPTX, "nvrtcGetPTXSize", "nvrtcGetPTX"
	}
	var n uintptr
	if r := int(int32(call(sizeFn, prog, uintptr(unsafe.Pointer(&n))))); r != 0 {
		return image{}, r, nvrtcError(sizeName, name, r, "")
	}
	if n == 0 {
		return image{}, 0, fmt.Errorf("cuda: NVRTC produced an empty image for %s", name)
	}
	data := make([]byte, n+1) // NUL-terminated for PTX
	if r := int(int32(call(getFn, prog, uintptr(unsafe.Pointer(&data[0]))))); r != 0 {
		return image{}, r, nvrtcError(getName, name, r, "")
	}
	return image{data: data, ptx: ptx}, 0, nil
}

// programLog returns NVRTC's log of prog.
func programLog(prog uintptr) string {
	var n uintptr
	if int32(call(nvrtcGetProgramLogSize, prog, uintptr(unsafe.Pointer(&n)))) != 0 || n <= 1 {
		return ""
	}
	b := make([]byte, n)
	if int32(call(nvrtcGetProgramLog, prog, uintptr(unsafe.Pointer(&b[0])))) != 0 {
		return ""
	}
	return cstringBytes(b)
}

// Function is a kernel entry point of a loaded Module.
type Function struct {
	dev  *Device
	h    uintptr
	name string
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// Function returns the extern "C" kernel called name (cached). It must be
// called inside Do.
func (m *Module) Function(name string) (*Function, error) {
	if f := m.funcs[name]; f != nil {
		return f, nil
	}
	c := &m.dev.cur
	cname := append([]byte(name), 0)
	var h uintptr
	if err := c.do("cuModuleGetFunction", m.name+"."+name, cuModuleGetFunction, uintptr(unsafe.Pointer(&h)), m.h, uintptr(unsafe.Pointer(&cname[0]))); err != nil {
		return nil, err
	}
	f := &Function{dev: m.dev, h: h, name: name}
	m.funcs[name] = f
	return f, nil
}

// MaxActiveBlocks returns how many blocks of threads threads, each with
// dynamicShared bytes of dynamic shared memory, fit on one multiprocessor
// at once (the occupancy calculator of the driver, under f's registers,
// shared memory and carveout). It must be called inside Do.
func (f *Function) MaxActiveBlocks(threads, dynamicShared int) (int, error) {
	var n int32
	err := f.dev.cur.do("cuOccupancyMaxActiveBlocksPerMultiprocessor", f.name, cuOccupancyMaxActiveBlocks,
		uintptr(unsafe.Pointer(&n)), f.h, uintptr(threads), uintptr(dynamicShared))
	return int(n), err
}

// SetMaxDynamicShared allows launches of f with up to bytes of dynamic
// shared memory (needed above 48 KiB). It must be called inside Do.
func (f *Function) SetMaxDynamicShared(bytes int) error {
	return f.dev.cur.do("cuFuncSetAttribute", f.name, cuFuncSetAttribute, f.h, funcAttrMaxDynamicShared, uintptr(bytes))
}

// FuncAttributes are what the compiler gave a kernel.
type FuncAttributes struct {
	// Registers is the number of registers per thread.
	Registers int
	// LocalBytes is the local memory per thread (spills, local arrays).
	LocalBytes int
	// SharedBytes is the static shared memory per block.
	SharedBytes int
	// MaxThreads is the largest block the kernel can be launched with.
	MaxThreads int
}

// Attributes returns f's registers, local and static shared memory and
// largest block. It must be called inside Do.
func (f *Function) Attributes() (FuncAttributes, error) {
	var a FuncAttributes
	for _, q := range []struct {
		attr int
		dst  *int
	}{{funcAttrNumRegs, &a.Registers}, {funcAttrLocalBytes, &a.LocalBytes}, {funcAttrSharedBytes, &a.SharedBytes}, {funcAttrMaxThreads, &a.MaxThreads}} {
		var v int32
		if err := f.dev.cur.do("cuFuncGetAttribute", f.name, cuFuncGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(q.attr), f.h); err != nil {
			return a, err
		}
		*q.dst = int(v)
	}
	return a, nil
}
