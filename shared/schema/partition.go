package schema

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxUserPartitions is the most partitions agentmem.partition_by_user makes per table: beyond
// it planning over the partitions costs more than it saves, and a distributed Postgres is the
// next step (docs/scaling.md).
const MaxUserPartitions = 256

// ParseUserPartitions reads USER_PARTITIONS: empty means 1 (one table each, the layout of the
// migrations); otherwise a whole number from 1 to MaxUserPartitions.
func ParseUserPartitions(s string) (int, error) {
	if s == "" {
		return 1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxUserPartitions {
		return 0, fmt.Errorf("USER_PARTITIONS=%q: want a whole number from 1 to %d", s, MaxUserPartitions)
	}
	return n, nil
}

// PartitionByUser partitions every user-owned table by hash of its user into n partitions
// (agentmem.partition_by_user, in a transaction of its own) after the migrations, and returns
// how many tables it converted: 0 when n is 1 or the tables already have n partitions. It
// fails, changing nothing, when they have another number. lockTimeout bounds the wait for the
// tables' locks (0: no bound), so that a long transaction of the service fails the run instead
// of queueing every request behind it; the conversion itself runs without a statement timeout.
// The server says each table's rows and time as a notice (pgconn.Config.OnNotice hears it).
func PartitionByUser(ctx context.Context, conn *pgx.Conn, n int, lockTimeout time.Duration) (int, error) {
	if n < 1 || n > MaxUserPartitions {
		return 0, fmt.Errorf("partitions: %d is not between 1 and %d", n, MaxUserPartitions)
	}
	var converted int
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `select set_config('lock_timeout', $1::text, true),
			set_config('statement_timeout', '0', true)`, strconv.FormatInt(lockTimeout.Milliseconds(), 10)); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `select agentmem.partition_by_user($1::int)`, n).Scan(&converted)
	})
	if err != nil {
		return 0, fmt.Errorf("partition by user: %w", err)
	}
	return converted, nil
}
