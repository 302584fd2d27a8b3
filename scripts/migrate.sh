#!/usr/bin/env bash
# migrate.sh applies supabase/migrations to DATABASE_URL (default: the local database) with the
# Supabase CLI pinned in package.json, exactly as on a Supabase project: the CLI records each
# migration in supabase_migrations.schema_migrations.
#
# A local database (127.0.0.1 or localhost) first gets the local Supabase bootstrap (roles anon,
# authenticated, service_role; schemas auth and extensions) through `agentmem bootstrap`, which
# adds only what is absent. A real Supabase project has these and never gets it, unless
# AGENTMEM_BOOTSTRAP=1 asks for it; AGENTMEM_BOOTSTRAP=0 skips it everywhere.
#
# Locally, migrations older than the newest applied one (branches merged out of order) are
# applied too (--include-all); against any other database the CLI refuses them, as it should.
#
# It never asks (--yes): running it is the confirmation. Quiet on success, the CLI's whole output
# on failure; quick when everything is applied.
#
# USER_PARTITIONS (default 1) above 1 then partitions every user-owned table by hash of its user
# into that many partitions (`agentmem partition`, see docs/deploy.md): once, in place, holding
# the tables' locks while it copies them; later runs convert only tables new migrations added,
# and refuse another number.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

export DATABASE_URL=${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
# The CLI would otherwise look for a newer release and send telemetry on every run.
export SUPABASE_NO_UPDATE_NOTIFIER=1 SUPABASE_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

log() { printf 'migrate: %s\n' "$*" >&2; }
die() { printf 'migrate: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

# pending lists the local migration versions that DATABASE_URL has not recorded, or "unknown"
# when it cannot tell (no psql, no history table yet).
pending() {
	local versions applied v out=""
	versions=$(find supabase/migrations -maxdepth 1 -name '*.sql' -printf '%f\n' 2>/dev/null | sed 's/_.*//' | sort)
	[ -n "$versions" ] || return 0
	command -v psql >/dev/null 2>&1 || { echo unknown; return 0; }
	applied=$(PGCONNECT_TIMEOUT=10 psql "$DATABASE_URL" -wXAtq -v ON_ERROR_STOP=1 \
		-c "select version from supabase_migrations.schema_migrations" 2>/dev/null) || { echo unknown; return 0; }
	for v in $versions; do
		grep -qx "$v" <<<"$applied" || out="$out $v"
	done
	echo "${out# }"
}

# partition runs `agentmem partition` when USER_PARTITIONS asks for more than one partition.
partition() {
	local n=${USER_PARTITIONS:-1}
	[[ "$n" =~ ^[0-9]+$ ]] || die "USER_PARTITIONS=$n: want a whole number from 1 to 256"
	[ "$n" -gt 1 ] || return 0
	go run ./cmd/agentmem partition --partitions "$n" >&2 || die "agentmem partition failed"
}

todo=$(pending)
if [ -z "$todo" ]; then
	log "up to date ($(find supabase/migrations -maxdepth 1 -name '*.sql' | wc -l) migrations)"
	partition
	exit 0
fi

local_target=false
is_local_url "$DATABASE_URL" && local_target=true

bootstrap=${AGENTMEM_BOOTSTRAP:-}
if [ -z "$bootstrap" ]; then
	bootstrap=0
	$local_target && bootstrap=1
fi
if [ "$bootstrap" = 1 ]; then
	out=$(go run ./cmd/agentmem bootstrap 2>&1) || {
		printf '%s\n' "$out" >&2
		die "agentmem bootstrap failed"
	}
fi

ensure_supabase_cli

args=(migration up --remote="$DATABASE_URL" --yes)
$local_target && args+=(--include-all)
out=$(node_modules/.bin/supabase "${args[@]}" 2>&1) || {
	printf '%s\n' "$out" >&2
	die "supabase migration up failed"
}
applied=$(grep -c '^Applying migration' <<<"$out" || true)
log "applied $applied migration(s)"
partition
