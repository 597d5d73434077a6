package emutest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Emulator is one package's kernel emulator: testdata/emulate.cc of the
// package under test, built on first use and removed by Main.
type Emulator struct {
	name  string
	flags []string

	once sync.Once
	dir  string // the build directory, removed by Main
	exe  string
	err  error
}

// New returns the emulator of the package name (used to name its build
// directory), compiled with g++ -std=c++20 -O1 and the extra flags given
// (e.g. "-DKMAX=32").
func New(name string, flags ...string) *Emulator {
	return &Emulator{name: name, flags: flags}
}

// Main runs the tests of m, removes the emulator's build directory and
// exits with the tests' status: call it from the package's TestMain.
func (e *Emulator) Main(m *testing.M) {
	code := m.Run()
	if e.dir != "" {
		os.RemoveAll(e.dir)
	}
	os.Exit(code)
}

// Path returns the emulator's executable, building testdata/emulate.cc
// once per test binary. It skips the test where g++ is not installed and
// fails it if the build fails.
func (e *Emulator) Path(t testing.TB) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++: the CUDA kernels are not emulated")
	}
	e.once.Do(func() {
		src, err := filepath.Abs("testdata")
		if err != nil {
			e.err = err
			return
		}
		if e.dir, e.err = os.MkdirTemp("", e.name+"-emulate"); e.err != nil {
			return
		}
		exe := filepath.Join(e.dir, "emulate")
		args := append([]string{"-std=c++20", "-O1"}, e.flags...)
		cmd := exec.Command(gxx, append(args, "-o", exe, "emulate.cc")...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			e.err = fmt.Errorf("building emulate.cc: %v\n%s", err, out)
			return
		}
		e.exe = exe
	})
	if e.err != nil {
		t.Fatal(e.err)
	}
	return e.exe
}

// Run runs the emulator with the arguments given (each formatted with
// fmt.Sprint) and in on its standard input, and returns its standard
// output. It fails the test, with the emulator's standard error, if the
// emulator fails.
func (e *Emulator) Run(t testing.TB, in []byte, args ...any) []byte {
	t.Helper()
	sargs := make([]string, len(args))
	for i, a := range args {
		sargs[i] = fmt.Sprint(a)
	}
	cmd := exec.Command(e.Path(t), sargs...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("emulate %v: %v\n%s", sargs, err, errb.String())
	}
	return out.Bytes()
}

// Put appends the values vs to b, little-endian, as encoding/binary.Write
// writes them. It panics on a value binary.Write cannot encode (a bug in
// the test).
func Put(b *bytes.Buffer, vs ...any) {
	for _, v := range vs {
		if err := binary.Write(b, binary.LittleEndian, v); err != nil {
			panic(err)
		}
	}
}

// Get reads v from r, little-endian, as encoding/binary.Read reads it, and
// fails the test if r is short.
func Get(t testing.TB, r io.Reader, v any) {
	t.Helper()
	if err := binary.Read(r, binary.LittleEndian, v); err != nil {
		t.Fatalf("reading the emulator's output: %v", err)
	}
}
