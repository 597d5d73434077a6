package pipeline

import (
	"fmt"
	"maps"
	"slices"

	"dspk/probe"
)

// CheckProbe refuses settings that the probe pr cannot honour: Groups on
// a probe of one group and, when nearestGiven (NearestChans was chosen
// rather than left at its default), a NearestChans larger than the probe
// (or with Groups, its smallest group), which would be clipped in
// silence.
func (c Config) CheckProbe(pr *probe.Probe, nearestGiven bool) error {
	if c.Groups {
		if shanks := slices.Compact(slices.Sorted(slices.Values(pr.Shank))); len(shanks) < 2 {
			return fmt.Errorf("-groups does not apply: every site of probe %s is in one group (shank %d); "+
				"give a probe with shank ids (probeinterface shank_ids, Kilosort kcoords) or leave -groups out", pr.Name, pr.Shank[0])
		}
	}
	if nearestGiven {
		limit, what := pr.Len(), fmt.Sprintf("probe %s has %d sites", pr.Name, pr.Len())
		if c.Groups {
			size := map[int]int{}
			for _, s := range pr.Shank {
				size[s]++
			}
			for _, s := range slices.Sorted(maps.Keys(size)) {
				if n := size[s]; n < limit {
					limit, what = n, fmt.Sprintf("with -groups each group is searched on its own, and group %d of probe %s has %d sites", s, pr.Name, n)
				}
			}
		}
		if c.NearestChans > limit {
			return fmt.Errorf("-nearest_chans %d: %s; give at most %d", c.NearestChans, what, limit)
		}
	}
	return nil
}

// CheckProbe refuses sort settings that the probe pr cannot honour: more
// clustering x centres (XCenters) than the distinct x positions of its
// sites (k-means would place centres on the same x, and groups would be
// empty).
func (o SortOptions) CheckProbe(pr *probe.Probe) error {
	if xs := slices.Compact(slices.Sorted(slices.Values(pr.X))); o.Cluster.XCenters > len(xs) {
		return fmt.Errorf("-x_centers %d: the sites of probe %s lie at %d distinct x positions; give at most %d (0: from the channels' x histogram)",
			o.Cluster.XCenters, pr.Name, len(xs), len(xs))
	}
	return nil
}
