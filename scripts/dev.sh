#!/usr/bin/env bash
# dev.sh is `make dev`: the local database (localdb.sh), the migrations (migrate.sh), then every
# function served at http://127.0.0.1:9000/v1/<name> by `agentmem serve`, which reads
# DATABASE_URL, SUPABASE_JWT_SECRET and the rest from the environment, with local defaults.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
command -v go >/dev/null 2>&1 || { echo "dev: error: go is missing; install Go (see go.mod)" >&2; exit 1; }

scripts/localdb.sh
export DATABASE_URL=${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:${AGENTMEM_DB_PORT:-54322}/postgres}
scripts/migrate.sh

cat >&2 <<'EOM'

dev: serving every function on http://127.0.0.1:9000/v1/<name> (Ctrl-C stops it)
dev: in another terminal, get a token and call a function:

  TOKEN=$(make -s token)
  curl -s http://127.0.0.1:9000/v1/active-session \
    -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '{"agent": "demo"}'

dev: or open the demo chat page: http://127.0.0.1:9000/demo/

EOM
exec go run ./cmd/agentmem serve
