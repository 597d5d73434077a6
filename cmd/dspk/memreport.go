package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// reportMemory writes what the process holds as it is about to exit
// (DSPK_MEMORY_REPORT=1): the memory lines of /proc/self/status and the
// largest mappings of /proc/self/smaps by resident size. The kernel tears
// all of it down after the closing line, in time the user waits for and
// dspk's own clock cannot see (docs/perf-wholeprocess.md).
func reportMemory(w io.Writer) {
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintf(w, "dspk: memory report: %v\n", err)
		return
	}
	var lines []string
	for _, l := range strings.Split(string(st), "\n") {
		for _, k := range []string{"VmRSS", "RssAnon", "RssFile", "RssShmem", "VmPTE", "VmSize", "Threads"} {
			if strings.HasPrefix(l, k+":") {
				lines = append(lines, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(w, "memory at exit: %s; Go: %d MB from the OS, heap %d MB in use of %d MB\n", strings.Join(lines, ", "),
		(ms.Sys-ms.HeapReleased)>>20, ms.HeapInuse>>20, (ms.HeapSys-ms.HeapReleased)>>20)
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	defer f.Close()
	type mapping struct {
		name     string
		rss, pss int
	}
	var maps []mapping
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":"):
			name := "[anon]"
			if len(fs) >= 6 {
				name = fs[5]
			}
			maps = append(maps, mapping{name: name})
		case len(fs) >= 2 && fs[0] == "Rss:" && len(maps) > 0:
			maps[len(maps)-1].rss, _ = strconv.Atoi(fs[1])
		}
	}
	byName := map[string]int{}
	for _, m := range maps {
		byName[m.name] += m.rss
	}
	var names []string
	for n := range byName {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return byName[names[i]] > byName[names[j]] })
	for i, n := range names {
		if i == 10 || byName[n] < 1024 {
			break
		}
		fmt.Fprintf(w, "  %8d kB  %s\n", byName[n], n)
	}
}
