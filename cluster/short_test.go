package cluster

import (
	"strings"
	"testing"
)

func TestShortWarning(t *testing.T) {
	for _, c := range []struct {
		seconds float64
		want    string
	}{
		{60, "the sort uses 60 s of recording: under 300 s it merges many units"},
		{299.4, "holds 1000"},
		{300, ""},
		{600, ""},
	} {
		got := ShortWarning(c.seconds)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("ShortWarning(%g) = %q, want %q", c.seconds, got, c.want)
		}
	}
}
