package bench

import (
	"strings"
	"testing"
)

// The biggest user's commit goal judges the commit as it is by default (its vectors after the
// answer) when the run measured it, and the commit with its vectors otherwise.
func TestBigUserCommitGoalJudgesTheDefaultCommit(t *testing.T) {
	commitGoal := func(v *W3Sources) Goal {
		t.Helper()
		r := &Results{}
		r.Workloads.W3SourcesClustered = v
		for _, g := range EvaluateGoals(r) {
			if strings.HasPrefix(g.Name, "commit-turn p50 into that user") {
				return g
			}
		}
		t.Fatal("no commit goal")
		return Goal{}
	}
	both := &W3Sources{Rows: 100_000,
		Commits:         Phase{Ops: 200, Latency: Latency{P50MS: 20}},
		CommitsDeferred: Phase{Ops: 200, Latency: Latency{P50MS: 0.9}}}
	if g := commitGoal(both); !g.Met || g.Value != 0.9 || !strings.Contains(g.Name, "the default") {
		t.Errorf("with both commits measured: %+v, want the default commit's 0.9 ms, met", g)
	}
	atCommit := &W3Sources{Rows: 100_000, Commits: Phase{Ops: 200, Latency: Latency{P50MS: 20}}}
	if g := commitGoal(atCommit); g.Met || g.Value != 20 || !strings.Contains(g.Name, "vectors at commit") {
		t.Errorf("with the commit at commit alone: %+v, want its 20 ms, not met", g)
	}
	failing := &W3Sources{Rows: 100_000,
		Commits:         Phase{Ops: 200, Latency: Latency{P50MS: 2}},
		CommitsDeferred: Phase{Ops: 200, Errors: 1, Latency: Latency{P50MS: 0.9}}}
	if g := commitGoal(failing); g.Met {
		t.Errorf("a default commit with errors: %+v, want not met", g)
	}
}
