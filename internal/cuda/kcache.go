package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The on-disk kernel cache keeps the images NVRTC produced (cubins, or PTX
// where NVRTC is older than the device) between processes, so that a run
// loads its modules in about a tenth of a millisecond each instead of
// compiling them (tens to hundreds of milliseconds each). An entry is one
// file named by the hex key of kernelKey; its content is checked (magic,
// kind, length and sha256 of the image) before use, and an entry that is
// missing, unreadable, corrupt or that the driver refuses to load is
// compiled again and rewritten. Writes go to a temporary file in the same
// folder, renamed into place, so a reader never sees a partial entry and
// concurrent processes at most compile the same kernel twice. The cache is
// best effort: a folder that cannot be written only costs the compile.

// Environment variables of the kernel cache.
const (
	// EnvKernelCache set to "off" (or 0, false, no) disables the on-disk
	// kernel cache.
	EnvKernelCache = "DSPK_KERNEL_CACHE"
	// EnvCache names dspk's cache folder; kernels go in its kernels/
	// sub-folder. Without it the folder is os.UserCacheDir()/dspk.
	EnvCache = "DSPK_CACHE"
)

// kernelMagic starts every cache entry; the digit is the entry format.
const kernelMagic = "DSPKKRN1"

// kernelHeader is the entry header: magic, kind (0 cubin, 1 PTX), 8-byte
// little-endian image length, sha256 of the image.
const kernelHeader = len(kernelMagic) + 1 + 8 + sha256.Size

var (
	cacheMu     sync.Mutex
	cacheSet    bool   // SetKernelCacheDir was called
	cacheDirSet string // its folder
)

// KernelCacheDir returns the folder of the on-disk kernel cache, or ""
// when it is disabled: the folder given to SetKernelCacheDir, else
// $DSPK_CACHE/kernels, else os.UserCacheDir()/dspk/kernels; "" when
// DSPK_KERNEL_CACHE is off or no cache folder is known.
func KernelCacheDir() string {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if cacheSet {
		return cacheDirSet
	}
	return defaultKernelCacheDir()
}

// SetKernelCacheDir makes dir the on-disk kernel cache for the rest of
// the process ("" disables it), overriding the environment.
func SetKernelCacheDir(dir string) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	cacheSet, cacheDirSet = true, dir
}

// defaultKernelCacheDir is KernelCacheDir from the environment alone.
func defaultKernelCacheDir() string {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(EnvKernelCache))) {
	case "off", "0", "false", "no":
		return ""
	}
	if d := os.Getenv(EnvCache); d != "" {
		return filepath.Join(d, "kernels")
	}
	d, err := os.UserCacheDir()
	if err != nil || d == "" {
		return ""
	}
	return filepath.Join(d, "dspk", "kernels")
}

// keyInput is everything a compiled image depends on.
type keyInput struct {
	source  string
	opts    []string // the NVRTC options, the target architecture among them
	target  string   // sm_XY (a cubin) or compute_XY (PTX)
	ptx     bool
	nvrtc   [2]int // NVRTC major, minor
	driver  int    // cuDriverGetVersion
	drvFile string // the driver's file (its name carries the build, e.g. libcuda.so.580.159.04)
	deviceC int    // the device's compute capability (major·10 + minor)
}

// kernelKey is the cache key of an image: sha256 of the source, the
// options, the target, the kind, the NVRTC and driver versions (the
// driver's file name too) and the device's compute capability, each length-prefixed so that no two inputs
// share a key by concatenation.
func kernelKey(k keyInput) [32]byte {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	put(kernelMagic)
	put(k.source)
	put(fmt.Sprint(len(k.opts)))
	for _, o := range k.opts {
		put(o)
	}
	put(k.target)
	put(fmt.Sprint(k.ptx))
	put(fmt.Sprintf("nvrtc %d.%d driver %d cc %d", k.nvrtc[0], k.nvrtc[1], k.driver, k.deviceC))
	put(k.drvFile)
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return key
}

// kernelPath is the file of key's entry in dir.
func kernelPath(dir string, key [32]byte, ptx bool) string {
	ext := ".cubin"
	if ptx {
		ext = ".ptx"
	}
	return filepath.Join(dir, hex.EncodeToString(key[:])+ext)
}

// errBadEntry is wrapped by the errors of entries that fail their checks.
var errBadEntry = errors.New("bad kernel cache entry")

// readKernel reads and checks the entry at path.
func readKernel(path string, ptx bool) (image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return image{}, err
	}
	if len(b) < kernelHeader || string(b[:len(kernelMagic)]) != kernelMagic {
		return image{}, fmt.Errorf("%s: %w: no header", path, errBadEntry)
	}
	h := b[len(kernelMagic):kernelHeader]
	if (h[0] == 1) != ptx || h[0] > 1 {
		return image{}, fmt.Errorf("%s: %w: wrong kind", path, errBadEntry)
	}
	n := binary.LittleEndian.Uint64(h[1:9])
	data := b[kernelHeader:]
	if uint64(len(data)) != n || n == 0 {
		return image{}, fmt.Errorf("%s: %w: %d bytes, header says %d", path, errBadEntry, len(data), n)
	}
	if sum := sha256.Sum256(data); !bytes.Equal(sum[:], h[9:]) {
		return image{}, fmt.Errorf("%s: %w: checksum", path, errBadEntry)
	}
	return image{data: data, ptx: ptx}, nil
}

// writeKernel stores img at path atomically: a temporary file in the same
// folder, renamed into place.
func writeKernel(path string, img image) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	var h [kernelHeader]byte
	copy(h[:], kernelMagic)
	if img.ptx {
		h[len(kernelMagic)] = 1
	}
	binary.LittleEndian.PutUint64(h[len(kernelMagic)+1:], uint64(len(img.data)))
	sum := sha256.Sum256(img.data)
	copy(h[len(kernelMagic)+9:], sum[:])
	if _, err = f.Write(h[:]); err != nil {
		return err
	}
	if _, err = f.Write(img.data); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// compileFunc compiles source with NVRTC (compileImage; tests replace it).
type compileFunc func(name, source string, opts []string, ptx bool) (image, error)

// cachedImage returns the image of key: from the on-disk cache in dir
// (fromDisk), or compiled by compile and then stored there. dir "" skips
// the disk. A cache entry that cannot be read or fails its checks is
// compiled again and replaced; a failure to store is counted in the stats
// and otherwise ignored.
func cachedImage(dir string, key [32]byte, name, source string, opts []string, ptx bool, compile compileFunc) (img image, fromDisk bool, err error) {
	var path string
	if dir != "" {
		path = kernelPath(dir, key, ptx)
		if img, err := readKernel(path, ptx); err == nil {
			return img, true, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			noteCache(func(s *CompileStats) { s.CacheErrors++; s.LastCacheError = err.Error() })
		}
	}
	img, err = compile(name, source, opts, ptx)
	if err != nil {
		return image{}, false, err
	}
	if path != "" {
		if err := writeKernel(path, img); err != nil {
			noteCache(func(s *CompileStats) { s.CacheErrors++; s.LastCacheError = err.Error() })
		}
	}
	return img, false, nil
}

// CompileStats counts the module loads of the process ([Ctx.Compile]).
type CompileStats struct {
	// Modules is the number of Compile calls that loaded a module.
	Modules int
	// Compiled were compiled by NVRTC, FromDisk read from the on-disk
	// cache, FromMemory found compiled earlier in the process, Reused
	// already loaded on the device.
	Compiled, FromDisk, FromMemory, Reused int
	// Wall is the time spent in Compile (NVRTC and cache included);
	// NVRTC the part of it spent compiling.
	Wall, NVRTC time.Duration
	// CacheDir is the on-disk cache used ("" when disabled).
	CacheDir string
	// CacheErrors counts entries that could not be read, failed their
	// checks or could not be written; LastCacheError is the last.
	CacheErrors    int
	LastCacheError string
}

var (
	statsMu sync.Mutex
	stats   CompileStats
)

// noteCache updates the process's compile statistics.
func noteCache(f func(*CompileStats)) {
	statsMu.Lock()
	f(&stats)
	statsMu.Unlock()
}

// KernelStats returns the process's compile statistics so far.
func KernelStats() CompileStats {
	statsMu.Lock()
	defer statsMu.Unlock()
	return stats
}

var (
	driverFileOnce sync.Once
	driverFile     string
)

// driverFileName returns the base name of the driver library mapped into
// the process (e.g. libcuda.so.580.159.04), read once.
func driverFileName() string {
	driverFileOnce.Do(func() { driverFile = filepath.Base(mappedPath("libcuda.so")) })
	return driverFile
}
