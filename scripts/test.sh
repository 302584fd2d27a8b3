#!/usr/bin/env bash
# test.sh is `make test`: everything the tests need, then every test.
#
#   1. PostgreSQL 17 + pgvector on 127.0.0.1:54322 (localdb.sh; provisioned once, about a minute)
#   2. PgBouncer in transaction mode on 127.0.0.1:6543 (pgbouncer.sh)
#   3. Redis on 127.0.0.1:6380 (redis.sh; Debian's redis-server, installed when missing) for the
#      Redis adapter's tests (AGENTMEM_TEST_REDIS_URL)
#   4. the migrations on the main local database (migrate.sh), then Supabase's advisors on it
#      (advisors.sh): a security finding fails the run
#   5. go vet ./... and go test -count=1 ./..., with AGENTMEM_TEST_DATABASE_URL (the tests make
#      their own databases from it) and AGENTMEM_TEST_POOLER_URL (the function suite again,
#      through the pooler)
#   6. the TypeScript client's tests and the demo page's browser test (test-js.sh: Chromium from
#      Debian's packages and the npm packages installed when missing; `agentmem serve` on a free
#      port against a database of its own). AGENTMEM_SKIP_JS=1 leaves them out.
#   7. the Python client's tests (test-python.sh: the same kind of server; PyYAML, httpx and
#      pyright installed when missing and possible). AGENTMEM_SKIP_PYTHON=1 leaves them out.
#
# Works from a fresh clone on a machine with only Go, as root, without Docker; quick when the
# stack is already there. Arguments are passed to go test (e.g. scripts/test.sh -run TestRecall).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

started=$(date +%s)
log() { printf 'test: %s\n' "$*" >&2; }
die() { printf 'test: error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go is missing; install Go (see go.mod for the version)"

# AGENTMEM_DB_PORT and AGENTMEM_POOLER_PORT move the whole stack, e.g. to try a clean provision
# (with AGENTMEM_PG_ROOTFS) beside a running one.
DB_PORT=${AGENTMEM_DB_PORT:-54322}
POOL_PORT=${AGENTMEM_POOLER_PORT:-6543}
LOCAL_URL=postgresql://postgres:postgres@127.0.0.1:${DB_PORT}/postgres
POOLER_URL=postgresql://postgres:postgres@127.0.0.1:${POOL_PORT}/postgres

scripts/localdb.sh
scripts/pgbouncer.sh
scripts/redis.sh
scripts/migrate.sh
scripts/advisors.sh

export AGENTMEM_TEST_DATABASE_URL=${AGENTMEM_TEST_DATABASE_URL:-${DATABASE_URL:-$LOCAL_URL}}
export AGENTMEM_TEST_REDIS_URL=${AGENTMEM_TEST_REDIS_URL:-redis://127.0.0.1:${AGENTMEM_REDIS_PORT:-6380}}
if [ -z "${AGENTMEM_TEST_POOLER_URL:-}" ] && (exec 3<>"/dev/tcp/127.0.0.1/${POOL_PORT}") 2>/dev/null; then
	export AGENTMEM_TEST_POOLER_URL=$POOLER_URL
fi
[ -n "${AGENTMEM_TEST_POOLER_URL:-}" ] || log "no pooler: the pooler suite is skipped"

ready=$(date +%s)
log "stack ready in $((ready - started))s"

failed=0
log "go vet ./..."
go vet ./... || { failed=1; log "go vet failed"; }

RENDER='
const rl = require("readline").createInterface({ input: process.stdin, crlfDelay: Infinity });
const logs = new Map();
const n = { pass: 0, fail: 0, skip: 0 };
const key = (e) => e.Package + "\u0000" + (e.Test || "");
rl.on("line", (line) => {
	let e;
	try { e = JSON.parse(line); } catch { console.log(line); return; }
	if (!e || typeof e !== "object" || !e.Action) { console.log(line); return; }
	if (e.Action === "build-output") { process.stdout.write(e.Output || ""); return; }
	if (e.Action === "output") {
		const k = key(e);
		logs.set(k, (logs.get(k) || "") + (e.Output || ""));
		return;
	}
	if (!["pass", "fail", "skip"].includes(e.Action)) return;
	const k = key(e);
	const out = logs.get(k) || "";
	logs.delete(k);
	if (e.Test) {
		n[e.Action]++;
		if (e.Action === "fail") process.stdout.write(out);
		return;
	}
	const pkg = e.Package;
	if (e.Action === "pass") console.log(`ok  \t${pkg}\t${(e.Elapsed || 0).toFixed(3)}s`);
	else if (e.Action === "skip") console.log(`?   \t${pkg}\t[no test files]`);
	else process.stdout.write(out.includes("FAIL") ? out : out + `FAIL\t${pkg}\n`);
});
rl.on("close", () => {
	for (const out of logs.values()) process.stdout.write(out);
	require("fs").writeFileSync(process.env.COUNTS, `${n.pass} passed, ${n.fail} failed, ${n.skip} skipped\n`);
});
'

# run_tests LABEL COUNTS_FILE ARGS...: go test -json, rendered as the plain output plus the
# failing tests' logs, with the counts written to COUNTS_FILE.
run_tests() {
	local label=$1 counts=$2
	shift 2
	log "go test -count=1 $label"
	set +e
	go test -count=1 -json "$@" 2>&1 | COUNTS=$counts node -e "$RENDER"
	local status=("${PIPESTATUS[@]}")
	set -e
	[ "${status[1]}" = 0 ] || die "could not read the go test output"
	[ "${status[0]}" = 0 ] || failed=1
}

counts=$(mktemp)
pooler_counts=$(mktemp)
echo "0 passed, 0 failed, 0 skipped" >"$pooler_counts"
trap 'rm -f "$counts" "$pooler_counts"' EXIT
run_tests "./...${*:+ $*}" "$counts" "$@" ./...
# The function suite again, every request through the transaction-mode pooler.
if [ -n "${AGENTMEM_TEST_POOLER_URL:-}" ]; then
	AGENTMEM_TEST_VIA_POOLER=1 run_tests "./shared/httpapi/ through the pooler${*:+ $*}" "$pooler_counts" "$@" ./shared/httpapi/
fi

# The TypeScript client and the demo page in Chromium, against a server of their own.
js_counts=$(mktemp)
echo "0 passed, 0 failed, 0 skipped" >"$js_counts"
trap 'rm -f "$counts" "$pooler_counts" "$js_counts"' EXIT
if [ "${AGENTMEM_SKIP_JS:-}" = 1 ]; then
	log "AGENTMEM_SKIP_JS=1: the client and browser tests are skipped"
elif [ -n "${*:-}" ]; then
	log "go test arguments given: the client and browser tests are skipped (make test-js runs them)"
else
	JS_COUNTS=$js_counts scripts/test-js.sh || { failed=1; log "client or browser tests failed"; }
fi

# The Python client, against a server of its own.
py_counts=$(mktemp)
echo "0 passed, 0 failed, 0 skipped" >"$py_counts"
trap 'rm -f "$counts" "$pooler_counts" "$js_counts" "$py_counts"' EXIT
if [ "${AGENTMEM_SKIP_PYTHON:-}" = 1 ]; then
	log "AGENTMEM_SKIP_PYTHON=1: the Python client's tests are skipped"
elif [ -n "${*:-}" ]; then
	log "go test arguments given: the Python client's tests are skipped (make test-python runs them)"
else
	PY_COUNTS=$py_counts scripts/test-python.sh || { failed=1; log "Python client tests failed"; }
fi

# pg_cron running the sweep's job, on a private server: enabling pg_cron needs a restart that a
# shared server must not get (scripts/test-pg-cron.sh). Only on a full run, where localdb.sh's
# root filesystem (with pg_cron) is there.
if [ $# -eq 0 ] && [ "$(id -u)" = 0 ] &&
	[ -f "${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}/usr/share/postgresql/17/extension/pg_cron.control" ]; then
	scripts/test-pg-cron.sh >/dev/null || { log "pg_cron: FAIL (run scripts/test-pg-cron.sh to see why)"; failed=1; }
fi

result=PASS
[ "$failed" = 0 ] || result=FAIL
log "$result in $(($(date +%s) - started))s (stack ready in $((ready - started))s)"
# The last line: the count of tests, for people and for CI.
# The runs' counts added up (go test, through the pooler, the client and browser tests, Python).
printf 'summary: %s\n' "$(cat "$counts" "$pooler_counts" "$js_counts" "$py_counts" | awk '{p += $1; f += $3; k += $5} END {printf "%d passed, %d failed, %d skipped", p, f, k}')"
exit "$failed"
