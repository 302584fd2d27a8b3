#!/usr/bin/env bash
# dev.sh is `make dev`: the local database (localdb.sh), the migrations (migrate.sh), then every
# function served at http://$ADDR/v1/<name> (default 127.0.0.1:9000) by `agentmem serve`, which reads
# DATABASE_URL, SUPABASE_JWT_SECRET and the rest from the environment, with local defaults. Its
# banner (scripts/dev-banner.sh) names the address it serves.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "dev: error: go is missing; install Go (see go.mod)" >&2; exit 1; }

scripts/localdb.sh
export DATABASE_URL=${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
scripts/migrate.sh

# ADAPTERS naming redis without a REDIS_URL: the local Redis of scripts/redis.sh.
case ",${ADAPTERS:-}," in
*,redis,* | *", redis,"* | *",redis ,"*)
	if [ -z "${REDIS_URL:-}" ]; then
		scripts/redis.sh
		export REDIS_URL="redis://127.0.0.1:${AGENTMEM_REDIS_PORT:-6380}"
	fi
	;;
esac

ADDR=${ADDR:-127.0.0.1:9000}
scripts/dev-banner.sh "$ADDR" >&2
export ADDR
# The demo page's "Sign in with a local token" (POST /demo/token): only ever on a loopback ADDR
# with the local default secret; DEMO_TOKENS=false turns it off.
export DEMO_TOKENS=${DEMO_TOKENS:-true}
exec go run ./cmd/agentmem serve
