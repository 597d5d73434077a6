package recording

import (
	"fmt"
	"sort"
	"strings"
)

// ScaleSummary lists the distinct non-zero µV-per-count scales of a
// recording's channels with their counts (the first four), and how many
// are unscaled (a sync channel); "unknown" when none is known.
func ScaleSummary(uv []float64) string {
	counts := map[float64]int{}
	zero := 0
	for _, v := range uv {
		if v == 0 {
			zero++
			continue
		}
		counts[v]++
	}
	if len(counts) == 0 {
		return "unknown"
	}
	keys := make([]float64, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Float64s(keys)
	var parts []string
	for i, k := range keys {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("… (%d distinct)", len(keys)))
			break
		}
		parts = append(parts, fmt.Sprintf("%.6g (%d ch)", k, counts[k]))
	}
	s := strings.Join(parts, ", ")
	if zero > 0 {
		s += fmt.Sprintf("; %d unscaled (sync)", zero)
	}
	return s
}
