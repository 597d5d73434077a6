package probe

import "testing"

func TestRowsUsed(t *testing.T) {
	for _, c := range []struct {
		cm   []int
		n    int
		want string
	}{
		{[]int{0, 1, 2, 3}, 5, "4 of 5: 0–3 (unused: 4)"},
		{[]int{0, 2, 3}, 4, "3 of 4: 0, 2–3 (unused: 1)"},
		{[]int{3, 1}, 4, "2 of 4: 1, 3 (unused: 0, 2); sites are read in the channel map's order"},
		{[]int{0}, 1, "1 of 1: 0"},
	} {
		if got := (&Probe{ChanMap: c.cm}).RowsUsed(c.n); got != c.want {
			t.Errorf("RowsUsed(%v, %d) = %q, want %q", c.cm, c.n, got, c.want)
		}
	}
}
