package cuda

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by every error that means the CUDA driver, NVRTC or
// cuBLAS is not installed (or no GPU is present): callers fall back to the
// CPU and tests skip.
var ErrNotFound = errors.New("not found")

// ErrDeviceLost is wrapped by the error of a kernel fault (an illegal
// address, a launch failure, an unknown error, an ECC error, …) and by every
// later error of the same device: the context is dead and the process must
// stop.
var ErrDeviceLost = errors.New("device lost")

// Library names used in [Error.Lib].
const (
	LibDriver = "cuda"
	LibNVRTC  = "nvrtc"
	LibCUBLAS = "cublas"
)

// Error is a failed call into the driver, NVRTC or cuBLAS.
type Error struct {
	// Lib is the library: "cuda", "nvrtc" or "cublas".
	Lib string
	// Func is the C function that failed, e.g. "cuMemAlloc_v2".
	Func string
	// Code is the status the function returned.
	Code int
	// Name is the status's name, e.g. "CUDA_ERROR_ILLEGAL_ADDRESS".
	Name string
	// Msg is the library's message for the status, with NVRTC's program
	// log appended for compilation errors.
	Msg string
	// Op names the kernel or operation being run, if known.
	Op string
	// Lost reports whether the status is a sticky fault that killed the
	// context; then the error wraps ErrDeviceLost.
	Lost bool
}

// Error formats e as "lib: Func(op): NAME (code): message".
func (e *Error) Error() string {
	fn := e.Func
	if e.Op != "" {
		fn += "(" + e.Op + ")"
	}
	s := fmt.Sprintf("%s: %s: %s (%d): %s", e.Lib, fn, e.Name, e.Code, e.Msg)
	if e.Lost {
		s += " [device lost]"
	}
	return s
}

// Unwrap returns ErrDeviceLost for a sticky fault, otherwise nil.
func (e *Error) Unwrap() error {
	if e.Lost {
		return ErrDeviceLost
	}
	return nil
}

// stickyCodes are the driver statuses after which the context is unusable.
var stickyCodes = map[int]bool{
	214: true, // CUDA_ERROR_ECC_UNCORRECTABLE
	700: true, // CUDA_ERROR_ILLEGAL_ADDRESS
	702: true, // CUDA_ERROR_LAUNCH_TIMEOUT
	710: true, // CUDA_ERROR_ASSERT
	714: true, // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: true, // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: true, // CUDA_ERROR_MISALIGNED_ADDRESS
	717: true, // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: true, // CUDA_ERROR_INVALID_PC
	719: true, // CUDA_ERROR_LAUNCH_FAILED
	999: true, // CUDA_ERROR_UNKNOWN
}

// IsSticky reports whether the driver status code is a sticky fault that
// leaves the context unusable.
func IsSticky(code int) bool { return stickyCodes[code] }

// codeNoDevice is CUDA_ERROR_NO_DEVICE.
const codeNoDevice = 100

// nvrtcBuiltinFailure is NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, returned
// when NVRTC cannot dlopen its builtins library.
const nvrtcBuiltinFailure = 7
