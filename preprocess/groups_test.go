package preprocess

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunGroupsCAR: with groups, every group's output equals that of a
// preprocessor of the group's channels alone (CAR within the group).
func TestRunGroupsCAR(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(31, 32))
	const cf = 11
	chanMap := []int{0, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	groups := []int{5, 5, 5, 5, 1, 1, 1, 9, 9, 9}
	p := small(chanMap, cf, 300, 20)
	p.Groups = groups
	pp, err := New(nil, p)
	if err != nil {
		t.Fatal(err)
	}
	src := randWindow(rng, p.T(), cf, false)
	T := p.T()
	got := nanWindow(len(chanMap) * T)
	pp.Run(got, src, nil)
	for _, g := range []int{5, 1, 9} {
		var sub, idx []int
		for i, gi := range groups {
			if gi == g {
				sub, idx = append(sub, chanMap[i]), append(idx, i)
			}
		}
		q, err := New(nil, small(sub, cf, 300, 20))
		if err != nil {
			t.Fatal(err)
		}
		want := nanWindow(len(sub) * T)
		q.Run(want, src, nil)
		for j, i := range idx {
			if !slices.Equal(got[i*T:(i+1)*T], want[j*T:(j+1)*T]) {
				t.Fatalf("group %d channel %d differs from the group alone", g, i)
			}
		}
	}
	// One group is plain CAR.
	p.Groups = make([]int, len(chanMap))
	one, _ := New(nil, p)
	p.Groups = nil
	plain, _ := New(nil, p)
	a, b := nanWindow(len(chanMap)*T), nanWindow(len(chanMap)*T)
	one.Run(a, src, nil)
	plain.Run(b, src, nil)
	if !slices.Equal(a, b) {
		t.Error("one group differs from plain CAR")
	}
	p.Groups = []int{1, 2}
	if _, err := New(nil, p); err == nil {
		t.Error("2 group ids for 10 channels accepted")
	}
}
