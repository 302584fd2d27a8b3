package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// EnsureEmbeddingIndexes makes the HNSW indexes (cosine) of model m and dimension on memories,
// knowledge_chunks and messages where they are missing, as agentmem.embedding_index_statements writes
// them: expression indexes over embedding::vector(n), partial on the model and dimension, so
// each model's rows have an index of their own. Vectors of more than 2,000 dimensions get none
// (HNSW's limit). concurrently builds them without blocking writes (it cannot run inside a
// transaction). conn needs the right to create indexes on the tables (their owner, as the
// migrations run). It returns the statements it ran.
func EnsureEmbeddingIndexes(ctx context.Context, conn *pgx.Conn, m VectorModel, concurrently bool) ([]string, error) {
	rows, err := conn.Query(ctx, `select agentmem.embedding_index_statements(
		model => $1::text, dims => $2::int, build_concurrently => $3::boolean)`,
		m.Name, m.Dims, concurrently)
	if err != nil {
		return nil, fmt.Errorf("embedding index statements: %w", err)
	}
	stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("embedding index statements: %w", err)
	}
	for _, st := range stmts {
		// The simple protocol: CREATE INDEX CONCURRENTLY refuses an implicit transaction block.
		if _, err := conn.PgConn().Exec(ctx, st).ReadAll(); err != nil {
			return nil, fmt.Errorf("create embedding index: %w", err)
		}
	}
	return stmts, nil
}

// EnsureEmbeddingIndexes makes the HNSW indexes of model m (see the function of the same name)
// on a connection of the pool, concurrently.
func (s *Store) EnsureEmbeddingIndexes(ctx context.Context, m VectorModel) ([]string, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, interpret(err)
	}
	defer c.Release()
	return EnsureEmbeddingIndexes(ctx, c.Conn(), m, true)
}
