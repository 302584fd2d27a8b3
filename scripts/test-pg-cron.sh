#!/usr/bin/env bash
# test-pg-cron.sh proves `agentmem schedule` against a real pg_cron: it starts a private
# PostgreSQL 17 with pg_cron preloaded, from the root filesystem localdb.sh provisions, on its own
# port (AGENTMEM_CRON_DB_PORT, default 54329) and data folder, runs TestScheduleWithPgCron in it
# (AGENTMEM_TEST_CRON_DATABASE_URL), then stops it and deletes its data.
#
# pg_cron runs jobs only in the one database cron.database_name names, and enabling it needs a
# server restart: a private server keeps both away from the shared one on 54322, whose
# databases the other tests create and drop. Needs root (chroot) and the root filesystem
# (scripts/localdb.sh makes it, with postgresql-17-cron).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

PORT=${AGENTMEM_CRON_DB_PORT:-54329}
ROOTFS=${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}
DATA_IN=/var/lib/agentmem/cron-test-$$
PGBIN=/usr/lib/postgresql/17/bin

log() { printf 'test-pg-cron: %s\n' "$*" >&2; }
die() { printf 'test-pg-cron: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
[ "$(id -u)" = 0 ] || die "needs root (the server runs from a chroot)"
[ -x "$ROOTFS$PGBIN/postgres" ] || die "no PostgreSQL in $ROOTFS; run scripts/localdb.sh first"
[ -f "$ROOTFS/usr/share/postgresql/17/extension/pg_cron.control" ] ||
	die "no pg_cron in $ROOTFS; scripts/localdb.sh installs it (postgresql-17-cron)"
port_open "$PORT" && die "127.0.0.1:$PORT is busy; set AGENTMEM_CRON_DB_PORT"
mount_rootfs

stop() {
	in_chroot su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $DATA_IN -m fast -w stop" >/dev/null 2>&1 || true
	rm -rf "${ROOTFS:?}$DATA_IN"
}
trap stop EXIT

mkdir -p "$ROOTFS$DATA_IN"
in_chroot chown postgres:postgres "$DATA_IN"
printf 'postgres\n' >"$ROOTFS$DATA_IN.pw"
in_chroot chown postgres "$DATA_IN.pw"
in_chroot su postgres -s /bin/sh -c "$PGBIN/initdb -D $DATA_IN -U postgres --pwfile=$DATA_IN.pw -A scram-sha-256 -E UTF8 --locale=C.UTF-8" >/dev/null
rm -f "$ROOTFS$DATA_IN.pw"
cat >>"$ROOTFS$DATA_IN/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${PORT}
unix_socket_directories = '/tmp'
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
EOF
in_chroot su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $DATA_IN -l $DATA_IN/server.log -w -t 60 start" >/dev/null ||
	die "the private server did not start; see $ROOTFS$DATA_IN/server.log"
log "private PostgreSQL 17 with pg_cron on 127.0.0.1:$PORT"

AGENTMEM_TEST_CRON_DATABASE_URL="postgresql://postgres:postgres@127.0.0.1:${PORT}/postgres" \
	go test -count=1 -run 'TestScheduleWithPgCron' -v ./cmd/agentmem/ "$@"
