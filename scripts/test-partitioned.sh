#!/usr/bin/env bash
# test-partitioned.sh is `make test-partitioned`: the store's, the use cases' and the HTTP API's
# tests again, on databases whose user-owned tables are partitioned by hash of their user into
# AGENTMEM_TEST_USER_PARTITIONS (default 4) partitions, as USER_PARTITIONS makes them
# (agentmem.partition_by_user; see docs/deploy.md). The tests that assert a plan of one table
# say so and skip; TestStatementsReadOnePartition checks the partitioned plans in every run.
# Arguments are passed to go test (e.g. -run TestCommit).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

scripts/localdb.sh
scripts/redis.sh

export AGENTMEM_TEST_DATABASE_URL=${AGENTMEM_TEST_DATABASE_URL:-${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}}
export AGENTMEM_TEST_REDIS_URL=${AGENTMEM_TEST_REDIS_URL:-redis://127.0.0.1:${AGENTMEM_REDIS_PORT:-6380}}
export AGENTMEM_TEST_USER_PARTITIONS=${AGENTMEM_TEST_USER_PARTITIONS:-4}

printf 'test-partitioned: go test with %s partitions per user-owned table\n' "$AGENTMEM_TEST_USER_PARTITIONS" >&2
go test -count=1 "$@" ./shared/store/... ./shared/app/ ./shared/httpapi/
