package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditCase is one case of the trust audit: input that once destroyed
// data or was accepted wrongly, in the words it was reported in, and the
// tests that would fail if it came back.
type auditCase struct {
	kind    string // auditDestroys, auditAccepted or auditRefused
	issue   string // the case as reported
	covered []auditRef
}

// The kinds of audit cases.
const (
	auditDestroys = "destroyed data"
	auditAccepted = "accepted wrongly"
	auditRefused  = "refused wrongly"
)

// auditRef points to the part of a test that covers a case: the
// function fn of file (from the module root) whose source holds marker
// (a case's name, an argument or the message it checks). note says when
// the test is skipped.
type auditRef struct {
	file, fn, marker, note string
}

// auditTable lists every case of the audit with the tests covering it.
var auditTable = []auditCase{
	{auditDestroys, "batch plan -plan over its input .ap.bin", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `{[]string{"-plan", bin}, "an input of the plan"}`, ""}}},
	{auditDestroys, "batch plan -plan over its input .meta", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `{[]string{"-plan", meta}, "an input of the plan"}`, ""}}},
	{auditDestroys, "batch plan -plan over a user's text file", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `{[]string{"-plan", notes}, notes + " exists and is not a plan dspk wrote"}`, ""}}},
	{auditDestroys, "batch plan over an existing plan.json of another plan", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `plan+" holds another plan; use -overwrite"`, ""},
		{"batch/save_test.go", "TestSaveRefuses", `"another plan; use -overwrite"`, ""}}},
	{auditDestroys, "batch run replacing a hand-made folder at a row path", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchRunKeepsHandMade", `row+" exists and was not written by a batch row"`, ""}}},

	{auditAccepted, "wrong channel count dividing the file for sort/drift/batch plan", []auditRef{
		{"cmd/dspk/channels_test.go", "TestChannelCountRefused", `{"sort", "66", 2,`, ""},
		{"cmd/dspk/channels_test.go", "TestChannelCountRefused", `{"drift", "66", 2,`, ""},
		{"cmd/dspk/channels_test.go", "TestChannelCountRefused", `{"batch plan", "66", 1,`, ""},
		{"recording/chancheck_test.go", "TestChannelCountInput", `"-channels 770: the data look like 385 channels per sample"`, ""}}},
	{auditAccepted, "compare: a sample rate that differs from the folder's (the tolerance silently becomes ±10 samples)", []auditRef{
		{"compare/reference_test.go", "TestReferenceRules", `"25 kHz reference"`, ""},
		{"compare/reference_test.go", "TestReferenceRules", `"-rate 25000"`, ""},
		{"compare/dirs_test.go", "TestMatchDirs", `"another sample rate: %v"`, ""}}},
	{auditAccepted, "compare: a reference with 0 spikes", []auditRef{
		{"compare/reference_test.go", "TestReferenceRules", `"empty reference"`, ""}}},
	{auditAccepted, "compare: spike times out of order (accuracy 0 everywhere)", []auditRef{
		{"compare/reference_test.go", "TestReferenceRules", `"shuffled reference: %+v, %v"`, ""},
		{"compare/reference_test.go", "TestReferenceRules", `"shuffled sort: %+v, %v"`, ""}}},
	{auditAccepted, "compare: a reference 100 s later than the sort", []auditRef{
		{"compare/reference_test.go", "TestReferenceRules", `"reference 100 s later"`, ""}}},
	{auditAccepted, "compare: a detect or sort folder of another recording", []auditRef{
		{"compare/reference_test.go", "TestReferenceRecording", `"folder of another simulation"`, ""},
		{"compare/reference_test.go", "TestReferenceRecording", `"detections of another simulation"`, ""},
		{"compare/reference_test.go", "TestReferenceRecording", `"simulation of another length"`, ""}}},
	{auditAccepted, "compare: a 10-s drift estimate scored against a 20-s truth", []auditRef{
		{"compare/reference_test.go", "TestScoreMotionDir", `"half estimate: %+v, %v"`, ""},
		{"compare/reference_test.go", "TestScoreMotionDir", `"estimate of a longer recording"`, ""}}},
	{auditRefused, "compare: a plain truth folder (spike_times.npy + spike_clusters.npy) refused for lacking params.py", []auditRef{
		{"compare/reference_test.go", "TestReferenceRules", `"plain truth with -rate 30000: %+v, %v"`, ""},
		{"cmd/dspk/compare_units_test.go", "TestCompareUnits", `"compare", "-rate", "30000", "-truth", plain, perfect`, ""}}},
	{auditAccepted, "batch plan accepting -nearest_chans 500", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `{[]string{"-nearest_chans", "500"}, "-nearest_chans 500"}`, ""}}},
	{auditAccepted, "batch plan writing plan.json into a detect folder", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchPlanRefuses", `det+" is a dspk output folder"`, ""},
		{"batch/save_test.go", "TestSaveRefuses", `"plan.json written into the detect folder"`, ""}}},
	{auditAccepted, "unreadable ~imroTbl gives no warning", []auditRef{
		{"recording/metascale_test.go", "TestMetaScaleWarnings", `"type 1110 unreadable"`, ""}}},
	{auditAccepted, "simulate -drift 1e9", []auditRef{
		{"cmd/dspk/cli_test.go", "TestCommandLineBadInput", `"simulate", "-o", e.out, "-drift", "1e9"`, ""}}},
	{auditAccepted, "SIGHUP exit 129 without message", []auditRef{
		{"cmd/dspk/signals_test.go", "TestSignalsAtEveryPass", `{"detect/SIGHUP", detect, syscall.SIGHUP,`, "skipped with -short"},
		{"cmd/dspk/signals_test.go", "TestSignalsAtEveryPass", `want := 128 + int(c.sig)`, "skipped with -short"}}},
	{auditAccepted, "signal after the final rename exits 0", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestSignalAfterCommit", `"interrupted by SIGTERM after the work was done; "`, ""}}},
	{auditAccepted, "kill -9 of batch run leaves its worker", []auditRef{
		{"cmd/dspk/batchtrust_test.go", "TestBatchWorkerDiesWithRun", `run.Process.Signal(syscall.SIGKILL)`, ""}}},
	{auditAccepted, "interrupted demo leaves empty $TMPDIR/dspk-demo-*/sim/", []auditRef{
		{"cmd/dspk/safety_test.go", "TestInterrupts", `"demo": syscall.SIGTERM`, "skipped with -short"},
		{"cmd/dspk/safety_test.go", "hidden", `strings.HasPrefix(d.Name(), "dspk-demo-")`, ""}}},
	{auditAccepted, "batch plan on a full disk leaves an empty folder and 0-byte plan.json.tmp", []auditRef{
		{"batch/save_test.go", "TestSaveWriteFails", `"%s left after a failed write"`, ""},
		{"batch/save_test.go", "TestSaveFullDisk", `"the full disk holds %v"`, "skipped without root (it mounts a tmpfs)"}}},
}

// TestAuditTable checks the audit table: 5 cases that destroyed data,
// 16 accepted wrongly and 1 refused wrongly, each covered by at least
// one test, and each test named still existing with the marker in its
// source, so that a covering test removed or emptied of its case fails
// here. Covering tests that are skipped somewhere are logged.
func TestAuditTable(t *testing.T) {
	kinds := map[string]int{}
	parsed := map[string]map[string]string{} // file → function → source
	for _, c := range auditTable {
		kinds[c.kind]++
		if len(c.covered) == 0 {
			t.Errorf("%q: no test covers it", c.issue)
		}
		for _, ref := range c.covered {
			fns, ok := parsed[ref.file]
			if !ok {
				fns = funcSources(t, filepath.Join("..", "..", filepath.FromSlash(ref.file)))
				parsed[ref.file] = fns
			}
			src, ok := fns[ref.fn]
			switch {
			case !ok:
				t.Errorf("%q: %s has no function %s", c.issue, ref.file, ref.fn)
			case !strings.Contains(src, ref.marker):
				t.Errorf("%q: %s of %s no longer holds %s", c.issue, ref.fn, ref.file, ref.marker)
			case ref.note != "":
				t.Logf("%q: %s of %s: %s", c.issue, ref.fn, ref.file, ref.note)
			}
		}
	}
	if want := map[string]int{auditDestroys: 5, auditAccepted: 16, auditRefused: 1}; len(kinds) != len(want) ||
		kinds[auditDestroys] != 5 || kinds[auditAccepted] != 16 || kinds[auditRefused] != 1 {
		t.Errorf("cases by kind %v, want %v", kinds, want)
	}
}

// funcSources parses the Go file at path and returns the source of each
// top-level function by name.
func funcSources(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
			out[fd.Name.Name] = string(b[fset.Position(fd.Pos()).Offset:fset.Position(fd.End()).Offset])
		}
	}
	return out
}
