#!/usr/bin/env bash
# localdb.sh makes sure a PostgreSQL 17 with pgvector >= 0.8 answers on DATABASE_URL.
#
# Order of preference:
#   1. DATABASE_URL is set: use it as it is (nothing is installed or started).
#   2. A server already listens on 127.0.0.1:54322 (for example `supabase start`): use it.
#   3. Provision the project's own server: a Debian trixie root filesystem made with
#      debootstrap (it ships postgresql-17-pgvector and postgresql-17-cron; bookworm does not),
#      started from a chroot on 127.0.0.1:54322 with the same credentials `supabase start` uses,
#      and pg_cron preloaded as on Supabase (`agentmem schedule` installs the sweep's job).
#   4. Otherwise say what is missing and fail.
#
# It is quick when the database is already there, and safe to run again.
#
# `localdb.sh stop` stops the project's own server (and the pooler started by pgbouncer.sh)
# and leaves the data in place; the next run starts it again in a second.
#
# AGENTMEM_PG_ROOTFS and AGENTMEM_DB_PORT move the root filesystem and the port, to try a clean
# provision beside a running server.
set -euo pipefail

PORT=${AGENTMEM_DB_PORT:-54322}
ROOTFS=${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}
PGDATA_IN=/var/lib/agentmem/data
PGBIN=/usr/lib/postgresql/17/bin
DEFAULT_URL="postgresql://postgres:postgres@127.0.0.1:${PORT}/postgres"

log() { printf 'localdb: %s\n' "$*" >&2; }
die() { printf 'localdb: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

if [ "${1:-}" = stop ]; then
	if [ ! -f "$ROOTFS$PGDATA_IN/PG_VERSION" ]; then
		log "no local server in $ROOTFS; nothing to stop"
		exit 0
	fi
	[ "$(id -u)" = 0 ] || die "stopping the local server needs root"
	mount_rootfs
	if [ -f "$ROOTFS/var/lib/agentmem/pgbouncer/pgbouncer.pid" ]; then
		pid=$(cat "$ROOTFS/var/lib/agentmem/pgbouncer/pgbouncer.pid")
		if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pgbouncer ] && kill "$pid"; then
			log "stopped the pooler (pid $pid)"
		fi
		rm -f "$ROOTFS/var/lib/agentmem/pgbouncer/pgbouncer.pid"
	fi
	if [ -f "$ROOTFS$PGDATA_IN/postmaster.pid" ]; then
		in_chroot su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $PGDATA_IN -m fast -w stop" >/dev/null &&
			log "stopped PostgreSQL on 127.0.0.1:${PORT}"
	else
		log "PostgreSQL is not running"
	fi
	exit 0
fi

if [ -n "${DATABASE_URL:-}" ]; then
	log "using DATABASE_URL from the environment"
	exit 0
fi

if port_open "$PORT"; then
	log "a server already listens on 127.0.0.1:${PORT}; using it"
	exit 0
fi

[ "$(id -u)" = 0 ] || die "nothing listens on 127.0.0.1:${PORT} and provisioning a local PostgreSQL 17 needs root.
Start one yourself (for example 'supabase start'), or set DATABASE_URL to a PostgreSQL 17 with pgvector >= 0.8."

if [ ! -x "$ROOTFS$PGBIN/postgres" ] || [ ! -f "$ROOTFS/usr/share/postgresql/17/extension/vector.control" ]; then
	if ! command -v debootstrap >/dev/null 2>&1; then
		command -v apt-get >/dev/null 2>&1 || die "debootstrap is missing and there is no apt-get to install it.
Set DATABASE_URL to a PostgreSQL 17 with pgvector >= 0.8 instead."
		log "installing debootstrap"
		(apt-get install -y -qq debootstrap >/dev/null 2>&1) || {
			apt-get update -qq >/dev/null && apt-get install -y -qq debootstrap >/dev/null
		} || die "could not install debootstrap"
	fi
	log "provisioning PostgreSQL 17 + pgvector in $ROOTFS (about a minute, once)"
	# A debootstrap killed half-way may leave /proc or device nodes mounted in its tree.
	remove_tree "$ROOTFS.partial"
	mkdir -p "$(dirname "$ROOTFS")"
	# C.UTF-8, the only locale the cluster uses, comes with libc-bin: no locales package needed.
	debootstrap --variant=minbase --include=postgresql-17-pgvector,postgresql-17-cron,pgbouncer trixie "$ROOTFS.partial" \
		>"$(dirname "$ROOTFS")/debootstrap.log" 2>&1 ||
		die "debootstrap failed; see $(dirname "$ROOTFS")/debootstrap.log"
	rm -rf "$ROOTFS.partial"/var/cache/apt/archives/*.deb
	if [ -e "$ROOTFS" ]; then
		# An earlier tree without PostgreSQL 17 or pgvector: mv would put the new one inside it.
		log "replacing the incomplete $ROOTFS"
		remove_tree "$ROOTFS"
	fi
	mv "$ROOTFS.partial" "$ROOTFS"
fi

mount_rootfs

# A root filesystem made before pg_cron was part of it gets it now (a minute at most, once).
if [ ! -f "$ROOTFS/usr/share/postgresql/17/extension/pg_cron.control" ]; then
	log "adding pg_cron (postgresql-17-cron) to $ROOTFS"
	cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true
	{ in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-17-cron >/dev/null 2>&1 ||
		{ in_chroot apt-get update -qq >/dev/null 2>&1 &&
			in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-17-cron >/dev/null 2>&1; }; } ||
		log "could not install postgresql-17-cron; the server starts without pg_cron"
fi

if [ ! -f "$ROOTFS$PGDATA_IN/PG_VERSION" ]; then
	log "initialising the database cluster"
	mkdir -p "$ROOTFS$PGDATA_IN"
	in_chroot chown postgres:postgres "$PGDATA_IN"
	printf 'postgres\n' >"$ROOTFS/tmp/pwfile"
	in_chroot chown postgres "/tmp/pwfile"
	in_chroot su postgres -s /bin/sh -c "$PGBIN/initdb -D $PGDATA_IN -U postgres --pwfile=/tmp/pwfile -A scram-sha-256 -E UTF8 --locale=C.UTF-8" >/dev/null
	rm -f "$ROOTFS/tmp/pwfile"
	cat >>"$ROOTFS$PGDATA_IN/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${PORT}
unix_socket_directories = '/tmp'
max_connections = 200
shared_buffers = 512MB
work_mem = 16MB
maintenance_work_mem = 512MB
fsync = on
synchronous_commit = on
max_wal_size = 4GB
checkpoint_timeout = 15min
log_min_messages = warning
EOF
fi

# pg_cron, as on Supabase: preloaded, its jobs kept in the postgres database and run by
# background workers (no password needed). Added to an older cluster too; it applies from this
# start on.
if [ -f "$ROOTFS/usr/share/postgresql/17/extension/pg_cron.control" ] &&
	! grep -q '^shared_preload_libraries' "$ROOTFS$PGDATA_IN/postgresql.conf"; then
	cat >>"$ROOTFS$PGDATA_IN/postgresql.conf" <<EOF
shared_preload_libraries = 'pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
EOF
fi

# A server killed with its session leaves postmaster.pid behind; should its pid now belong to
# another process, PostgreSQL would refuse to start. Nothing listens, so a lock whose pid is not a
# live postgres is stale.
for lock in "$ROOTFS$PGDATA_IN/postmaster.pid" "$ROOTFS/tmp/.s.PGSQL.${PORT}.lock"; do
	[ -f "$lock" ] || continue
	pid=$(head -n 1 "$lock" | tr -dc 0-9)
	if [ -z "$pid" ] || [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != postgres ]; then
		rm -f "$lock"
	fi
done

log "starting PostgreSQL 17 on 127.0.0.1:${PORT}"
# The port lies in Linux's ephemeral range: on a busy machine an outgoing connection may hold it
# for a moment, so a failed bind is retried.
for attempt in $(seq 1 10); do
	in_chroot su postgres -s /bin/sh -c "$PGBIN/pg_ctl -D $PGDATA_IN -l $PGDATA_IN/server.log -w -t 60 start" >/dev/null && break
	if [ "$attempt" = 10 ] || ! tail -n 20 "$ROOTFS$PGDATA_IN/server.log" | grep -q 'Address already in use'; then
		die "PostgreSQL did not start; see $ROOTFS$PGDATA_IN/server.log"
	fi
	log "127.0.0.1:${PORT} is busy; trying again"
	sleep 3
done

for _ in $(seq 1 50); do
	port_open "$PORT" && break
	sleep 0.1
done
port_open "$PORT" || die "PostgreSQL started but does not answer on 127.0.0.1:${PORT}"
log "ready: $DEFAULT_URL"
