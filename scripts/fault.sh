#!/usr/bin/env bash
# fault.sh is `make fault`: the fault-injection test. It starts a PRIVATE PostgreSQL 17 and
# PgBouncer (transaction mode) on their own ports with their own data directory, runs
# TestFaultRestarts (shared/httpapi/fault_test.go) against them, and removes them afterwards,
# also when the test fails or is interrupted. The shared servers (54322, 6543) are not touched.
#
# The test drives the faults itself through this script's subcommands:
#
#   fault.sh                      start, run the test, stop and remove (what make fault runs)
#   fault.sh pg-restart fast      pg_ctl restart -m fast (sessions ended with 57P01)
#   fault.sh pg-restart immediate pg_ctl restart -m immediate (a crash: recovery from the WAL)
#   fault.sh pooler-kill          kill -9 of PgBouncer
#   fault.sh pooler-start         start PgBouncer again
#   fault.sh up | down            start or stop and remove the private servers by hand
#
# PostgreSQL runs from the Debian trixie root filesystem that localdb.sh provisions (provisioned
# here too when it is missing), with its data under /var/lib/agentmem/fault-<port>/ inside it.
# AGENTMEM_FAULT_DB_PORT (default 54399) and AGENTMEM_FAULT_POOLER_PORT (default 6599) move the
# ports; arguments after `--` go to go test (e.g. fault.sh -- -race).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DB_PORT=${AGENTMEM_FAULT_DB_PORT:-54399}
POOL_PORT=${AGENTMEM_FAULT_POOLER_PORT:-6599}
ROOTFS=${AGENTMEM_PG_ROOTFS:-/var/lib/agentmem/pg17-trixie}
PGBIN=/usr/lib/postgresql/17/bin
# Paths seen from inside the root filesystem.
DIR_IN=/var/lib/agentmem/fault-${DB_PORT}
DATA_IN=$DIR_IN/data
BOUNCER_IN=$DIR_IN/pgbouncer
# The whole run, the test included, ends within this many seconds.
BUDGET=${AGENTMEM_FAULT_BUDGET:-240}

log() { printf 'fault: %s\n' "$*" >&2; }
die() { printf 'fault: error: %s\n' "$*" >&2; exit 1; }

# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"

pg_ctl_cmd() { printf '%s/pg_ctl -D %s -l %s/server.log -w -t 60 %s' "$PGBIN" "$DATA_IN" "$DATA_IN" "$1"; }

# pooler_pid prints the pid of the private PgBouncer, or nothing.
pooler_pid() {
	local pid
	pid=$(cat "$ROOTFS$BOUNCER_IN/pgbouncer.pid" 2>/dev/null) || return 0
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pgbouncer ]; then
		printf '%s\n' "$pid"
	fi
}

pooler_start() {
	[ -z "$(pooler_pid)" ] || return 0
	rm -f "$ROOTFS$BOUNCER_IN/pgbouncer.pid"
	# A pooler killed with -9 leaves its port in TIME_WAIT at worst; PgBouncer sets SO_REUSEADDR.
	as_postgres "pgbouncer -d -q $BOUNCER_IN/pgbouncer.ini" || die "PgBouncer did not start; see $ROOTFS$BOUNCER_IN/pgbouncer.log"
	wait_port "$POOL_PORT" || die "PgBouncer does not answer on 127.0.0.1:${POOL_PORT}"
}

pooler_kill() {
	local pid
	pid=$(pooler_pid)
	[ -n "$pid" ] || die "no private PgBouncer runs"
	kill -9 "$pid"
	for _ in $(seq 1 50); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	rm -f "$ROOTFS$BOUNCER_IN/pgbouncer.pid"
}

up() {
	[ "$(id -u)" = 0 ] || die "the private servers run from a chroot: this needs root"
	if [ ! -x "$ROOTFS$PGBIN/postgres" ] || [ ! -x "$ROOTFS/usr/sbin/pgbouncer" ]; then
		# The root filesystem comes from the local stack's own scripts, as make test makes it.
		log "no PostgreSQL 17 and PgBouncer in $ROOTFS yet: provisioning the local stack first"
		"$ROOT/scripts/localdb.sh"
		"$ROOT/scripts/pgbouncer.sh"
		[ -x "$ROOTFS$PGBIN/postgres" ] && [ -x "$ROOTFS/usr/sbin/pgbouncer" ] ||
			die "no root filesystem in $ROOTFS (another server on 127.0.0.1:54322?); set AGENTMEM_PG_ROOTFS"
	fi
	port_open "$DB_PORT" && die "127.0.0.1:${DB_PORT} is taken; set AGENTMEM_FAULT_DB_PORT"
	port_open "$POOL_PORT" && die "127.0.0.1:${POOL_PORT} is taken; set AGENTMEM_FAULT_POOLER_PORT"
	mount_rootfs

	# A fresh cluster every run: nothing is left from an earlier run, passed or failed.
	rm -rf --one-file-system "${ROOTFS:?}$DIR_IN"
	mkdir -p "$ROOTFS$DATA_IN" "$ROOTFS$BOUNCER_IN"
	in_chroot chown -R postgres:postgres "$DIR_IN"
	printf 'postgres\n' >"$ROOTFS$DIR_IN/pwfile"
	in_chroot chown postgres "$DIR_IN/pwfile"
	log "initialising a private cluster in $ROOTFS$DATA_IN"
	as_postgres "$PGBIN/initdb -D $DATA_IN -U postgres --pwfile=$DIR_IN/pwfile -A scram-sha-256 -E UTF8 --locale=C.UTF-8" >/dev/null
	rm -f "$ROOTFS$DIR_IN/pwfile"
	# fsync and synchronous_commit stay on: an acknowledged turn must survive the crash restart.
	cat >>"$ROOTFS$DATA_IN/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = ${DB_PORT}
unix_socket_directories = '${DIR_IN}'
max_connections = 60
shared_buffers = 32MB
fsync = on
synchronous_commit = on
log_min_messages = warning
EOF
	log "starting PostgreSQL 17 on 127.0.0.1:${DB_PORT}"
	as_postgres "$(pg_ctl_cmd start)" >/dev/null || die "PostgreSQL did not start; see $ROOTFS$DATA_IN/server.log"
	wait_port "$DB_PORT" || die "PostgreSQL does not answer on 127.0.0.1:${DB_PORT}"

	cat >"$ROOTFS$BOUNCER_IN/pgbouncer.ini" <<EOF
; Written by scripts/fault.sh for the fault-injection test.
[databases]
* = host=127.0.0.1 port=${DB_PORT}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${POOL_PORT}
unix_socket_dir =
pool_mode = transaction
auth_type = scram-sha-256
auth_file = ${BOUNCER_IN}/userlist.txt
max_client_conn = 100
default_pool_size = 10
max_prepared_statements = 0
server_login_retry = 1
query_wait_timeout = 10
ignore_startup_parameters = extra_float_digits,search_path
log_connections = 0
log_disconnections = 0
logfile = ${BOUNCER_IN}/pgbouncer.log
pidfile = ${BOUNCER_IN}/pgbouncer.pid
EOF
	printf '"postgres" "postgres"\n' >"$ROOTFS$BOUNCER_IN/userlist.txt"
	chmod 600 "$ROOTFS$BOUNCER_IN/userlist.txt"
	in_chroot chown -R postgres:postgres "$BOUNCER_IN"
	log "starting PgBouncer (transaction mode) on 127.0.0.1:${POOL_PORT}"
	pooler_start
}

down() {
	[ -d "$ROOTFS$DIR_IN" ] || return 0
	local pid
	pid=$(pooler_pid)
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
	if [ -f "$ROOTFS$DATA_IN/postmaster.pid" ]; then
		mount_rootfs
		as_postgres "$PGBIN/pg_ctl -D $DATA_IN -m immediate -w -t 30 stop" >/dev/null 2>&1 || true
	fi
	rm -rf --one-file-system "${ROOTFS:?}$DIR_IN"
	log "stopped and removed the private servers"
}

cmd=${1:-run}
case $cmd in -*) cmd=run && set -- run "$@" ;; esac
case $cmd in
pg-restart)
	mode=${2:-fast}
	case $mode in fast | immediate) ;; *) die "pg-restart fast|immediate" ;; esac
	as_postgres "$(pg_ctl_cmd "-m $mode restart")" >/dev/null || die "PostgreSQL did not restart; see $ROOTFS$DATA_IN/server.log"
	;;
pooler-kill) pooler_kill ;;
pooler-start) pooler_start ;;
up) up ;;
down) down ;;
run)
	shift || true
	[ "${1:-}" != -- ] || shift
	command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
	command -v go >/dev/null 2>&1 || die "go is missing; install Go (see go.mod for the version)"
	command -v flock >/dev/null 2>&1 || die "flock is missing (util-linux)"
	mkdir -p /var/lib/agentmem
	exec 9>"/var/lib/agentmem/fault-${DB_PORT}.lock"
	flock -n 9 || die "another fault run uses port ${DB_PORT}"
	started=$(date +%s)
	trap down EXIT
	trap 'exit 130' INT TERM
	up
	cd "$ROOT"
	log "go test -run TestFaultRestarts ./shared/httpapi/"
	set +e
	AGENTMEM_FAULT_CTL="$ROOT/scripts/fault.sh" \
		AGENTMEM_FAULT_DATABASE_URL="postgresql://postgres:postgres@127.0.0.1:${DB_PORT}/postgres" \
		AGENTMEM_FAULT_POOLER_URL="postgresql://postgres:postgres@127.0.0.1:${POOL_PORT}/postgres" \
		timeout -k 10 "$BUDGET" go test -count=1 -timeout "$((BUDGET - 20))s" -run '^TestFaultRestarts$' -v "$@" ./shared/httpapi/
	status=$?
	set -e
	if [ "$status" = 0 ]; then
		log "PASS in $(($(date +%s) - started))s"
	else
		log "FAIL (status $status) in $(($(date +%s) - started))s; PostgreSQL's log:"
		tail -n 30 "$ROOTFS$DATA_IN/server.log" >&2 || true
	fi
	exit "$status"
	;;
*) die "unknown command $1 (run, pg-restart fast|immediate, pooler-kill, pooler-start, up, down)" ;;
esac
