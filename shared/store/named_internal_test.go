package store

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem/shared/memory"
)

// Each statement with named parameters is sent as pgx.NamedArgs would send it: the same
// positional SQL and the same values in the same order, for arguments that name every
// parameter; and the arguments each call builds name exactly the statement's parameters.
func TestNamedStatementsBindAsNamedArgs(t *testing.T) {
	s := &Store{}
	built := map[string]pgx.NamedArgs{
		"append":         appendArgs(CommitParams{}, newMessages{}),
		"store memories": s.memoryArgs(memory.Scope{}, nil, 0, "", memoryRows{}),
		"recall":         s.recallArgs(RecallParams{}),
	}
	sources := maps.Clone(built["recall"])
	for _, k := range []string{"source", "speaker", "role", "follow_weight"} {
		sources[k] = nil // set by Recall for a source other than memories
	}
	built["recall sources"] = sources
	for name, tc := range map[string]struct {
		sql  string
		stmt namedStatement
	}{
		"append":         {appendSQL, appendStatement},
		"store memories": {storeMemoriesSQL, storeMemoriesStatement},
		"recall":         {recallSQL, recallStatement},
		"recall sources": {recallSourcesSQL, recallSourcesStatement},
		"knowledge":      {knowledgeSQL, knowledgeStatement},
	} {
		args := pgx.NamedArgs{}
		for i, n := range tc.stmt.names {
			args[n] = i*7 + 1 // a value of its own for each parameter
		}
		wantSQL, wantArgs, err := args.RewriteQuery(context.Background(), nil, tc.sql, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.stmt.sql != wantSQL || !slices.Equal(tc.stmt.args(args), wantArgs) {
			t.Errorf("%s: sent as\n%s %v\nwant, as pgx.NamedArgs sends it,\n%s %v", name, tc.stmt.sql, tc.stmt.args(args), wantSQL, wantArgs)
		}
		if len(tc.stmt.names) < 10 {
			t.Errorf("%s: %d parameters found", name, len(tc.stmt.names))
		}
		if b, ok := built[name]; ok {
			keys, params := slices.Sorted(maps.Keys(b)), slices.Sorted(slices.Values(tc.stmt.names))
			if !slices.Equal(keys, params) {
				t.Errorf("%s: the call names %v, the statement %v", name, keys, params)
			}
		}
	}
}
