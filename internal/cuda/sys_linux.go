//go:build linux

package cuda

import (
	"os"
	"syscall"
	"unsafe"

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

// mapHost maps bytes of anonymous read-write memory starting on a
// huge-page boundary and asks for transparent huge pages there (a hint:
// the kernel may use small pages). It returns the mapping and the address
// of its first byte.
func mapHost(bytes int) ([]byte, uintptr, error) {
	n := (bytes + hugePage - 1) &^ (hugePage - 1)
	// Over-map by a huge page and unmap what lies outside the aligned part.
	a, _, e := syscall.Syscall6(syscall.SYS_MMAP, 0, uintptr(n+hugePage), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uintptr(0), 0)
	if e != 0 {
		return nil, 0, e
	}
	start := (a + hugePage - 1) &^ (hugePage - 1)
	if start > a {
		syscall.Syscall(syscall.SYS_MUNMAP, a, start-a, 0)
	}
	if end := a + uintptr(n+hugePage); end > start+uintptr(n) {
		syscall.Syscall(syscall.SYS_MUNMAP, start+uintptr(n), end-start-uintptr(n), 0)
	}
	const madvHugepage = 14 // MADV_HUGEPAGE
	syscall.Syscall(syscall.SYS_MADVISE, start, uintptr(n), madvHugepage)
	return unsafe.Slice((*byte)(cptr(start)), n), start, nil
}

// unmapHost unmaps a mapping of mapHost.
func unmapHost(m []byte) {
	if len(m) > 0 {
		syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), 0)
	}
}
