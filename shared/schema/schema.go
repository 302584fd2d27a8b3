// Package schema applies the database files: the local Supabase bootstrap and the migrations
// of supabase/migrations, the same files the Supabase CLI applies.
package schema

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/agentmem/agentmem"
)

// Bootstrap creates, where absent, what every Supabase database already has (API roles, auth
// helpers, auth.users). For local databases: on a Supabase project it finds everything present.
func Bootstrap(ctx context.Context, conn *pgx.Conn) error {
	if err := execFile(ctx, conn, agentmem.LocalBootstrap()); err != nil {
		return fmt.Errorf("apply local bootstrap: %w", err)
	}
	return nil
}

// Migrate applies every migration in order, each file in one transaction. It keeps no history:
// it is for fresh databases (tests); deployed databases are migrated by the Supabase CLI.
func Migrate(ctx context.Context, conn *pgx.Conn) error {
	migs, err := agentmem.Migrations()
	if err != nil {
		return err
	}
	for _, m := range migs {
		if err := execFile(ctx, conn, m.SQL); err != nil {
			return fmt.Errorf("apply %s: %w", m.Name, err)
		}
	}
	return nil
}

func execFile(ctx context.Context, conn *pgx.Conn, sql string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	// The simple protocol runs a whole file of statements in one call.
	if _, err := tx.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
