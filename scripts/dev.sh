#!/usr/bin/env bash
# dev.sh is `make dev`: the local database (localdb.sh), the migrations (migrate.sh), then every
# function served at http://$ADDR/v1/<name> (default 127.0.0.1:9000) by `agentmem serve`, which reads
# DATABASE_URL, SUPABASE_JWT_SECRET and the rest from the environment, with local defaults.
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

# The address agentmem serve will listen on (ADDR, default 127.0.0.1:9000); a host left out or
# 0.0.0.0 is reached as 127.0.0.1 from this machine.
ADDR=${ADDR:-127.0.0.1:9000}
host=${ADDR%:*}
case $host in '' | 0.0.0.0 | '[::]') host=127.0.0.1 ;; esac
URL="http://$host:${ADDR##*:}"

cat >&2 <<EOM

dev: serving every function on $URL/v1/<name> (Ctrl-C stops it)
dev: in another terminal, get a token (valid 1 hour; make -s token TTL=24h for longer) and call a function:

  TOKEN=\$(make -s token)
  curl -s $URL/v1/active-session \\
    -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
    -d '{"agent": "demo"}'

dev: or open the demo chat page: http://127.0.0.1:9000/demo/

EOM
export ADDR
# The demo page's "Sign in with a local token" (POST /demo/token): only ever on a loopback ADDR
# with the local default secret; DEMO_TOKENS=false turns it off.
export DEMO_TOKENS=${DEMO_TOKENS:-true}
exec go run ./cmd/agentmem serve
