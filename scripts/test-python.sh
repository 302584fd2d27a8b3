#!/usr/bin/env bash
# test-python.sh runs the Python client's tests against a real local server (part of
# `make test`; also `make test-python`):
#
#   1. a Python 3.9 or newer with PyYAML (the generated types are checked against
#      docs/openapi.yaml); python3-yaml from Debian's packages when missing. httpx, for the
#      asyncio client's tests: already importable (or with Debian's /usr/bin/python3), else pip
#      into a venv in the cache dir, else Debian's python3-httpx; without it those tests are
#      skipped, saying so
#   2. pyright (npm, pinned, in the cache dir) type-checks the package in strict mode for
#      Python 3.9; skipped, saying so, when npm cannot install it
#   3. a database of its own (agentmem_jstest_py<pid>, cloned from the migrated template of the
#      Go tests by cmd/agentmem-testdb) and `agentmem serve` on a free loopback port against it,
#      with RATE_LIMIT_BACKFILL_PER_HOUR=2 so that a test meets a real 429
#   4. python3 -m unittest discovery over clients/python/tests (tests/run.py), which ends with
#      "P passed, F failed, S skipped"
#
# Needs the test server in AGENTMEM_TEST_DATABASE_URL (test.sh sets it; default the local
# database). PY_COUNTS, when set, names a file that gets the counts of the tests. PYTHON picks
# the interpreter. AGENTMEM_CACHE_DIR is where pyright and the venv go (default
# ~/.cache/agentmem).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

log() { printf 'test-python: %s\n' "$*" >&2; }
die() { printf 'test-python: error: %s\n' "$*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || die "go is missing; install Go (see go.mod for the version)"

export AGENTMEM_TEST_DATABASE_URL=${AGENTMEM_TEST_DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
CLIENT=$ROOT/clients/python
CACHE=${AGENTMEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentmem}
PYRIGHT_VERSION=1.1.414

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
		return 1
	fi
}
# apt_install PACKAGE...: Debian's packages, with an apt-get update when the lists are stale.
apt_install() {
	command -v apt-get >/dev/null 2>&1 || return 1
	(as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1) || {
		as_root apt-get update -qq >/dev/null 2>&1 &&
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
	}
}
has() { "$1" -c "import $2" >/dev/null 2>&1; }
new_enough() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' >/dev/null 2>&1; }

# 1. An interpreter with PyYAML, and httpx when it can be had.
PY=${PYTHON:-}
if [ -z "$PY" ]; then
	for c in python3 /usr/bin/python3; do
		if command -v "$c" >/dev/null 2>&1 && new_enough "$c" && has "$c" yaml; then PY=$(command -v "$c"); break; fi
	done
fi
if [ -z "$PY" ]; then
	log "installing Python and PyYAML (apt-get install python3 python3-yaml)"
	apt_install python3 python3-yaml || die "could not install python3-yaml; install PyYAML for a Python 3.9+"
	PY=/usr/bin/python3
fi
new_enough "$PY" || die "Python 3.9 or newer is needed (found $("$PY" --version 2>&1))"
has "$PY" yaml || die "$PY has no PyYAML (apt-get install python3-yaml, or pip install pyyaml)"

if ! has "$PY" httpx; then
	venv=$CACHE/venv-$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	if [ "$PY" != /usr/bin/python3 ] && [ -x /usr/bin/python3 ] && new_enough /usr/bin/python3 &&
		has /usr/bin/python3 httpx && has /usr/bin/python3 yaml; then
		PY=/usr/bin/python3
	elif [ -x "$venv/bin/python" ] && has "$venv/bin/python" httpx; then
		PY=$venv/bin/python
	elif "$PY" -m venv --system-site-packages "$venv" >/dev/null 2>&1 &&
		timeout 120 "$venv/bin/python" -m pip install -q --disable-pip-version-check --retries 0 --timeout 15 httpx >/dev/null 2>&1; then
		log "httpx installed with pip in $venv"
		PY=$venv/bin/python
	else
		rm -rf "$venv"
		if [ -x /usr/bin/python3 ] && new_enough /usr/bin/python3 && apt_install python3-httpx python3-yaml &&
			has /usr/bin/python3 httpx && has /usr/bin/python3 yaml; then
			log "httpx from Debian's python3-httpx, with /usr/bin/python3"
			PY=/usr/bin/python3
		else
			log "httpx cannot be installed here: the asyncio client's tests are skipped"
		fi
	fi
fi
log "$("$PY" --version 2>&1) at $PY"

# 2. pyright, pinned, from npm.
pyright=$CACHE/pyright-$PYRIGHT_VERSION/node_modules/.bin/pyright
if [ ! -x "$pyright" ] && command -v npm >/dev/null 2>&1; then
	log "installing pyright $PYRIGHT_VERSION (npm) in $CACHE"
	mkdir -p "$CACHE/pyright-$PYRIGHT_VERSION"
	(cd "$CACHE/pyright-$PYRIGHT_VERSION" && timeout 300 npm install --no-audit --no-fund --loglevel=error \
		"pyright@$PYRIGHT_VERSION" >/dev/null 2>&1) || rm -rf "$CACHE/pyright-$PYRIGHT_VERSION"
fi

# 3. A database and a server of their own.
work=$(mktemp -d)
db=agentmem_jstest_py$$
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

port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
export SUPABASE_JWT_SECRET=${SUPABASE_JWT_SECRET:-super-secret-jwt-token-with-at-least-32-characters-long}
ADDR=127.0.0.1:$port DATABASE_URL=$db_url LOG_LEVEL=warn RATE_LIMIT_BACKFILL_PER_HOUR=2 \
	"$work/agentmem" serve >"$work/server.log" 2>&1 &
server_pid=$!
export AGENTMEM_URL=http://127.0.0.1:$port
healthy() { "$PY" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$AGENTMEM_URL/healthz" >/dev/null 2>&1; }
for _ in $(seq 1 150); do
	healthy && break
	kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; die "the server stopped"; }
	sleep 0.2
done
healthy || { cat "$work/server.log" >&2; die "the server did not come up"; }
log "server at $AGENTMEM_URL on database $db"

# 4. The type check and the tests.
failed=0
if [ -x "$pyright" ]; then
	log "pyright $PYRIGHT_VERSION (strict, Python 3.9) on clients/python/agentmem"
	(cd "$CLIENT" && "$pyright" --pythonpath "$PY" >"$work/pyright.log" 2>&1) || { cat "$work/pyright.log" >&2; failed=1; }
	tail -n 1 "$work/pyright.log" >&2
else
	log "pyright could not be installed (npm): the type check is skipped"
fi
log "python -m unittest (clients/python/tests) against $AGENTMEM_URL"
(cd "$CLIENT" && "$PY" tests/run.py) || failed=1

if [ "$failed" != 0 ] && [ -s "$work/server.log" ]; then
	log "server log:"
	tail -n 50 "$work/server.log" >&2
fi
exit "$failed"
