package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentmem/agentmem/shared/config"
	"github.com/agentmem/agentmem/shared/dbsecret"
	"github.com/agentmem/agentmem/shared/schema"
)

// partition partitions the user-owned tables by user after the migrations
// (agentmem.partition_by_user): USER_PARTITIONS or --partitions of them, 1 changing nothing.
// scripts/migrate.sh runs it when USER_PARTITIONS is more than 1.
func partition(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("partition", flag.ContinueOnError)
	n := fs.Int("partitions", 0, "partitions of each user-owned table (default USER_PARTITIONS, else 1: one table each, as the migrations make them)")
	lockTimeout := fs.Duration("lock-timeout", 10*time.Second, "how long to wait for the tables' locks before giving up (0: no limit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	getenv, err := dbsecret.Getenv(ctx, os.Getenv)
	if err != nil {
		return err
	}
	want := *n
	if want == 0 {
		if want, err = schema.ParseUserPartitions(getenv("USER_PARTITIONS")); err != nil {
			return err
		}
	}
	if want < 1 || want > schema.MaxUserPartitions {
		return fmt.Errorf("--partitions %d: want a whole number from 1 to %d", want, schema.MaxUserPartitions)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	cc, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	// The server's line about each table converted: rows, partitions, seconds.
	cc.OnNotice = func(_ *pgconn.PgConn, m *pgconn.Notice) { fmt.Fprintln(out, m.Message) }
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.Background())
	started := time.Now()
	converted, err := schema.PartitionByUser(ctx, conn, want, *lockTimeout)
	if err != nil {
		return err
	}
	switch {
	case want == 1:
		fmt.Fprintln(out, "one table each (USER_PARTITIONS is 1): nothing to do")
	case converted == 0:
		fmt.Fprintf(out, "every user-owned table has %d partitions already\n", want)
	default:
		fmt.Fprintf(out, "partitioned %d tables into %d partitions each in %s\n", converted, want, time.Since(started).Round(time.Millisecond))
	}
	return nil
}
