package cluster

import (
	"fmt"

	"dspk/kilosort"
)

// ShortSeconds is the length of recording under which [ShortWarning]
// warns that units merge. A group is split only once it holds
// MinGroup (kilosort.ClusterMinGroup, 1000) spikes, which a 3-Hz unit
// reaches in 333 s: 60 s of 120 simulated NP1 units give 93 of them well
// detected, 10 minutes 120 (docs/perf-sort.md).
const ShortSeconds = 300

// ShortWarning is the warning for a sort of seconds of recording: that
// under ShortSeconds the clustering merges many units, or "".
func ShortWarning(seconds float64) string {
	if seconds >= ShortSeconds {
		return ""
	}
	return fmt.Sprintf("the sort uses %.0f s of recording: under %d s it merges many units, because its clustering splits a group of spikes "+
		"only once the group holds %d (60 s of 120 simulated units: 93 well detected; 10 minutes: 120); sort 5 minutes or more",
		seconds, ShortSeconds, kilosort.ClusterMinGroup)
}
