#!/usr/bin/env bash
# dev-banner.sh ADDR prints what `make dev` says once it serves on ADDR (host:port): where the
# functions and the demo page are, and a first call to try. A host left out or 0.0.0.0 is
# reached as 127.0.0.1 from this machine. scripts/test-js.sh runs the call it prints.
set -euo pipefail

ADDR=${1:?usage: dev-banner.sh host:port}
host=${ADDR%:*}
case $host in '' | 0.0.0.0 | '[::]') host=127.0.0.1 ;; esac
URL="http://$host:${ADDR##*:}"

cat <<EOM

dev: serving every function on $URL/v1/<name> (Ctrl-C stops it)
dev: in another terminal, get a token (valid 1 hour; make -s token TTL=24h for longer) and call a function:

  TOKEN=\$(make -s token)
  curl -sS --fail-with-body $URL/v1/active-session \\
    -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
    -d '{"agent": "demo"}'

dev: or open the demo chat page: $URL/demo/
dev: the README's "Try it" on this address: export ADDR=$host:${ADDR##*:}

EOM
