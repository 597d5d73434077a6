package cuda

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// TestMapHost checks the mappings behind pinned buffers on the host alone:
// aligned to a huge page, at least as long as asked, every page faulted
// in and writable, and unmapped again.
func TestMapHost(t *testing.T) {
	if !supported {
		t.Skip("no mappings on this OS")
	}
	for _, n := range []int{1, 4095, 4096, 4097, hugePage - 1, hugePage + 1, 46_292_371} {
		m, p, err := mapHost(n)
		if err != nil {
			t.Fatalf("mapHost(%d): %v", n, err)
		}
		if p%hugePage != 0 || uintptr(unsafe.Pointer(&m[0])) != p || len(m) < n || len(m)%hugePage != 0 {
			t.Errorf("mapHost(%d): address %#x, %d bytes", n, p, len(m))
		}
		b := m[:n]
		for i := range b {
			b[i] = 0xa5 // anonymous memory starts zeroed; poison it
		}
		faultIn(b)
		for o := 0; o < n; o += 4096 {
			if b[o] != 0 {
				t.Fatalf("n=%d: faultIn left byte %d = %#x", n, o, b[o])
			}
		}
		if n > 1 && b[n-1] != 0xa5 && (n-1)%4096 != 0 {
			t.Errorf("n=%d: faultIn wrote byte %d, which starts no page", n, n-1)
		}
		unmapHost(m)
	}
}

// TestAllocHostRegistered checks the fast path of AllocHost on the GPU:
// window-sized and odd-sized buffers are registered memory, and data
// round-trips through the device at odd offsets; without mapped memory
// PinHost falls back to cuMemHostAlloc.
func TestAllocHostRegistered(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	do(t, func(c *Ctx) error {
		for _, n := range []int{3, 4097, 46_292_371} {
			h, err := c.AllocHost(n)
			if err != nil {
				return err
			}
			if !h.Registered() {
				t.Errorf("AllocHost(%d) fell back to cuMemHostAlloc", n)
			}
			src := make([]byte, n)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			copy(h.Bytes(), src)
			d, err := c.Alloc(n)
			if err != nil {
				c.FreeHost(h)
				return err
			}
			off := min(1, n-1)
			err = c.CopyHtoD(d.Ptr, h, off, n-off)
			if err == nil {
				err = c.Sync()
			}
			if err == nil {
				clear(h.Bytes())
				err = c.CopyDtoH(h, 0, d.Ptr, n-off)
			}
			if err == nil {
				err = c.Sync()
			}
			c.Free(d)
			if err != nil {
				c.FreeHost(h)
				return err
			}
			if i := firstDiff(h.Bytes()[:n-off], src[off:]); i >= 0 {
				t.Errorf("n=%d: byte %d = %d after the round trip, want %d", n, i, h.Bytes()[i], src[off+i])
			}
			if err := c.FreeHost(h); err != nil {
				return err
			}
			if h.Len() != 0 || h.Registered() {
				t.Errorf("n=%d: FreeHost left %d bytes, registered %v", n, h.Len(), h.Registered())
			}
		}
		// Without mapped memory PinHost falls back to cuMemHostAlloc.
		h, err := c.PinHost(nil, 4097)
		if err != nil {
			return err
		}
		if h.Registered() || h.Len() != 4097 {
			t.Errorf("PinHost(nil): registered %v, %d bytes", h.Registered(), h.Len())
		}
		h.Bytes()[4096] = 7
		if err := c.FreeHost(h); err != nil {
			return err
		}
		return nil
	})
}

// TestCloseFinal checks, in a child process (it leaves cuBLAS unusable),
// that Close leaves the primary context to the CUDA runtime inside cuBLAS
// once a GEMM ran, that CloseFinal destroys it, and that the driver API
// works on a device opened afterwards.
func TestCloseFinal(t *testing.T) {
	if os.Getenv("DSPK_CUDA_CLOSEFINAL_CHILD") == "1" {
		closeFinalChild(t)
		return
	}
	device(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCloseFinal$", "-test.v")
	cmd.Env = append(os.Environ(), "DSPK_CUDA_CLOSEFINAL_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil || !strings.Contains(string(out), "close final checked") {
		t.Errorf("child failed: %v", err)
	}
}

func closeFinalChild(t *testing.T) {
	if err := LoadLibraries(); err != nil {
		t.Skipf("no cuBLAS: %v", err)
	}
	gemm := func(d *Device) {
		t.Helper()
		err := d.Do(func(c *Ctx) error {
			b, err := c.Alloc(4 * 4)
			if err != nil {
				return err
			}
			defer c.Free(b)
			if err := c.Sgemm(NoTrans, NoTrans, 2, 2, 1, 1, b.Ptr, 2, b.Ptr, 1, 0, b.Ptr, 2); err != nil {
				return err
			}
			return c.Sync()
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	gemm(d)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	active, err := d.primaryActive()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after a GEMM and Close the primary context is active: %v", active)
	d, err = Open(0)
	if err != nil {
		t.Fatal(err)
	}
	gemm(d)
	if err := d.CloseFinal(); err != nil {
		t.Fatal(err)
	}
	if err := d.CloseFinal(); err != nil {
		t.Errorf("a second CloseFinal: %v", err)
	}
	if active, err := d.primaryActive(); err != nil || active {
		t.Fatalf("after CloseFinal the primary context is active: %v (%v)", active, err)
	}
	d, err = Open(0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x := []float32{1, 2, 3}
	err = d.Do(func(c *Ctx) error {
		m, err := c.Compile("test.cu", testKernels)
		if err != nil {
			return err
		}
		f, err := m.Function("scale")
		if err != nil {
			return err
		}
		b, err := c.Alloc(4 * len(x))
		if err != nil {
			return err
		}
		defer c.Free(b)
		if err := Upload(c, b.Ptr, x); err != nil {
			return err
		}
		if err := c.Launch(f, D1(1), D1(32), 0, b, b.Ptr, float32(2), int32(len(x))); err != nil {
			return err
		}
		return Download(c, x, b.Ptr)
	})
	if err != nil {
		t.Fatal(err)
	}
	if x[0] != 2 || x[1] != 4 || x[2] != 6 {
		t.Fatalf("kernel after CloseFinal: %v, want [2 4 6]", x)
	}
	t.Log("close final checked")
}

// TestConnectionsDefault checks, in child processes (the driver is
// initialised once per process), that initialising the driver sets
// CUDA_DEVICE_MAX_CONNECTIONS to Connections where the environment does
// not set it, and keeps a value the user set. It needs no GPU: the
// variable is set before the driver is looked for.
func TestConnectionsDefault(t *testing.T) {
	if os.Getenv("DSPK_CUDA_CONNECTIONS_CHILD") == "1" {
		DeviceCount() // initialises the driver, or fails to find it
		t.Logf("CUDA_DEVICE_MAX_CONNECTIONS=%s", os.Getenv("CUDA_DEVICE_MAX_CONNECTIONS"))
		return
	}
	for _, c := range []struct{ env, want string }{{"", fmt.Sprint(Connections)}, {"5", "5"}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConnectionsDefault$", "-test.v")
		cmd.Env = []string{"DSPK_CUDA_CONNECTIONS_CHILD=1"}
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "CUDA_DEVICE_MAX_CONNECTIONS=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		if c.env != "" {
			cmd.Env = append(cmd.Env, "CUDA_DEVICE_MAX_CONNECTIONS="+c.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "CUDA_DEVICE_MAX_CONNECTIONS="+c.want+"\n") {
			t.Errorf("environment %q: want %s, child said (%v):\n%s", c.env, c.want, err, out)
		}
	}
}
