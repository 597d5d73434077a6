package probe

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// SiteWidth is the side in µm of the square sites [WriteProbeInterface]
// writes: Neuropixels sites are 12-µm squares. A Probe carries no site
// shapes, so other probes get the same (only plots use it).
const SiteWidth = 12.0

// piVersion is the probeinterface format version written; it is the
// version of the library files dspk was checked against.
const piVersion = "0.3.2"

// WriteProbeInterface writes p as a probeinterface ProbeGroup JSON
// document holding one 2-D probe in µm, in the layout probeinterface's
// own writer uses: one contact per site in site order, contact_ids "0",
// "1", …, shank_ids as strings, 12-µm square sites and
// device_channel_indices = ChanMap, the site's row in the file (the
// recording's channel index for SpikeInterface). [ParseProbeInterface]
// reads it back to p (NChanFile becomes the largest row plus one). p
// must pass [Probe.Validate].
func WriteProbeInterface(w io.Writer, p *Probe) error {
	if err := p.Validate(); err != nil {
		return err
	}
	n := p.Len()
	type probe struct {
		NDim                 int                  `json:"ndim"`
		SIUnits              string               `json:"si_units"`
		Annotations          map[string]string    `json:"annotations"`
		ContactAnnotations   map[string]any       `json:"contact_annotations"`
		ContactPositions     [][2]float64         `json:"contact_positions"`
		ContactPlaneAxes     [][2][2]float64      `json:"contact_plane_axes"`
		ContactShapes        []string             `json:"contact_shapes"`
		ContactShapeParams   []map[string]float64 `json:"contact_shape_params"`
		ContactIDs           []string             `json:"contact_ids"`
		ShankIDs             []string             `json:"shank_ids"`
		DeviceChannelIndices []int                `json:"device_channel_indices"`
	}
	pr := probe{
		NDim: 2, SIUnits: "um",
		Annotations:          map[string]string{"name": p.Name, "model_name": p.Name, "manufacturer": ""},
		ContactAnnotations:   map[string]any{},
		ContactPositions:     make([][2]float64, n),
		ContactPlaneAxes:     make([][2][2]float64, n),
		ContactShapes:        make([]string, n),
		ContactShapeParams:   make([]map[string]float64, n),
		ContactIDs:           make([]string, n),
		ShankIDs:             make([]string, n),
		DeviceChannelIndices: p.ChanMap,
	}
	for i := range n {
		pr.ContactPositions[i] = [2]float64{p.X[i], p.Y[i]}
		pr.ContactPlaneAxes[i] = [2][2]float64{{1, 0}, {0, 1}}
		pr.ContactShapes[i] = "square"
		pr.ContactShapeParams[i] = map[string]float64{"width": SiteWidth}
		pr.ContactIDs[i] = strconv.Itoa(i)
		pr.ShankIDs[i] = strconv.Itoa(p.Shank[i])
	}
	doc := struct {
		Specification string  `json:"specification"`
		Version       string  `json:"version"`
		Probes        []probe `json:"probes"`
	}{"probeinterface", piVersion, []probe{pr}}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("probe %s: %w", p.Name, err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
