//go:build linux

package cuda

import (
	"os"

	"github.com/ebitengine/purego"
)

// supported reports whether this OS can load CUDA libraries at all.
const supported = true

// dlopen opens the shared library at path (a soname or an absolute path)
// with RTLD_NOW|RTLD_GLOBAL, so that later dlopens by soname (NVRTC opening
// its builtins, cuBLAS its Lt library) are satisfied by what is loaded.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// dlsym returns the address of the symbol name in the library h.
func dlsym(h uintptr, name string) (uintptr, error) {
	return purego.Dlsym(h, name)
}

// call calls the C function fn with integer or pointer arguments and
// returns its first integer result. The objects that converted pointers
// refer to are moved to the heap and kept alive for the call.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// callSlice is call for arguments that hold no Go pointers (integers,
// C or pinned addresses): passing an existing slice avoids the allocation
// of a variadic argument list.
func callSlice(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// readMaps returns the text of /proc/self/maps (empty on failure).
func readMaps() string {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return ""
	}
	return string(b)
}
