package config

import (
	"fmt"
	"strconv"

	"github.com/agentmem/agentmem/shared/memory"
)

// loadRanking reads the RECALL_* settings.
func (c *Config) loadRanking(getenv func(string) string) error {
	c.RecallTextWeight, c.RecallVectorWeight = memory.DefaultTextWeight, memory.DefaultVectorWeight
	c.RecallRRFK, c.RecallExactLimit = memory.DefaultRRFK, memory.DefaultExactLimit
	c.RecallMinRelevance, c.RecallFollowWeight = memory.DefaultMinRelevance, memory.DefaultFollowWeight
	c.RecallMatchRelevance = memory.DefaultMatchRelevance
	// The weights are above 0 and at most 100; the floor and the follow weight from 0 to 1.
	for _, w := range []struct {
		name      string
		to        *float64
		zero, max float64
		rule      string
	}{
		{"RECALL_TEXT_WEIGHT", &c.RecallTextWeight, 0, 100, "a number above 0 and at most 100"},
		{"RECALL_VECTOR_WEIGHT", &c.RecallVectorWeight, 0, 100, "a number above 0 and at most 100"},
		{"RECALL_MIN_RELEVANCE", &c.RecallMinRelevance, 1, 1, "a number from 0 to 1"},
		{"RECALL_FOLLOW_WEIGHT", &c.RecallFollowWeight, 1, 1, "a number from 0 to 1"},
		{"RECALL_MATCH_RELEVANCE", &c.RecallMatchRelevance, 0, 1, "a number above 0 and at most 1"},
	} {
		if v := getenv(w.name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			// zero 1: 0 is allowed; zero 0: it is not
			if err != nil || !(f > 0 || (f == 0 && w.zero == 1)) || f > w.max {
				return fmt.Errorf("%s must be %s, not %q", w.name, w.rule, v)
			}
			*w.to = f
		}
	}
	for _, n := range []struct {
		name     string
		to       *int
		min, max int
	}{{"RECALL_RRF_K", &c.RecallRRFK, 1, 10_000}, {"RECALL_EXACT_LIMIT", &c.RecallExactLimit, 1, 10_000_000}} {
		if v := getenv(n.name); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < n.min || i > n.max {
				return fmt.Errorf("%s must be a number from %d to %d, not %q", n.name, n.min, n.max, v)
			}
			*n.to = i
		}
	}
	if v := getenv("RECALL_VECTOR_BASELINE"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		// 1 would credit no similarity at all: mode vector would never match
		if err != nil || !(f >= 0 && f <= 0.99) {
			return fmt.Errorf("RECALL_VECTOR_BASELINE must be a number from 0 to 0.99, not %q", v)
		}
		c.RecallVectorBaseline = &f
	}
	return nil
}
