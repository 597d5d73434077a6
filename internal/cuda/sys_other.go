//go:build !linux

package cuda

import "errors"

// supported reports whether this OS can load CUDA libraries at all.
const supported = false

var errUnsupported = errors.New("cuda: CUDA is supported on Linux only")

func dlopen(path string) (uintptr, error) { return 0, errUnsupported }

func dlsym(h uintptr, name string) (uintptr, error) { return 0, errUnsupported }

// call is never reached: no library loads on this OS.
func call(fn uintptr, args ...uintptr) uintptr {
	panic("cuda: call on an unsupported OS")
}

// callSlice is never reached: no library loads on this OS.
func callSlice(fn uintptr, args []uintptr) uintptr {
	panic("cuda: call on an unsupported OS")
}

func readMaps() string { return "" }

func mapHost(bytes int) ([]byte, uintptr, error) { return nil, 0, errUnsupported }

func unmapHost(m []byte) {}
