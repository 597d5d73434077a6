package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The kernel cache is tested without a GPU: compile is a mock that counts
// its calls and returns an image derived from its inputs.

// mockCompiler returns a compileFunc that counts its calls and makes an
// image of random length (at least 1) whose bytes depend on the source
// and options.
func mockCompiler(calls *atomic.Int32, fail error) compileFunc {
	return func(name, source string, opts []string, ptx bool) (image, error) {
		calls.Add(1)
		if fail != nil {
			return image{}, fail
		}
		seed := uint64(len(source))
		for _, b := range []byte(source + strings.Join(opts, "\x00")) {
			seed = seed*1099511628211 + uint64(b)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		data := make([]byte, 1+rng.IntN(5000))
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		return image{data: data, ptx: ptx}, nil
	}
}

func baseKey() keyInput {
	return keyInput{source: "extern \"C\" __global__ void k() {}", opts: []string{"--gpu-architecture=sm_90", "-std=c++17", "-DN=4"},
		target: "sm_90", nvrtc: [2]int{13, 0}, driver: 13000, drvFile: "libcuda.so.580.159.04", deviceC: 90}
}

// TestKernelKey checks that the key is stable and changes with every
// input it depends on, and that inputs cannot run into each other.
func TestKernelKey(t *testing.T) {
	b := baseKey()
	k0 := kernelKey(b)
	if kernelKey(baseKey()) != k0 {
		t.Fatal("the key of the same inputs changed")
	}
	changes := map[string]func(*keyInput){
		"source":       func(k *keyInput) { k.source += " " },
		"option value": func(k *keyInput) { k.opts = []string{"--gpu-architecture=sm_90", "-std=c++17", "-DN=5"} },
		"option order": func(k *keyInput) { k.opts = []string{"--gpu-architecture=sm_90", "-DN=4", "-std=c++17"} },
		"option added": func(k *keyInput) { k.opts = append(append([]string{}, k.opts...), "-lineinfo") },
		"options joined": func(k *keyInput) {
			k.opts = []string{"--gpu-architecture=sm_90", "-std=c++17-DN=4"}
		},
		"target":        func(k *keyInput) { k.target = "sm_100" },
		"kind":          func(k *keyInput) { k.ptx = true },
		"nvrtc major":   func(k *keyInput) { k.nvrtc[0] = 12 },
		"nvrtc minor":   func(k *keyInput) { k.nvrtc[1] = 1 },
		"driver":        func(k *keyInput) { k.driver = 13010 },
		"driver build":  func(k *keyInput) { k.drvFile = "libcuda.so.580.95.05" },
		"architecture":  func(k *keyInput) { k.deviceC = 100 },
		"source/option": func(k *keyInput) { k.source += "--gpu-architecture=sm_90"; k.opts = k.opts[1:] },
	}
	seen := map[[32]byte]string{k0: "base"}
	for what, f := range changes {
		k := baseKey()
		f(&k)
		key := kernelKey(k)
		if prev, ok := seen[key]; ok {
			t.Errorf("changing the %s gives the key of %s", what, prev)
		}
		seen[key] = what
	}
}

// TestKernelCacheRoundTrip checks that the first use compiles and stores
// the image, the next ones read it back unchanged without compiling, and
// that cubin and PTX entries of one key are kept apart.
func TestKernelCacheRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "kernels") // created on demand
	var calls atomic.Int32
	comp := mockCompiler(&calls, nil)
	for _, ptx := range []bool{false, true} {
		k := baseKey()
		k.ptx = ptx
		key := kernelKey(k)
		calls.Store(0)
		want, _ := comp("", k.source, k.opts, ptx)
		calls.Store(0)
		img, disk, err := cachedImage(dir, key, "k.cu", k.source, k.opts, ptx, comp)
		if err != nil || disk || calls.Load() != 1 || !bytes.Equal(img.data, want.data) || img.ptx != ptx {
			t.Fatalf("ptx=%v first use: err %v, from disk %v, %d compiles, image equal %v", ptx, err, disk, calls.Load(), bytes.Equal(img.data, want.data))
		}
		for i := range 3 {
			img, disk, err = cachedImage(dir, key, "k.cu", k.source, k.opts, ptx, comp)
			if err != nil || !disk || calls.Load() != 1 || !bytes.Equal(img.data, want.data) || img.ptx != ptx {
				t.Fatalf("ptx=%v use %d: err %v, from disk %v, %d compiles, image equal %v", ptx, i+2, err, disk, calls.Load(), bytes.Equal(img.data, want.data))
			}
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("%d files in the cache, want a cubin and a PTX entry", len(ents))
	}
}

// TestKernelCacheCorrupt checks that every kind of bad entry is compiled
// again and replaced by a good one.
func TestKernelCacheCorrupt(t *testing.T) {
	k := baseKey()
	key := kernelKey(k)
	var calls atomic.Int32
	comp := mockCompiler(&calls, nil)
	want, _ := comp("", k.source, k.opts, false)
	good := func(t *testing.T, dir string) []byte {
		t.Helper()
		if _, _, err := cachedImage(dir, key, "k.cu", k.source, k.opts, false, comp); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(kernelPath(dir, key, false))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	damage := map[string]func([]byte) []byte{
		"empty":        func([]byte) []byte { return nil },
		"header only":  func(b []byte) []byte { return b[:kernelHeader] },
		"truncated":    func(b []byte) []byte { return b[:len(b)-1] },
		"longer":       func(b []byte) []byte { return append(b, 0) },
		"flipped byte": func(b []byte) []byte { b[len(b)-1] ^= 0x40; return b },
		"flipped sum":  func(b []byte) []byte { b[kernelHeader-1] ^= 1; return b },
		"wrong magic":  func(b []byte) []byte { b[0] = 'X'; return b },
		"wrong kind":   func(b []byte) []byte { b[len(kernelMagic)] = 1; return b },
		"bad kind":     func(b []byte) []byte { b[len(kernelMagic)] = 7; return b },
		"huge length":  func(b []byte) []byte { b[len(kernelMagic)+8] = 0xff; return b },
		"text":         func([]byte) []byte { return []byte("not a kernel\n") },
	}
	for what, f := range damage {
		t.Run(what, func(t *testing.T) {
			dir := t.TempDir()
			orig := good(t, dir)
			bad := f(bytes.Clone(orig))
			if err := os.WriteFile(kernelPath(dir, key, false), bad, 0o644); err != nil {
				t.Fatal(err)
			}
			calls.Store(0)
			errsBefore := KernelStats().CacheErrors
			img, disk, err := cachedImage(dir, key, "k.cu", k.source, k.opts, false, comp)
			if err != nil || disk || calls.Load() != 1 || !bytes.Equal(img.data, want.data) {
				t.Fatalf("err %v, from disk %v, %d compiles, image equal %v", err, disk, calls.Load(), bytes.Equal(img.data, want.data))
			}
			if KernelStats().CacheErrors <= errsBefore {
				t.Error("the bad entry was not counted")
			}
			if b, _ := os.ReadFile(kernelPath(dir, key, false)); !bytes.Equal(b, orig) {
				t.Error("the bad entry was not replaced by a good one")
			}
			if _, disk, _ := cachedImage(dir, key, "k.cu", k.source, k.opts, false, comp); !disk {
				t.Error("the replaced entry is not read back")
			}
		})
	}
}

// TestKernelCacheUnusable checks that a cache folder that cannot be read
// or written costs only the compile: an entry path that is a folder, and
// a cache "folder" that is a file.
func TestKernelCacheUnusable(t *testing.T) {
	k := baseKey()
	key := kernelKey(k)
	var calls atomic.Int32
	comp := mockCompiler(&calls, nil)
	want, _ := comp("", k.source, k.opts, false)

	dir := t.TempDir()
	if err := os.Mkdir(kernelPath(dir, key, false), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, file, filepath.Join(file, "kernels")} {
		for i := range 2 {
			calls.Store(0)
			img, disk, err := cachedImage(d, key, "k.cu", k.source, k.opts, false, comp)
			if err != nil || disk || calls.Load() != 1 || !bytes.Equal(img.data, want.data) {
				t.Fatalf("%s, use %d: err %v, from disk %v, %d compiles", d, i+1, err, disk, calls.Load())
			}
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestKernelCacheDisabledAndErrors checks that dir "" always compiles and
// writes nothing, and that a compile error is returned and stores nothing.
func TestKernelCacheDisabledAndErrors(t *testing.T) {
	k := baseKey()
	key := kernelKey(k)
	var calls atomic.Int32
	for i := range 3 {
		if _, disk, err := cachedImage("", key, "k.cu", k.source, k.opts, false, mockCompiler(&calls, nil)); err != nil || disk {
			t.Fatalf("use %d: err %v, from disk %v", i, err, disk)
		}
	}
	if calls.Load() != 3 {
		t.Errorf("%d compiles for 3 uses with the cache off", calls.Load())
	}
	dir := t.TempDir()
	bad := errors.New("nvrtc says no")
	if _, _, err := cachedImage(dir, key, "k.cu", k.source, k.opts, false, mockCompiler(&calls, bad)); !errors.Is(err, bad) {
		t.Fatalf("err %v, want the compile error", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed compile left %d files", len(ents))
	}
}

// TestKernelCacheConcurrent checks that processes (here goroutines)
// filling the same entry at once all get the image and leave one good
// entry and no temporary file.
func TestKernelCacheConcurrent(t *testing.T) {
	k := baseKey()
	key := kernelKey(k)
	dir := t.TempDir()
	var calls atomic.Int32
	comp := mockCompiler(&calls, nil)
	want, _ := comp("", k.source, k.opts, false)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			img, _, err := cachedImage(dir, key, "k.cu", k.source, k.opts, false, comp)
			if err == nil && !bytes.Equal(img.data, want.data) {
				err = fmt.Errorf("wrong image")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d files, want one entry", len(ents))
	}
	if img, err := readKernel(kernelPath(dir, key, false), false); err != nil || !bytes.Equal(img.data, want.data) {
		t.Errorf("entry after concurrent writes: %v", err)
	}
}

// TestKernelCacheDir checks the folder chosen from the environment and
// SetKernelCacheDir.
func TestKernelCacheDir(t *testing.T) {
	cacheMu.Lock()
	set, d := cacheSet, cacheDirSet
	cacheSet = false
	cacheMu.Unlock()
	defer func() {
		cacheMu.Lock()
		cacheSet, cacheDirSet = set, d
		cacheMu.Unlock()
	}()
	t.Setenv(EnvKernelCache, "")
	t.Setenv(EnvCache, "/some/where")
	if got := KernelCacheDir(); got != filepath.Join("/some/where", "kernels") {
		t.Errorf("with %s: %q", EnvCache, got)
	}
	for _, off := range []string{"off", "OFF", "0", "false", "no"} {
		t.Setenv(EnvKernelCache, off)
		if got := KernelCacheDir(); got != "" {
			t.Errorf("%s=%s: %q, want disabled", EnvKernelCache, off, got)
		}
	}
	t.Setenv(EnvKernelCache, "")
	t.Setenv(EnvCache, "")
	t.Setenv("XDG_CACHE_HOME", "/xdg")
	t.Setenv("HOME", "/home/u")
	if ucd, err := os.UserCacheDir(); err == nil {
		if got := KernelCacheDir(); got != filepath.Join(ucd, "dspk", "kernels") {
			t.Errorf("default: %q, want under %s", got, ucd)
		}
	}
	SetKernelCacheDir("/explicit")
	if got := KernelCacheDir(); got != "/explicit" {
		t.Errorf("after SetKernelCacheDir: %q", got)
	}
	SetKernelCacheDir("")
	t.Setenv(EnvCache, "/some/where")
	if got := KernelCacheDir(); got != "" {
		t.Errorf("after SetKernelCacheDir(\"\"): %q, want disabled", got)
	}
}
