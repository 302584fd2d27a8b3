package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestRunReplica runs the replica workload in the tiny sizes against a primary and a streaming
// replica of it: every read answered, the reads with nothing written all by the replica, no
// read missing its client's turn, and some of the committing clients' reads by the replica.
// scripts/replica.sh (make test-replica) starts the servers and runs it; without them it is
// skipped.
func TestRunReplica(t *testing.T) {
	primary, replica := os.Getenv("AGENTMEM_REPLICA_PRIMARY_URL"), os.Getenv("AGENTMEM_REPLICA_URL")
	if primary == "" || replica == "" {
		t.Skip("the replica workload reads a streaming replica: run it with make test-replica, which starts a primary and a replica " +
			"(AGENTMEM_REPLICA_PRIMARY_URL and AGENTMEM_REPLICA_URL unset)")
	}
	cfg := tinyConfig(t, primary, 1)
	cfg.ReplicaURL, cfg.Only = replica, map[string]bool{"replica": true}
	out := cfg.OutDir
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rp := res.Workloads.Replica
	if rp == nil || rp.Context == nil || rp.Recall == nil || len(rp.Mixed) != len(replicaThinks) {
		t.Fatalf("replica results %+v: want get-context, recall and one mixed run per pause", rp)
	}
	for name, r := range map[string]struct {
		errs  int
		share float64
	}{"get-context": {rp.Context.Primary.Errors + rp.Context.Replica.Errors, rp.Context.ReplicaShare},
		"recall": {rp.Recall.Primary.Errors + rp.Recall.Replica.Errors, rp.Recall.ReplicaShare}} {
		if r.errs != 0 || r.share != 1 {
			t.Errorf("%s: %d errors, %.2f of the reads by the replica; want none and all", name, r.errs, r.share)
		}
	}
	replicaReads := 0.0
	for _, m := range rp.Mixed {
		if m.Stale != 0 || m.Commit.Errors != 0 || m.Read.Errors != 0 || m.Read.Latency.N != m.Turns {
			t.Errorf("mixed, %v ms: %d stale, %d + %d errors, %d reads of %d turns", m.ThinkMS, m.Stale, m.Commit.Errors,
				m.Read.Errors, m.Read.Latency.N, m.Turns)
		}
		replicaReads += m.ReplicaShare * float64(m.Turns)
	}
	if replicaReads == 0 {
		t.Errorf("no read of the committing clients was answered by the replica")
	}
	readResults(t, out)
}
