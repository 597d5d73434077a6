package cuda

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// sourceTag numbers the kernel sources that a test wants compiled anew:
// a number no earlier test of the process used, so that neither the
// process cache nor (with a fresh cache folder) the disk holds its image.
var sourceTag atomic.Int64

// freshTag returns the next number of sourceTag.
func freshTag() int64 { return sourceTag.Add(1) }

// forget drops the image and module of fill.cu from the process cache
// and the device, as a new process would start.
func forget(d *Device) {
	imageMu.Lock()
	defer imageMu.Unlock()
	for k, m := range d.modules {
		if m.name == "fill.cu" {
			call(cuModuleUnload, m.h)
			delete(d.modules, k)
			delete(imageCache, k)
		}
	}
}

// TestCompileDiskCache checks on the GPU that Compile stores the image in
// the on-disk cache, that a fresh start loads it from there without NVRTC
// and runs it, and that a damaged entry is compiled again.
func TestCompileDiskCache(t *testing.T) {
	dev := device(t)
	dir := t.TempDir()
	SetKernelCacheDir(dir)
	defer func() {
		cacheMu.Lock()
		cacheSet = false
		cacheMu.Unlock()
	}()
	// A source no other test of the process compiled, into a fresh cache
	// folder, so that nothing is cached yet.
	src := fmt.Sprintf("extern \"C\" __global__ void fill(float *y, int n) { int i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) y[i] = %d.0f + i; }\n", freshTag())
	run := func(c *Ctx) (CompileStats, error) {
		before := KernelStats()
		m, err := c.Compile("fill.cu", src)
		if err != nil {
			return CompileStats{}, err
		}
		f, err := m.Function("fill")
		if err != nil {
			return CompileStats{}, err
		}
		const n = 1000
		y, err := c.Alloc(4 * n)
		if err != nil {
			return CompileStats{}, err
		}
		defer c.Free(y)
		if err := c.Memset32(y.Ptr, 0x7fc00000, n); err != nil {
			return CompileStats{}, err
		}
		if err := c.Launch(f, D1((n+127)/128), D1(128), 0, y, int32(n)); err != nil {
			return CompileStats{}, err
		}
		got := make([]float32, n)
		if err := Download(c, got, y.Ptr); err != nil {
			return CompileStats{}, err
		}
		for i := 1; i < n; i++ {
			if got[i] != got[0]+float32(i) {
				return CompileStats{}, fmt.Errorf("y[%d] = %v, y[0] = %v", i, got[i], got[0])
			}
		}
		after := KernelStats()
		after.Compiled -= before.Compiled
		after.FromDisk -= before.FromDisk
		after.FromMemory -= before.FromMemory
		after.CacheErrors -= before.CacheErrors
		return after, nil
	}
	do(t, func(c *Ctx) error {
		s, err := run(c)
		if err != nil {
			return err
		}
		if s.Compiled != 1 || s.FromDisk != 0 || s.CacheDir != dir {
			t.Errorf("cold: %+v, want one compile into %s", s, dir)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			t.Fatalf("cold: %d cache files, want 1", len(ents))
		}
		forget(dev)
		t0 := time.Now()
		if s, err = run(c); err != nil {
			return err
		}
		t.Logf("warm load and launch: %v", time.Since(t0))
		if s.Compiled != 0 || s.FromDisk != 1 {
			t.Errorf("warm: %+v, want one load from disk", s)
		}
		// Damage the entry: it must be compiled again and rewritten.
		path := dir + "/" + ents[0].Name()
		b, _ := os.ReadFile(path)
		b[len(b)-1] ^= 0xff
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		forget(dev)
		if s, err = run(c); err != nil {
			return err
		}
		if s.Compiled != 1 || s.FromDisk != 0 || s.CacheErrors != 1 {
			t.Errorf("damaged: %+v, want one compile and one cache error", s)
		}
		forget(dev)
		if s, err = run(c); err != nil {
			return err
		}
		if s.FromDisk != 1 {
			t.Errorf("after the rewrite: %+v, want a load from disk", s)
		}
		return nil
	})
}

// TestCompileOnce compiles one new source from two devices of the process
// at once (as the pipeline and its warm-up do): one of them compiles it,
// the other waits and loads the same image from memory, and both run it.
func TestCompileOnce(t *testing.T) {
	dev := device(t)
	other, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// A source no other test of the process compiled, and a fresh cache
	// folder, so that the one compile is NVRTC's and not a disk load.
	cacheMu.Lock()
	set, d := cacheSet, cacheDirSet
	cacheMu.Unlock()
	SetKernelCacheDir(t.TempDir())
	defer func() {
		cacheMu.Lock()
		cacheSet, cacheDirSet = set, d
		cacheMu.Unlock()
	}()
	src := fmt.Sprintf("extern \"C\" __global__ void once(int *y) { *y = %d; }\n", freshTag()+7)
	before := KernelStats()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, 2)
	for i, d := range []*Device{dev, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = d.Do(func(c *Ctx) error {
				m, err := c.Compile("once.cu", src)
				if err != nil {
					return err
				}
				f, err := m.Function("once")
				if err != nil {
					return err
				}
				y, err := c.Alloc(4)
				if err != nil {
					return err
				}
				defer c.Free(y)
				if err := c.Launch(f, D1(1), D1(1), 0, y); err != nil {
					return err
				}
				got := make([]int32, 1)
				if err := Download(c, got, y.Ptr); err != nil {
					return err
				}
				if got[0] < 7 {
					return fmt.Errorf("the kernel wrote %d", got[0])
				}
				return nil
			})
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	after := KernelStats()
	if c, m := after.Compiled-before.Compiled, after.FromMemory-before.FromMemory; c != 1 || m != 1 {
		t.Errorf("two devices compiling one source at once: %d compiles and %d loads from memory, want 1 and 1", c, m)
	}
}
