// Package replicatest holds the read replica test (TestReadReplicas): the service with
// DATABASE_READ_URL against a primary and a real streaming replica of it, which
// scripts/replica.sh (make test-replica) starts, pauses and kills. It has no code of its own:
// it is a package apart so that the test's servers start only when it is asked for.
package replicatest
