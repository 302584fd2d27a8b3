package service

import "testing"

// RECALL_FOLLOW_WEIGHT=0 turns the credit off: the store's Ranking reads 0 as "the default"
// and a negative weight as none, so 0 must reach it as a negative one; any other weight as it is.
func TestFollowWeight(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]float64{0: -1, 0.25: 0.25, 0.5: 0.5, 1: 1} {
		if got := followWeight(in); got != want {
			t.Errorf("followWeight(%v) = %v, want %v", in, got, want)
		}
	}
}
