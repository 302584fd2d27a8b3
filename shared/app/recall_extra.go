package app

import (
	"context"
	"strings"
	"time"

	"github.com/agentmem/agentmem/shared/memory"
	"github.com/agentmem/agentmem/shared/store"
	"github.com/agentmem/agentmem/shared/telemetry"
)

// RecallSource is a system besides the database whose memories recall merges into its
// results (the Mem0 adapter, with MEM0_RECALL).
type RecallSource interface {
	// Name names the source in logs and spans.
	Name() string
	// Search returns up to k memories of sc's user (and agent, when sc names one) nearest
	// query, best first, each with Source memory.HitMemory and its Origin. query is redacted,
	// and sc's tenant and agent are redacted as names, as the events sent to it have them.
	Search(ctx context.Context, sc memory.Scope, query string, k int) ([]memory.Hit, error)
	// RecallTimeout is how long recall waits for Search.
	RecallTimeout() time.Duration
}

// startRecallExtra starts the search of the extra recall source, when there is one and the
// request is one it can answer (memories searched, no metadata filter: the source knows
// nothing of agentmem's metadata), and returns a function that waits for its results: none
// when it failed or did not answer in time, which is logged without content. The search runs
// while the database's does; stop ends it (call it when done, waited for or not).
func (a *App) startRecallExtra(ctx context.Context, p store.RecallParams) (wait func() []memory.Hit, stop func()) {
	src := a.cfg.RecallExtra
	if src == nil || a.cfg.Redactor == nil || p.Source == memory.SourceMessages || len(p.Filter) > 0 {
		return func() []memory.Hit { return nil }, func() {}
	}
	query, _ := a.cfg.Redactor.Text(p.Query)
	// The source knows the tenant and the agent as the events named them (scrubEvent).
	sc := p.Scope
	sc.TenantID, _ = a.cfg.Redactor.Name(sc.TenantID)
	sc.Agent, _ = a.cfg.Redactor.Name(sc.Agent)
	type answer struct {
		hits []memory.Hit
		err  error
	}
	ch := make(chan answer, 1)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), src.RecallTimeout())
	start := time.Now()
	go func() {
		sctx, sp := telemetry.StartAdapter(sctx, src.Name())
		hits, err := src.Search(sctx, sc, query, p.K)
		sp.End(err)
		ch <- answer{hits, err}
	}()
	return func() []memory.Hit {
		var ans answer
		select {
		case ans = <-ch:
		case <-sctx.Done():
			ans.err = sctx.Err()
		case <-ctx.Done():
			ans.err = ctx.Err()
		}
		if ans.err != nil {
			a.log.WarnContext(ctx, "recall without the extra source", "source", src.Name(), "error", errorText(ans.err),
				"waited_ms", time.Since(start).Milliseconds())
			return nil
		}
		return ans.hits
	}, cancel
}

// mergeHits merges the database's results and another source's, at most k: alternately one
// of each, the database's first, each list in its own order (the two scores are not on one
// scale), leaving out another source's result whose text a result already taken has.
func mergeHits(local, extra []memory.Hit, k int) []memory.Hit {
	if len(extra) == 0 {
		return local
	}
	seen := map[string]bool{}
	key := func(h memory.Hit) string { return strings.ToLower(strings.Join(strings.Fields(h.Content), " ")) }
	for _, h := range local {
		seen[key(h)] = true
	}
	out := make([]memory.Hit, 0, min(k, len(local)+len(extra)))
	i, j := 0, 0
	for len(out) < k && (i < len(local) || j < len(extra)) {
		if i < len(local) {
			out = append(out, local[i])
			i++
			if len(out) == k {
				break
			}
		}
		for j < len(extra) {
			h := extra[j]
			j++
			if !seen[key(h)] {
				seen[key(h)] = true
				out = append(out, h)
				break
			}
		}
	}
	return out
}
