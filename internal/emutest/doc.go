// Package emutest provides the test harness that runs a package's CUDA
// kernels on the CPU: the package's testdata/emulate.cc (CUDA's builtins
// emulated, fibers from ops/testdata/emulate.h) is compiled with g++
// -std=c++20 once per test binary and run with binary little-endian input
// and output. Tests that use it skip where g++ is not installed.
package emutest
