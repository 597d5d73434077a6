package cluster

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"dspk/compute"
	"dspk/internal/emutest"
)

// emuOps are devOps whose memory is host slices and whose launches run
// the kernels in the emulator (testdata/emulate.cc, mode launch), one
// process per launch: the CUDA back end's host code (cuda.go: layout,
// draws, launches, transfers, relabelling, splits) runs here as on the
// GPU.
type emuOps struct {
	t        *testing.T
	mem      map[compute.Ptr][]byte
	next     compute.Ptr
	launches int
	onLaunch func(n int) // called with the launch count (if set)
}

func (o *emuOps) buf(p compute.Ptr, bytes int) []byte {
	// Buffers start at multiples of 2⁴⁰ (alloc): p may point inside one.
	base := p &^ (1<<40 - 1)
	off := int(p - base)
	b, ok := o.mem[base]
	if !ok || off+bytes > len(b) {
		o.t.Fatalf("emulated device: %d bytes at %#x (allocated %d, %v)", bytes, p, len(b), ok)
	}
	return b[off : off+bytes]
}

func (o *emuOps) alloc(bytes int) (compute.Mem, error) {
	o.next += 1 << 40
	o.mem[o.next] = make([]byte, bytes)
	return compute.Mem{Ptr: o.next, Bytes: bytes}, nil
}

func (o *emuOps) free(m compute.Mem) error {
	if _, ok := o.mem[m.Ptr]; !ok {
		return fmt.Errorf("free of %#x", m.Ptr)
	}
	delete(o.mem, m.Ptr)
	return nil
}

func (o *emuOps) memset32(p compute.Ptr, v uint32, n int) error {
	b := o.buf(p, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return nil
}

func (o *emuOps) upload(p compute.Ptr, v any) error {
	var w bytes.Buffer
	emutest.Put(&w, v)
	copy(o.buf(p, w.Len()), w.Bytes())
	return nil
}

func (o *emuOps) download(p compute.Ptr, v any) error {
	return binary.Read(bytes.NewReader(o.buf(p, binary.Size(v))), binary.LittleEndian, v)
}

func (o *emuOps) sync() error { return nil }

func (o *emuOps) launch(kernel string, grid, block compute.Dim3, shared int, args ...any) error {
	o.launches++
	if o.onLaunch != nil {
		o.onLaunch(o.launches)
	}
	var in bytes.Buffer
	var ptrs []compute.Ptr
	for _, a := range args {
		switch x := a.(type) {
		case compute.Ptr:
			b, ok := o.mem[x]
			if !ok {
				o.t.Fatalf("%s: argument %#x not allocated", kernel, x)
			}
			emutest.Put(&in, int32(0), int64(len(b)), b)
			ptrs = append(ptrs, x)
		case int32:
			emutest.Put(&in, int32(1), x)
		case float64:
			emutest.Put(&in, int32(2), x)
		default:
			o.t.Fatalf("%s: argument of type %T", kernel, a)
		}
	}
	one := func(v int) int { return max(v, 1) }
	out := bytes.NewReader(emu.Run(o.t, in.Bytes(), "launch", kernel, one(grid.X), one(grid.Y), one(grid.Z), block.X, len(args)))
	for _, p := range ptrs {
		emutest.Get(o.t, out, o.mem[p])
	}
	if out.Len() != 0 {
		o.t.Fatalf("%s: %d bytes left over", kernel, out.Len())
	}
	return nil
}

// TestCUDABackendEmulated runs the CUDA back end's whole host code with
// the kernels emulated against the CPU back end (labels, counts, Wall,
// group table bit for bit), on groups below, at and above the minimum,
// with few labels and rounds to keep the launches (one process each)
// few.
func TestCUDABackendEmulated(t *testing.T) {
	emu.Path(t)
	rng := rand.New(rand.NewPCG(testSeed(t), 51))
	in := randomInput(rng, []int{613, 1, 400, 777}, 14)
	prm := DefaultParams()
	prm.MinGroup, prm.InitLabels, prm.Candidates, prm.Rounds = 300, 12, 23, 5
	want := clusterOn(t, nil, in, prm)
	ops := &emuOps{t: t, mem: map[compute.Ptr][]byte{}}
	cl := &Clusterer{prm: prm, gpu: &cudaClusterer{ops: ops}}
	got, err := cl.Cluster(in)
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "emulated CUDA back end", got, want)
	if len(ops.mem) != 0 {
		t.Errorf("%d device buffers not freed", len(ops.mem))
	}
	if ops.launches < 1+2*prm.InitLabels {
		t.Errorf("%d launches", ops.launches)
	}
	t.Logf("%d groups, %d clusters, %d launches, %d k-means++ rounds", len(got.Groups), got.N, ops.launches, cl.gpu.times.rounds)
}

// TestCUDABackendEmulatedStops cancels the CUDA back end's clustering
// before it starts, at a launch of its k-means++ rounds and at one of its
// assignment rounds (kernels emulated): ClusterContext returns the context's error, the
// host stops launching within the round, and every device buffer is
// freed.
func TestCUDABackendEmulatedStops(t *testing.T) {
	emu.Path(t)
	rng := rand.New(rand.NewPCG(9, 51))
	in := randomInput(rng, []int{613, 777}, 14)
	prm := DefaultParams()
	prm.MinGroup, prm.InitLabels, prm.Candidates, prm.Rounds = 300, 12, 23, 5
	ops := &emuOps{t: t, mem: map[compute.Ptr][]byte{}}
	cl := &Clusterer{prm: prm, gpu: &cudaClusterer{ops: ops}}
	if _, err := cl.Cluster(in); err != nil {
		t.Fatal(err)
	}
	total := ops.launches
	// At launch 0: before the clustering starts (every group skipped).
	for _, at := range []int{0, 3, total - 6} {
		ops := &emuOps{t: t, mem: map[compute.Ptr][]byte{}}
		ctx, cancel := context.WithCancel(context.Background())
		if at == 0 {
			cancel()
		}
		ops.onLaunch = func(n int) {
			if n == at {
				cancel()
			}
		}
		cl := &Clusterer{prm: prm, gpu: &cudaClusterer{ops: ops}}
		res, err := cl.ClusterContext(ctx, in)
		cancel()
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("cancelled at launch %d of %d: result %v, error %v", at, total, res != nil, err)
		}
		if ops.launches > at+4 {
			t.Errorf("cancelled at launch %d of %d: %d launches", at, total, ops.launches)
		}
		if len(ops.mem) != 0 {
			t.Errorf("cancelled at launch %d: %d device buffers not freed", at, len(ops.mem))
		}
	}
}
