package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agentmem/agentmem/shared/testdb"
)

// agentmem partition partitions the tables into USER_PARTITIONS (or --partitions), printing
// each table's line; run again it has nothing to do, and another number, or a USER_PARTITIONS
// that is not one, is refused.
func TestPartitionCommand(t *testing.T) {
	db := testdb.NewPartitioned(t, 1)
	t.Setenv("DATABASE_URL", db.URL)
	t.Setenv("USER_PARTITIONS", "2")
	ctx := context.Background()
	var out strings.Builder
	if err := partition(ctx, nil, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"partitioned agentmem.messages: 0 rows into 2 partitions", "into 2 partitions each"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := partition(ctx, []string{"--partitions", "2"}, &out); err != nil || out.String() != "every user-owned table has 2 partitions already\n" {
		t.Errorf("again: %v\n%s", err, out.String())
	}
	if err := partition(ctx, []string{"--partitions", "3"}, &out); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("another number: %v", err)
	}
	t.Setenv("USER_PARTITIONS", "many")
	if err := partition(ctx, nil, &out); err == nil || !strings.Contains(err.Error(), "USER_PARTITIONS") {
		t.Errorf("USER_PARTITIONS=many: %v", err)
	}
}
