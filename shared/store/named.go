package store

import (
	"context"
	"regexp"

	"github.com/jackc/pgx/v5"
)

// namedStatement is a statement written with @name parameters (pgx.NamedArgs), rewritten to
// positional ones once, when the package loads, rather than on every call: pgx rewrites a
// statement with NamedArgs each time it is sent (about 17 µs and 69 allocations for a commit's
// append, on every commit and every recall).
type namedStatement struct {
	// sql is the statement with $1, $2, ... in place of the names.
	sql string
	// names are the parameters' names in the order of their positions.
	names []string
}

// paramName is a candidate parameter name; pgx's own rewriter decides which ones are.
var paramName = regexp.MustCompile(`@([A-Za-z_][A-Za-z0-9_]*)`)

// named rewrites sql as pgx.NamedArgs does, with each parameter's name as its value, so that
// the rewritten arguments are the names in positional order.
func named(sql string) namedStatement {
	byName := pgx.NamedArgs{}
	for _, m := range paramName.FindAllStringSubmatch(sql, -1) {
		byName[m[1]] = m[1]
	}
	positional, args, err := byName.RewriteQuery(context.Background(), nil, sql, nil)
	if err != nil {
		panic("store: statement with named parameters: " + err.Error())
	}
	names := make([]string, len(args))
	for i, a := range args {
		names[i] = a.(string)
	}
	return namedStatement{sql: positional, names: names}
}

// args are the values of args in the statement's positional order; a name args lacks is NULL,
// as with pgx.NamedArgs.
func (s namedStatement) args(args pgx.NamedArgs) []any {
	out := make([]any, len(s.names))
	for i, n := range s.names {
		out[i] = args[n]
	}
	return out
}

// The statements of the store written with named parameters.
var (
	appendStatement          = named(appendSQL)
	storeMemoriesStatement   = named(storeMemoriesSQL)
	recallStatement          = named(recallSQL)
	recallSourcesStatement   = named(recallSourcesSQL)
	recallTextArmStatement   = named(recallTextArmSQL)
	recallVectorArmStatement = named(recallVectorArmSQL)
	recallFuseStatement      = named(recallFuseSQL)
	knowledgeStatement       = named(knowledgeSQL)
)
