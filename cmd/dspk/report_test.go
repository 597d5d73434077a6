package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"dspk/export"
	"dspk/quality"
	"dspk/report"
)

// TestReportCommand checks dspk report's files: the page in the sort
// folder, listed in its manifest and replaced by the next report; -o
// elsewhere, never over a file dspk did not write, never a name that is
// not .html.
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	s := sortedFolder(t, dir)
	for range 2 {
		if code, out, stderr := dspk(t, "report", s); code != 0 || !strings.Contains(out, "wrote "+filepath.Join(s, report.File)) {
			t.Fatalf("report: exit %d, %q %s", code, out, stderr)
		}
	}
	if !export.Lists(s, report.File) {
		t.Errorf("the manifest does not list %s", report.File)
	}
	replaceable(t, s, "after report")
	other := filepath.Join(dir, "mine.html")
	if err := os.WriteFile(other, []byte("<html>my notes</html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := dspk(t, "report", "-o", other, s); code != 1 || !strings.Contains(stderr, "not a report dspk wrote") {
		t.Errorf("report over another page: exit %d, %s", code, stderr)
	}
	if b, _ := os.ReadFile(other); string(b) != "<html>my notes</html>" {
		t.Error("report changed a page it did not write")
	}
	if code, _, _ := dspk(t, "report", "-o", filepath.Join(dir, "r.txt"), s); code != 2 {
		t.Errorf("report -o r.txt: exit %d, want 2", code)
	}
	if code, _, stderr := dspk(t, "report", "-o", filepath.Join(dir, "new", "r.html"), s); code == 0 {
		t.Errorf("report into a missing folder: exit 0 (%s)", stderr)
	}
	if code, _, stderr := dspk(t, "report", filepath.Join(dir, "none")); code != 1 || !strings.Contains(stderr, "none") {
		t.Errorf("report of a missing folder: exit %d, %s", code, stderr)
	}
}

// TestReportInBrowser opens the report of a small sort in a headless
// Chromium (Debian's chromium; skipped where it is absent): the page
// loads without a console message or error, the table has one row per
// unit, #sort= orders the rows by the column and #unit= draws the unit's
// five figures.
func TestReportInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH (apt-get install chromium): the page is not checked in a browser")
	}
	dir := t.TempDir()
	s := sortedFolder(t, dir)
	if code, _, stderr := dspk(t, "report", s); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	page := filepath.Join(s, report.File)
	labels := readColumn(t, filepath.Join(s, quality.LabelFile))
	snr := readColumn(t, filepath.Join(s, "cluster_snr.tsv"))
	var ids []int
	for id := range labels {
		ids = append(ids, id)
	}
	// The page sorts by its 4-significant-digit values, missing ones
	// last, ties by id.
	val := func(id int) float64 {
		v, err := strconv.ParseFloat(snr[id], 64)
		if err != nil || math.IsNaN(v) {
			return math.Inf(1)
		}
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
		return r
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c := cmpFloat(val(a), val(b)); c != 0 {
			return c
		}
		return a - b
	})
	unit := ids[len(ids)/2]
	for _, view := range []struct {
		hash string
		want []int
	}{{"#sort=snr", ids}, {"#sort=-snr&unit=" + strconv.Itoa(unit), nil}} {
		dom, log := dumpDOM(t, chromium, page+view.hash, dir)
		if m := regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught).*$`).FindAllString(log, -1); len(m) > 0 {
			t.Errorf("%s: the browser logged:\n%s", view.hash, strings.Join(m, "\n"))
		}
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Errorf("%s: the page did not finish its script", view.hash)
		}
		var rows []int
		for _, m := range regexp.MustCompile(`<tr data-unit="(\d+)"`).FindAllStringSubmatch(dom, -1) {
			n, _ := strconv.Atoi(m[1])
			rows = append(rows, n)
		}
		if len(rows) != len(labels) {
			t.Errorf("%s: %d rows for %d units", view.hash, len(rows), len(labels))
		}
		if view.want != nil && !slices.Equal(rows, view.want) {
			t.Errorf("%s: rows %v, want %v", view.hash, rows, view.want)
		}
		if view.want == nil {
			if len(rows) > 0 && rows[0] != ids[len(ids)-1] && val(rows[0]) != val(ids[len(ids)-1]) {
				t.Errorf("%s: first row %d, want the largest snr (%d)", view.hash, rows[0], ids[len(ids)-1])
			}
			_, detail, _ := strings.Cut(dom, `id="unit-detail"`)
			if !strings.Contains(detail, "<h2>Unit "+strconv.Itoa(unit)+" ") {
				t.Errorf("%s: unit %d not opened", view.hash, unit)
			}
			for _, fig := range []string{"wave", "acg", "isi", "amp", "depth"} {
				if !regexp.MustCompile(`<svg[^>]*class="` + fig + `"[^>]*>.*?<path`).MatchString(detail) {
					t.Errorf("%s: no %s figure with a path in unit %d's panel", view.hash, fig, unit)
				}
			}
		}
	}
}

// dumpDOM loads file#hash in headless Chromium and returns the DOM after
// its scripts ran, and the browser's log.
func dumpDOM(t *testing.T, chromium, file, dir string) (dom, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+filepath.Join(dir, "chromium-profile"), "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String()
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
