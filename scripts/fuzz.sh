#!/usr/bin/env bash
# fuzz.sh is `make fuzz`: every fuzz target of the module, one after the other, for FUZZTIME
# each (default 60s). FUZZTIME is go test's -fuzztime: a duration, or a count of inputs such as
# 200x, which CI runs. Prefer a count for short runs: a run whose time ends while Go still
# replays the seeds and the cached corpus ("gathering baseline coverage", slow on a busy
# machine for the targets that call the database) fails with "context deadline exceeded". `go test -fuzz` takes one target of one package per
# run, so the targets are listed with `go test -list '^Fuzz'` and run one by one. Arguments
# are package patterns (default ./...). A failing input is saved under the package's
# testdata/fuzz/<target>/, where `go test` replays it from then on.
#
# The targets that call the functions need PostgreSQL with pgvector (AGENTMEM_TEST_DATABASE_URL,
# default the local one on 127.0.0.1:54322, which `make db` starts). At the end it prints each
# target's executions, and exits non-zero if any target failed.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

FUZZTIME=${FUZZTIME:-60s}
export AGENTMEM_TEST_DATABASE_URL=${AGENTMEM_TEST_DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
[ $# -gt 0 ] || set -- ./...

started=$(date +%s)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cache=$(go env GOCACHE)/fuzz
failed=0
total=0
# Only packages whose tests declare a fuzz target are built.
for pkg in $(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "$@" | while read -r p d; do
	grep -qs '^func Fuzz' "$d"/*_test.go && echo "$p"
done); do
	# One instrumented test binary per package, run once per target from the package's
	# directory (for testdata/), with the corpus cache go test itself uses.
	bin=$work/pkg.test
	if ! go test -c -fuzz . -o "$bin" "$pkg" >"$work/build" 2>&1; then
		cat "$work/build" >&2
		failed=$((failed + 1))
		printf 'FAIL %s: does not build\n' "$pkg"
		continue
	fi
	dir=$(go list -f '{{.Dir}}' "$pkg")
	targets=$(cd "$dir" && "$bin" -test.list '^Fuzz' | grep '^Fuzz' || true)
	for target in $targets; do
		total=$((total + 1))
		t0=$(date +%s)
		if (cd "$dir" && "$bin" -test.run '^$' -test.fuzz "^${target}\$" -test.fuzztime "$FUZZTIME" \
			-test.fuzzcachedir "$cache/$pkg") >"$work/out" 2>&1; then
			status=ok
		else
			status=FAIL
			failed=$((failed + 1))
			cat "$work/out" >&2
		fi
		# The last progress line counts the executions of the whole run.
		execs=$(grep -o 'execs: [0-9]*' "$work/out" | tail -1 | grep -o '[0-9]*' || true)
		printf '%-4s %-24s %-28s %9s execs %4ss\n' "$status" "${pkg#github.com/agentmem/agentmem/}" "$target" "${execs:-?}" "$(($(date +%s) - t0))"
	done
done
printf 'fuzz: %d targets, %d failed, FUZZTIME=%s, %ss in all\n' "$total" "$failed" "$FUZZTIME" "$(($(date +%s) - started))"
[ "$failed" -eq 0 ]
