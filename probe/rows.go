package probe

import (
	"fmt"
	"strings"
)

// RowsUsed describes which of a file's nChan rows p's channel map reads,
// e.g. "384 of 385: 0–383 (unused: 384)", and says when they are read out
// of order.
func (p *Probe) RowsUsed(nChan int) string {
	cm := p.ChanMap
	used := make([]bool, nChan)
	for _, r := range cm {
		if r >= 0 && r < nChan {
			used[r] = true
		}
	}
	ranges := func(want bool) string {
		var parts []string
		for i := 0; i < nChan; i++ {
			if used[i] != want {
				continue
			}
			j := i
			for j+1 < nChan && used[j+1] == want {
				j++
			}
			if j > i {
				parts = append(parts, fmt.Sprintf("%d–%d", i, j))
			} else {
				parts = append(parts, fmt.Sprint(i))
			}
			i = j
		}
		return strings.Join(parts, ", ")
	}
	s := fmt.Sprintf("%d of %d: %s", len(cm), nChan, ranges(true))
	if len(cm) < nChan {
		s += " (unused: " + ranges(false) + ")"
	}
	ordered := true
	for i := 1; i < len(cm); i++ {
		ordered = ordered && cm[i] > cm[i-1]
	}
	if !ordered {
		s += "; sites are read in the channel map's order"
	}
	return s
}
