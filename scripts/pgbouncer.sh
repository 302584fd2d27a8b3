#!/usr/bin/env bash
# pgbouncer.sh makes sure a PgBouncer in transaction pool mode listens on 127.0.0.1:6543 (the
# port of Supabase's transaction pooler) in front of the local PostgreSQL on 127.0.0.1:54322.
#
# The tests run the function suite through it (AGENTMEM_TEST_POOLER_URL) to prove nothing relies
# on session state: like the hosted pooler, it keeps no named prepared statements
# (max_prepared_statements = 0) and hands each transaction whichever server connection is free.
#
# Any database name is passed through (`* = host=127.0.0.1 port=54322`), so the databases the
# tests create are reachable as postgresql://postgres:postgres@127.0.0.1:6543/<db>. PgBouncer
# closes idle server connections after a few seconds; a test that drops its database while some
# are still open should use `drop database ... with (force)`.
#
# PgBouncer refuses to run as root: it runs as `postgres` inside the Debian trixie root filesystem
# that localdb.sh made (PgBouncer 1.24), or, when the database comes from elsewhere (for example
# `supabase start`), from Debian's package on this machine as the `postgres` user.
#
# It is quick when the pooler already listens, and safe to run again. When DATABASE_URL points
# at another host there is nothing local to pool: it says the pooler suite is skipped.
set -euo pipefail

DB_PORT=${AGENTMEM_DB_PORT:-54322}
POOL_PORT=${AGENTMEM_POOLER_PORT:-6543}
ROOTFS=${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}
# Where the configuration, log and pid file live, seen from inside the root filesystem.
CONF_DIR_IN=/var/lib/agentmem/pgbouncer
HOST_CONF_DIR=/var/lib/agentmem/pgbouncer-host

log() { printf 'pgbouncer: %s\n' "$*" >&2; }
die() { printf 'pgbouncer: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

if [ -n "${DATABASE_URL:-}" ] && ! is_local_url "$DATABASE_URL"; then
	log "DATABASE_URL is not on this machine; no local pooler, the pooler suite is skipped"
	exit 0
fi

if port_open "$POOL_PORT"; then
	log "a pooler already listens on 127.0.0.1:${POOL_PORT}; using it"
	exit 0
fi

port_open "$DB_PORT" || die "nothing listens on 127.0.0.1:${DB_PORT}; run scripts/localdb.sh first"
[ "$(id -u)" = 0 ] || die "starting the pooler needs root (it runs as the postgres user)"

# write_config DIR PREPARED_LINE writes pgbouncer.ini and userlist.txt into DIR, as seen by the
# pgbouncer that will read them.
write_config() {
	local dir=$1 conf_dir=$2 prepared=$3
	mkdir -p "$dir"
	cat >"$dir/pgbouncer.ini" <<EOF
; Written by scripts/pgbouncer.sh; changes here are overwritten.
[databases]
* = host=127.0.0.1 port=${DB_PORT}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${POOL_PORT}
unix_socket_dir =
pool_mode = transaction
auth_type = scram-sha-256
auth_file = ${conf_dir}/userlist.txt
; Roles other than postgres are looked up in pg_shadow through postgres.
auth_user = postgres
max_client_conn = 400
default_pool_size = 40
max_db_connections = 40
reserve_pool_size = 0
server_idle_timeout = 5
autodb_idle_timeout = 30
server_lifetime = 600
server_login_retry = 1
query_wait_timeout = 60
${prepared}
ignore_startup_parameters = extra_float_digits,search_path
admin_users = postgres
stats_users = postgres
log_connections = 0
log_disconnections = 0
logfile = ${conf_dir}/pgbouncer.log
pidfile = ${conf_dir}/pgbouncer.pid
EOF
	printf '"postgres" "postgres"\n' >"$dir/userlist.txt"
	chmod 600 "$dir/userlist.txt"
}

if [ -x "$ROOTFS/usr/lib/postgresql/17/bin/postgres" ]; then
	mount_rootfs
	if [ ! -x "$ROOTFS/usr/sbin/pgbouncer" ]; then
		# A root filesystem made before the pooler was part of it.
		log "installing pgbouncer into $ROOTFS"
		cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
		{
			in_chroot apt-get update -qq &&
				in_chroot env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends pgbouncer
		} >"$ROOTFS/var/log/agentmem-pgbouncer-install.log" 2>&1 ||
			die "could not install pgbouncer; see $ROOTFS/var/log/agentmem-pgbouncer-install.log"
	fi
	write_config "$ROOTFS$CONF_DIR_IN" "$CONF_DIR_IN" "max_prepared_statements = 0"
	in_chroot chown -R postgres:postgres "$CONF_DIR_IN"
	rm -f "$ROOTFS$CONF_DIR_IN/pgbouncer.pid"
	log "starting PgBouncer (transaction mode) on 127.0.0.1:${POOL_PORT}"
	in_chroot su postgres -s /bin/sh -c "pgbouncer -d -q $CONF_DIR_IN/pgbouncer.ini" ||
		die "PgBouncer did not start; see $ROOTFS$CONF_DIR_IN/pgbouncer.log"
	wait_port "$POOL_PORT" || die "PgBouncer does not answer on 127.0.0.1:${POOL_PORT}; see $ROOTFS$CONF_DIR_IN/pgbouncer.log"
else
	if ! command -v pgbouncer >/dev/null 2>&1; then
		command -v apt-get >/dev/null 2>&1 || die "pgbouncer is missing and there is no apt-get to install it"
		log "installing pgbouncer"
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null 2>&1) || {
			apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
		} || die "could not install pgbouncer"
	fi
	id postgres >/dev/null 2>&1 || die "there is no postgres user to run pgbouncer as"
	# Debian 12's PgBouncer (1.18) predates protocol-level prepared statements: none are kept.
	prepared=""
	if pgbouncer --version | awk 'NR==1 { split($2, v, "."); exit !(v[1] > 1 || v[2] >= 21) }'; then
		prepared="max_prepared_statements = 0"
	fi
	write_config "$HOST_CONF_DIR" "$HOST_CONF_DIR" "$prepared"
	chown -R postgres:postgres "$HOST_CONF_DIR"
	rm -f "$HOST_CONF_DIR/pgbouncer.pid"
	log "starting PgBouncer (transaction mode) on 127.0.0.1:${POOL_PORT}"
	su postgres -s /bin/sh -c "pgbouncer -d -q $HOST_CONF_DIR/pgbouncer.ini" ||
		die "PgBouncer did not start; see $HOST_CONF_DIR/pgbouncer.log"
	wait_port "$POOL_PORT" || die "PgBouncer does not answer on 127.0.0.1:${POOL_PORT}; see $HOST_CONF_DIR/pgbouncer.log"
fi
log "ready: postgresql://postgres:postgres@127.0.0.1:${POOL_PORT}/postgres (transaction mode)"
