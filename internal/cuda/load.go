package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// symbol is one C function a library must (or may) provide.
type symbol struct {
	name     string   // symbol name, with its _vN suffix
	alt      []string // older names tried when name is absent
	addr     *uintptr // where the address is stored
	optional bool     // missing is not an error
}

// library is one shared library, found once per process.
type library struct {
	what    string          // human name, e.g. "CUDA driver"
	env     string          // environment variable holding a full path
	stem    string          // file-name stem in /proc/self/maps, e.g. "libcuda.so"
	sonames []string        // names for the system loader, preferred first
	dirs    func() []string // folders searched after the loader
	preload []string        // glob patterns loaded from the same folder first
	syms    []symbol

	once   sync.Once
	handle uintptr
	path   string // the path or soname that was opened
	err    error
}

// load finds, opens and binds l once; later calls return the first result.
func (l *library) load() error {
	l.once.Do(func() { l.err = l.open() })
	return l.err
}

// badPath reports whether p is a forward-compatibility or link-time stub
// copy that must never be loaded.
func badPath(p string) bool {
	return strings.Contains(p, "/compat/") || strings.Contains(p, "/stubs/")
}

func (l *library) open() error {
	if !supported {
		return fmt.Errorf("cuda: %s: CUDA needs Linux (GOOS=%s): %w", l.what, runtime.GOOS, ErrNotFound)
	}
	var tried []string
	try := func(path string) bool {
		if badPath(path) {
			tried = append(tried, path+" (compat/stubs: skipped)")
			return false
		}
		abs := filepath.IsAbs(path)
		if abs {
			if _, err := os.Stat(path); err != nil {
				return false // absent: not worth listing
			}
			preloadFrom(filepath.Dir(path), l.preload)
		}
		h, err := dlopen(path)
		if err != nil {
			tried = append(tried, path)
			return false
		}
		if real := mappedPath(l.stem); badPath(real) {
			tried = append(tried, path+" → "+real+" (compat/stubs: rejected)")
			return false
		} else if !abs && real != "" {
			preloadFrom(filepath.Dir(real), l.preload)
		}
		if err := bindSymbols(h, l.syms); err != nil {
			tried = append(tried, path+": "+err.Error())
			return false
		}
		l.handle, l.path = h, path
		return true
	}
	if p := os.Getenv(l.env); p != "" {
		if try(p) {
			return nil
		}
		if len(tried) == 0 {
			tried = append(tried, p)
		}
		return fmt.Errorf("cuda: %s: %s=%s does not load (tried %s): %w",
			l.what, l.env, p, strings.Join(tried, "; "), ErrNotFound)
	}
	for _, s := range l.sonames {
		if try(s) {
			return nil
		}
	}
	if l.dirs != nil {
		for _, d := range l.dirs() {
			for _, s := range l.sonames {
				if try(filepath.Join(d, s)) {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("cuda: %s not found (tried %s): %w", l.what, strings.Join(tried, "; "), ErrNotFound)
}

// bindSymbols resolves every symbol of syms in the library h.
func bindSymbols(h uintptr, syms []symbol) error {
	for _, s := range syms {
		a, err := dlsym(h, s.name)
		for _, alt := range s.alt {
			if err == nil && a != 0 {
				break
			}
			a, err = dlsym(h, alt)
		}
		if err != nil || a == 0 {
			if s.optional {
				continue
			}
			return fmt.Errorf("missing symbol %s", s.name)
		}
		*s.addr = a
	}
	return nil
}

// preloadFrom opens, by absolute path, the first file in dir matching each
// of the glob patterns (newest version first); failures are ignored.
func preloadFrom(dir string, patterns []string) {
	for _, pat := range patterns {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		for _, p := range m {
			if badPath(p) {
				continue
			}
			if _, err := dlopen(p); err == nil {
				break
			}
		}
	}
}

// mappedPath returns the first file mapped into this process whose base
// name starts with stem (e.g. "libcuda.so"), or "".
func mappedPath(stem string) string {
	for _, p := range mappedPaths([]string{stem}) {
		return p
	}
	return ""
}

// mappedPaths returns, without duplicates and in map order, the files
// mapped into this process whose base name starts with one of stems.
func mappedPaths(stems []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, line := range strings.Split(readMaps(), "\n") {
		i := strings.IndexByte(line, '/')
		if i < 0 {
			continue
		}
		p := line[i:]
		base := filepath.Base(p)
		for _, s := range stems {
			if strings.HasPrefix(base, s) && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// targetDir is the toolkit's per-architecture library folder.
func targetDir() string {
	if runtime.GOARCH == "arm64" {
		return "targets/sbsa-linux/lib"
	}
	return "targets/x86_64-linux/lib"
}

// toolkitDirs lists the CUDA toolkit folders searched for NVRTC and cuBLAS:
// $CUDA_HOME, $CUDA_PATH, /usr/local/cuda and /usr/local/cuda-* (newest
// first), each with lib64 and targets/<arch>/lib.
func toolkitDirs() []string {
	var roots []string
	for _, e := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if v := os.Getenv(e); v != "" {
			roots = append(roots, v)
		}
	}
	roots = append(roots, "/usr/local/cuda")
	m, _ := filepath.Glob("/usr/local/cuda-*")
	sort.Sort(sort.Reverse(sort.StringSlice(m)))
	roots = append(roots, m...)
	var dirs []string
	for _, r := range roots {
		dirs = append(dirs, filepath.Join(r, "lib64"), filepath.Join(r, targetDir()))
	}
	return dirs
}

// sitePackages lists Python site-packages folders that may hold NVIDIA's
// wheels: the active virtual or conda environment, the user's, the
// system's and virtual environments under /opt.
func sitePackages() []string {
	var pats []string
	for _, e := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if v := os.Getenv(e); v != "" {
			pats = append(pats, filepath.Join(v, "lib/python3*/site-packages"))
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		pats = append(pats, filepath.Join(h, ".local/lib/python3*/site-packages"))
	}
	pats = append(pats,
		"/usr/local/lib/python3*/dist-packages",
		"/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3/dist-packages",
		"/usr/lib/python3*/site-packages",
		"/opt/*/.venv/lib/python3*/site-packages",
		"/opt/*/lib/python3*/site-packages",
	)
	var dirs []string
	for _, p := range pats {
		m, _ := filepath.Glob(p)
		dirs = append(dirs, m...)
	}
	return dirs
}

// wheelDirs returns toolkit folders followed by the wheel folders sub
// (e.g. "nvidia/cu13/lib") of every site-packages folder.
func wheelDirs(sub ...string) func() []string {
	return func() []string {
		dirs := toolkitDirs()
		for _, sp := range sitePackages() {
			for _, s := range sub {
				dirs = append(dirs, filepath.Join(sp, s))
			}
		}
		return dirs
	}
}

// LoadedLibraries returns the CUDA, NVRTC and cuBLAS files mapped into this
// process, as read from /proc/self/maps.
func LoadedLibraries() []string {
	return mappedPaths([]string{"libcuda.so", "libnvrtc.so", "libnvrtc-builtins", "libcublas.so", "libcublasLt.so"})
}

// LoadNVRTC loads NVRTC, which every kernel compilation and kernel-cache
// key needs; the error wraps ErrNotFound when it is missing.
func LoadNVRTC() error { return nvrtcLib.load() }

// LoadLibraries loads NVRTC and cuBLAS (the driver is loaded by every
// device call); the error wraps ErrNotFound when one is missing. A device
// loads cuBLAS itself on its first cuBLAS call.
func LoadLibraries() error {
	if err := nvrtcLib.load(); err != nil {
		return err
	}
	return cublasLib.load()
}
