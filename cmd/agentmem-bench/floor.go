package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentmem/agentmem/cmd/agentmem-bench/internal/bench"
)

// runFloor times the simplest calls on a pool configured as the store's (statements described
// once per connection, no named prepared statements): what any store call costs at least.
func runFloor(ctx context.Context, db *benchDB, n int) (*bench.Floor, error) {
	pc, err := pgxpool.ParseConfig(db.url)
	if err != nil {
		return nil, err
	}
	pc.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	pc.MaxConns = 2
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("floor pool: %w", err)
	}
	defer pool.Close()
	one := func(ctx context.Context, _ int) error {
		var v int
		return pool.QueryRow(ctx, "select 1").Scan(&v)
	}
	tx := func(ctx context.Context, _ int) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			var v int
			return tx.QueryRow(ctx, "select 1").Scan(&v)
		})
	}
	measure(ctx, 1, 50, one)
	f := &bench.Floor{SelectOne: measure(ctx, 1, n, one)}
	measure(ctx, 1, 50, tx)
	f.Transaction = measure(ctx, 1, n, tx)
	return f, nil
}
