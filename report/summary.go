package report

import (
	"encoding/json"
	"os"
	"path/filepath"

	"dspk/quality"
)

// summary is the head of the page: the sort as dspk.json records it, and
// what the arrays say where dspk.json is absent (a Kilosort folder).
type summary struct {
	Folder    string         `json:"folder"`
	Recording string         `json:"recording,omitempty"`
	Seconds   num            `json:"seconds"`
	Units     int            `json:"units"`
	Spikes    int            `json:"spikes"`
	KSGood    int            `json:"ks_good"`
	Labels    map[string]int `json:"labels"`
	Device    string         `json:"device,omitempty"`
	Version   string         `json:"version,omitempty"`
	Wall      num            `json:"wall,omitempty"`
	Stages    []stage        `json:"stages,omitempty"`
	Warnings  []string       `json:"warnings,omitempty"`
	Notes     []string       `json:"notes,omitempty"`
}

// stage is one stage of the sort and its time.
type stage struct {
	Name    string `json:"name"`
	Seconds num    `json:"seconds"`
	Count   int    `json:"count"`
	What    string `json:"what"`
}

// provenance is the part of dspk.json the summary shows.
type provenance struct {
	Device  string `json:"device"`
	Version string `json:"dspk_version"`
	Input   struct {
		Path string `json:"path"`
	} `json:"input"`
	Sort struct {
		Stages []struct {
			Stage   string  `json:"stage"`
			Seconds float64 `json:"seconds"`
			Count   int     `json:"count"`
			What    string  `json:"what"`
		} `json:"stages"`
	} `json:"sort"`
	Summary struct {
		Wall float64 `json:"wall_seconds"`
	} `json:"summary"`
	Warnings []string `json:"warnings"`
}

// readSummary fills the summary of the folder dir from its dspk.json
// (when readable) and the arrays in and table t.
func readSummary(dir string, in *quality.Input, t *quality.Table) summary {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	s := summary{Folder: abs, Seconds: num(float64(in.NumSamples) / in.SampleRate), Units: len(t.UnitIDs),
		Spikes: len(in.SpikeTimes), Labels: map[string]int{}}
	for _, l := range t.Labels {
		s.Labels[l]++
	}
	for _, l := range readLabelTable(filepath.Join(dir, "cluster_KSLabel.tsv")) {
		if l == "good" {
			s.KSGood++
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "dspk.json"))
	if err != nil {
		return s
	}
	var p provenance
	if err := json.Unmarshal(b, &p); err != nil {
		s.Notes = append(s.Notes, "dspk.json is not readable: "+err.Error())
		return s
	}
	s.Recording, s.Device, s.Version, s.Wall, s.Warnings = p.Input.Path, p.Device, p.Version, num(p.Summary.Wall), p.Warnings
	for _, st := range p.Sort.Stages {
		s.Stages = append(s.Stages, stage{Name: st.Stage, Seconds: num(st.Seconds), Count: st.Count, What: st.What})
	}
	return s
}
