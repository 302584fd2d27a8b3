#!/usr/bin/env bash
# test-js.sh runs the TypeScript client's tests and the demo page's browser test against a real
# local server (part of `make test`; also `make test-js`):
#
#   1. Chromium from Debian's packages (apt-get install chromium) and the client's npm packages
#      (npm ci in clients/typescript), when missing or stale
#   2. a database of its own (agentmem_jstest_<pid>, cloned from the migrated template of the Go
#      tests by cmd/agentmem-testdb) and `agentmem serve` on a free loopback port against it
#   3. npm run check (the generated types, the committed dist/ and the demo bundle match their
#      sources), the package test (npm pack, installed into a fresh project outside the
#      repository and imported from every entry point), the unit tests with node --test, the
#      format tests (get-context's openai, anthropic and langchain
#      answers checked with the openai, @anthropic-ai/sdk and @langchain/core packages), then
#      the browser test (playwright-core driving the system Chromium: no browser download)
#
# Needs the test server in AGENTMEM_TEST_DATABASE_URL (test.sh sets it; default the local
# database). AGENTMEM_DEMO_SCREENSHOT names where the page's screenshot goes (default
# build/demo.png; `make demo-png` writes docs/demo.png). JS_COUNTS, when set, names a file that
# gets the counts of the tests ("P passed, F failed, S skipped").
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

log() { printf 'test-js: %s\n' "$*" >&2; }
die() { printf 'test-js: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go is missing; install Go (see go.mod for the version)"

export AGENTMEM_TEST_DATABASE_URL=${AGENTMEM_TEST_DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
CLIENT=clients/typescript

# as_root runs a command as root (directly, or through sudo).
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
		die "need root to run: $*"
	fi
}

# 1. Chromium, Node.js, the npm packages.
CHROMIUM=${CHROMIUM:-}
if [ -z "$CHROMIUM" ]; then
	for c in /usr/bin/chromium /usr/bin/chromium-browser; do
		[ -x "$c" ] && { CHROMIUM=$c; break; }
	done
fi
if [ -z "$CHROMIUM" ]; then
	command -v apt-get >/dev/null 2>&1 || die "Chromium is missing; install Debian's chromium package"
	log "installing Chromium (apt-get install chromium)"
	(as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1) || {
		as_root apt-get update -qq >/dev/null && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
	} || die "could not install chromium"
	CHROMIUM=/usr/bin/chromium
fi
export CHROMIUM

if ! command -v npm >/dev/null 2>&1 || [ -z "$(node_major)" ]; then
	log "installing Node.js and npm"
	(as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null 2>&1) || die "could not install nodejs and npm"
fi
[ "$(node_major)" -ge 18 ] || die "Node.js 18 or newer is needed (found $(node --version))"

# npm ci when node_modules was not installed from this very lock file.
stamp=$CLIENT/node_modules/.agentmem-lock
if ! cmp -s "$CLIENT/package-lock.json" "$stamp" 2>/dev/null; then
	log "npm ci in $CLIENT"
	(cd "$CLIENT" && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci failed in $CLIENT"
	cp "$CLIENT/package-lock.json" "$stamp"
fi

# 2. A database and a server of their own.
work=$(mktemp -d)
db=agentmem_jstest_$$
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	"$work/agentmem-testdb" drop "$db" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/" ./cmd/agentmem ./cmd/agentmem-testdb
db_url=$("$work/agentmem-testdb" create "$db") || die "could not create the test database"

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
ADDR=127.0.0.1:$port DATABASE_URL=$db_url LOG_LEVEL=warn CORS_ALLOWED_ORIGINS='*' DEMO_TOKENS=true \
	SUPABASE_JWT_SECRET=${SUPABASE_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long} \
	"$work/agentmem" serve >"$work/server.log" 2>&1 &
server_pid=$!
export AGENTMEM_URL=http://127.0.0.1:$port
healthy() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$AGENTMEM_URL/healthz"; }
for _ in $(seq 1 150); do
	healthy && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; die "the server stopped"; }
	sleep 0.2
done
healthy || { cat "$work/server.log" >&2; die "the server did not come up"; }
log "server at $AGENTMEM_URL on database $db"

# 3. The tests.
export AGENTMEM_DEMO_SCREENSHOT=${AGENTMEM_DEMO_SCREENSHOT:-$ROOT/build/demo.png}
mkdir -p "$(dirname "$AGENTMEM_DEMO_SCREENSHOT")"
failed=0
tap=$work/tap
: >"$tap"
# run_node LABEL DIR: node --test on DIR/*.test.mjs, the spec output on the terminal and the
# TAP output counted.
run_node() {
	log "$1"
	local out=$tap.$(basename "$2")
	(cd "$CLIENT" && node --test --test-reporter=spec --test-reporter-destination=stdout \
		--test-reporter=tap --test-reporter-destination="$out" "$2"/*.test.mjs) || failed=1
	cat "$out" >>"$tap" 2>/dev/null || true
}
log "npm run check (generated types, tsc and dist/, demo bundle)"
(cd "$CLIENT" && npm run --silent check) || failed=1
run_node "package test (npm pack, installed in a fresh project)" test/package
run_node "unit tests (node --test) against $AGENTMEM_URL" test/unit
run_node "format tests (openai, @anthropic-ai/sdk, @langchain/core)" test/formats
run_node "browser test (Chromium $($CHROMIUM --version 2>/dev/null | awk '{print $2}'))" test/browser

if [ "$failed" != 0 ] && [ -s "$work/server.log" ]; then
	log "server log:"
	tail -n 50 "$work/server.log" >&2
fi
counts=$(awk '/^# pass /{p+=$3} /^# fail /{f+=$3} /^# skipped /{s+=$3} END {printf "%d passed, %d failed, %d skipped", p, f, s}' "$tap")
log "$counts"
[ -z "${JS_COUNTS:-}" ] || echo "$counts" >"$JS_COUNTS"
exit "$failed"
