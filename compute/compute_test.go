package compute

import (
	"errors"
	"strings"
	"testing"

	"dspk/internal/cuda"
)

// haveGPU reports whether cuda:0 opens here, with the reason if not.
func haveGPU() (bool, error) {
	d, err := cuda.Open(0)
	if err != nil {
		return false, err
	}
	if err := cuda.LoadLibraries(); err != nil {
		d.Close()
		return false, err
	}
	return true, d.Close()
}

func TestOpenCPU(t *testing.T) {
	d, reason, err := Open("cpu")
	if err != nil || d.Kind() != CPU || d.Spec() != "cpu" || reason != "requested" || d.GPU().Name != "" {
		t.Fatalf("Open(cpu) = %v, %q, %v", d, reason, err)
	}
	if !strings.HasPrefix(d.String(), "cpu (") {
		t.Errorf("String() = %q", d.String())
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}

func TestOpenBad(t *testing.T) {
	for _, s := range []string{"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU"} {
		if d, _, err := Open(s); err == nil {
			t.Errorf("Open(%q) = %v, want an error", s, d)
		}
	}
}

// TestOpenAuto checks that auto takes the GPU when there is one and the
// CPU, with a reason, when there is not.
func TestOpenAuto(t *testing.T) {
	gpu, gerr := haveGPU()
	d, reason, err := Open("auto")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	t.Logf("auto: %v: %s", d, reason)
	if gpu {
		if d.Kind() != CUDA || d.Spec() != "cuda:0" || d.GPU().Name == "" || !strings.HasPrefix(reason, "first CUDA GPU") {
			t.Errorf("auto with a GPU: %v, %q", d, reason)
		}
		return
	}
	if d.Kind() != CPU || d.Reason() != reason || reason == "" {
		t.Errorf("auto without a GPU: %v, %q", d, reason)
	}
	if errors.Is(gerr, ErrNotFound) && strings.Contains(gerr.Error(), "CUDA driver") && !strings.HasPrefix(reason, "no CUDA driver: ") {
		t.Errorf("auto without a driver: reason %q, want \"no CUDA driver: …\"", reason)
	}
}

// TestOpenCUDA checks that an explicit GPU that is absent is an error
// wrapping ErrNotFound, and that a present one opens.
func TestOpenCUDA(t *testing.T) {
	gpu, _ := haveGPU()
	d, _, err := Open("cuda:0")
	if !gpu {
		if err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "cuda:0") {
			t.Errorf("Open(cuda:0) without a GPU: %v, %v; want an error wrapping ErrNotFound naming cuda:0", d, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", d)
	if d.Kind() != CUDA || d.Reason() != "requested" {
		t.Errorf("Open(cuda:0) = %v (%s)", d, d.Reason())
	}
	if err := d.Do(func(c *Ctx) error { _, err := c.Alloc(1); return err }); err != nil {
		t.Error(err)
	}
	d.Close()
	if _, _, err := Open("cuda:99"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(cuda:99) = %v, want ErrNotFound", err)
	}
}

func TestDevices(t *testing.T) {
	gpu, _ := haveGPU()
	r := Devices()
	for _, d := range r.Devices {
		t.Logf("%+v", d)
	}
	t.Logf("libraries: %v; cuda: %q", r.Libraries, r.CUDA)
	if len(r.Devices) == 0 || r.Devices[0].Spec != "cpu" || r.Devices[0].Cores < 1 {
		t.Fatalf("Devices() = %+v, want the CPU first", r.Devices)
	}
	if !gpu {
		if r.CUDA == "" || len(r.Devices) != 1 {
			t.Errorf("without a GPU: %+v", r)
		}
		return
	}
	if r.CUDA != "" || len(r.Devices) < 2 || r.Devices[1].Spec != "cuda:0" || r.Devices[1].Arch == "" || r.Devices[1].Memory == 0 || r.Devices[1].DriverVersion == 0 {
		t.Errorf("with a GPU: %+v", r)
	}
	if len(r.Libraries) < 3 {
		t.Errorf("libraries %v: want libcuda, libnvrtc and libcublas", r.Libraries)
	}
}
