package store_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	pgvector "github.com/pgvector/pgvector-go"

	"github.com/agentmem/agentmem/shared/embedding"
	"github.com/agentmem/agentmem/shared/store"
)

// The exact rankings compute each row's distance once: the filters on it (not null, not NaN,
// within the merge threshold) and the order read the distance computed below them, not the
// operator again (migration compute_each_distance_once). Each statement's plan, as auto_explain
// logs it, is read for a Filter or Sort Key that names the distance operator.
func TestExactRankingsComputeEachDistanceOnce(t *testing.T) {
	t.Parallel()
	e := newRankEnv(t, store.Ranking{})
	user := uuid.New()
	e.seed(t, user, "", []string{rankFact(1), rankFact(2), rankFact(3)}, []string{`{}`, `{}`, `{}`})
	q := pgvector.NewVector(embedding.Hash{}.Vector(rankFact(1))).String()
	model := embedding.HashModel
	for _, c := range []struct {
		name, sql string
		args      []any
	}{
		{"memory_neighbours", `select n.id::text from agentmem.memory_neighbours($1, '', '', '{}', null, null,
			$2::extensions.vector, $3, 10, true) n`, []any{user.String(), q, model}},
		{"message_neighbours", `select n.seq::text from agentmem.message_neighbours($1, '', '', '{}', '', '', null, null,
			$2::extensions.vector, $3, 10, true) n`, []any{user.String(), q, model}},
		{"knowledge_neighbours", `select n.id::text from agentmem.knowledge_neighbours('', $1::extensions.vector, $2, 10, 1000) n`,
			[]any{q, model}},
		{"match_memories", `select m.id::text from public.match_memories($1::extensions.vector, 10, $2, '', $3) m`,
			[]any{q, user.String(), model}},
		{"match_knowledge", `select k.id::text from public.match_knowledge($1::extensions.vector, 10, '', $2) k`,
			[]any{q, model}},
		{"hybrid_match_memories", `select m.id::text from public.hybrid_match_memories('tea', $1::extensions.vector, 10,
			filter_user_id => $2, filter_tenant_id => '', query_model => $3) m`, []any{q, user.String(), model}},
		{"store_memories", `select s.fact_key from agentmem.store_memories('', $1, '', null, array[$2], array[md5($2)],
			array['{}'], array[$3], $4, 3600, 0.9) s`, []any{user.String(), rankFact(4), q, model}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plans, _ := explain(t, e.url, c.sql, c.args...)
			filtered := false // the ranking was planned and logged: its rows are filtered by the distance
			// (x.d, or d in a scan of a materialized list)
			for line := range strings.Lines(plans) {
				l := strings.TrimSpace(line)
				filtered = filtered || strings.HasPrefix(l, "Filter:") &&
					(strings.Contains(l, "x.d ") || strings.Contains(l, "(d IS NOT NULL)"))
				if (strings.HasPrefix(l, "Filter:") || strings.HasPrefix(l, "Sort Key:")) && strings.Contains(l, "<=>") {
					t.Errorf("a filter or order computes the distance again: %s\n%s", l, plans)
				}
			}
			if !filtered {
				t.Errorf("no plan filtering by the distance x.d was logged:\n%s", plans)
			}
		})
	}
}
