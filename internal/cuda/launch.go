package cuda

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// Dim3 is a grid or block size; zero components count as 1.
type Dim3 struct{ X, Y, Z int }

// D1 returns the one-dimensional size {x, 1, 1}.
func D1(x int) Dim3 { return Dim3{x, 1, 1} }

func (d Dim3) dims() (uintptr, uintptr, uintptr) {
	one := func(v int) uintptr {
		if v < 0 {
			panic(fmt.Sprintf("cuda: negative launch dimension %d", v))
		}
		if v == 0 {
			return 1
		}
		return uintptr(v)
	}
	return one(d.X), one(d.Y), one(d.Z)
}

// Prepared is a kernel launch whose arguments live in a pinned block, so
// that launching it costs one purego.SyscallN and no allocation (~5 µs of
// host time). Change arguments in place with [Prepared.Set]; release the
// block with [Prepared.Free].
type Prepared struct {
	f      *Function
	grid   Dim3
	block  Dim3
	shared int
	slots  []uint64
	params []unsafe.Pointer
	kinds  []string
	pin    runtime.Pinner
	call   [11]uintptr // cuLaunchKernel's arguments
}

// argBits returns the 8-byte slot holding kernel argument v and its type
// name. Go's int is refused: its width is not the kernel's.
func argBits(v any) (uint64, string) {
	switch x := v.(type) {
	case int32:
		return uint64(uint32(x)), "int32"
	case uint32:
		return uint64(x), "uint32"
	case int64:
		return uint64(x), "int64"
	case uint64:
		return x, "uint64"
	case float32:
		return uint64(math.Float32bits(x)), "float32"
	case float64:
		return math.Float64bits(x), "float64"
	case DevicePtr:
		return uint64(x), "ptr"
	case Buffer:
		return uint64(x.Ptr), "ptr"
	case uintptr:
		return uint64(x), "ptr"
	default:
		panic(fmt.Sprintf("cuda: kernel argument of type %T (use int32, uint32, int64, uint64, float32, float64, DevicePtr or Buffer)", v))
	}
}

// Prepare packs a launch of f with the given grid, block, dynamic shared
// memory bytes and kernel arguments (int32, uint32, int64, uint64, float32,
// float64, DevicePtr or Buffer, in the kernel's parameter order and types).
func (f *Function) Prepare(grid, block Dim3, shared int, args ...any) *Prepared {
	p := &Prepared{f: f, grid: grid, block: block, shared: shared}
	if len(args) > 0 {
		p.slots = make([]uint64, len(args))
		p.params = make([]unsafe.Pointer, len(args))
		p.kinds = make([]string, len(args))
		p.pin.Pin(&p.slots[0])
		for i, a := range args {
			p.slots[i], p.kinds[i] = argBits(a)
			p.params[i] = unsafe.Pointer(&p.slots[i])
		}
		p.pin.Pin(&p.params[0])
	}
	return p
}

// Set replaces argument i with v, which must have the type it had.
func (p *Prepared) Set(i int, v any) {
	bits, kind := argBits(v)
	if kind != p.kinds[i] {
		panic(fmt.Sprintf("cuda: Prepared.Set argument %d of %s: %s, was %s", i, p.f.name, kind, p.kinds[i]))
	}
	p.slots[i] = bits
}

// SetPtr is Set for a device-pointer argument, without boxing it.
func (p *Prepared) SetPtr(i int, v DevicePtr) {
	if p.kinds[i] != "ptr" {
		panic(fmt.Sprintf("cuda: Prepared.SetPtr argument %d of %s: ptr, was %s", i, p.f.name, p.kinds[i]))
	}
	p.slots[i] = uint64(v)
}

// SetGrid changes the grid size.
func (p *Prepared) SetGrid(grid Dim3) { p.grid = grid }

// Function returns the kernel p launches.
func (p *Prepared) Function() *Function { return p.f }

// Launch enqueues the kernel on c's stream. A bad configuration is reported
// at once; a fault inside the kernel surfaces at the next synchronisation
// (at once with DSPK_CUDA_SYNC=1).
func (p *Prepared) Launch(c *Ctx) error {
	d := c.live()
	if e := d.lost.Load(); e != nil {
		return e
	}
	a := &p.call
	a[0] = p.f.h
	a[1], a[2], a[3] = p.grid.dims()
	a[4], a[5], a[6] = p.block.dims()
	a[7], a[8], a[10] = uintptr(p.shared), c.stream, 0
	a[9] = 0
	if len(p.params) > 0 {
		a[9] = uintptr(unsafe.Pointer(&p.params[0])) // pinned
	}
	if r := int(int32(callSlice(cuLaunchKernel, a[:]))); r != 0 {
		return c.fail("cuLaunchKernel", p.f.name, r)
	}
	if c.dev.debugSync && !c.capturing {
		return c.SyncOp(p.f.name)
	}
	return nil
}

// Free unpins the argument block; p must not be launched afterwards.
func (p *Prepared) Free() {
	p.pin.Unpin()
	p.slots, p.params = nil, nil
}

// Launch packs the arguments and launches f once (see [Function.Prepare]
// for the argument types). Use a Prepared launch in loops.
func (c *Ctx) Launch(f *Function, grid, block Dim3, shared int, args ...any) error {
	p := f.Prepare(grid, block, shared, args...)
	defer p.Free()
	return p.Launch(c)
}

// Graph is an instantiated CUDA graph captured from a stream.
type Graph struct {
	g, exec uintptr
}

// Capture records the work f enqueues on c's stream into a graph instead
// of running it, and instantiates the graph. f must not synchronise.
func (c *Ctx) Capture(f func(*Ctx) error) (*Graph, error) {
	if err := c.do("cuStreamBeginCapture_v2", "", cuStreamBeginCapture, c.stream, captureModeThreadLocal); err != nil {
		return nil, err
	}
	c.capturing = true
	ferr := f(c)
	c.capturing = false
	var g uintptr
	eerr := c.do("cuStreamEndCapture", "", cuStreamEndCapture, c.stream, uintptr(unsafe.Pointer(&g)))
	if ferr != nil || eerr != nil {
		if g != 0 {
			call(cuGraphDestroy, g)
		}
		if ferr != nil {
			return nil, ferr
		}
		return nil, eerr
	}
	gr := &Graph{g: g}
	if err := c.do("cuGraphInstantiateWithFlags", "", cuGraphInstantiateWithFlags, uintptr(unsafe.Pointer(&gr.exec)), g, 0); err != nil {
		call(cuGraphDestroy, g)
		return nil, err
	}
	return gr, nil
}

// LaunchGraph enqueues g on c's stream.
func (c *Ctx) LaunchGraph(g *Graph) error {
	if err := c.do("cuGraphLaunch", "", cuGraphLaunch, g.exec, c.stream); err != nil {
		return err
	}
	if c.dev.debugSync {
		return c.SyncOp("graph")
	}
	return nil
}

// DestroyGraph releases g.
func (c *Ctx) DestroyGraph(g *Graph) error {
	err := c.do("cuGraphExecDestroy", "", cuGraphExecDestroy, g.exec)
	if err2 := c.do("cuGraphDestroy", "", cuGraphDestroy, g.g); err == nil {
		err = err2
	}
	return err
}
