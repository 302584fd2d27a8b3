# lib.sh holds what several scripts in scripts/ share. Source it after defining log and die
# (each script prefixes its messages with its own name); it runs nothing itself.
#
# The root filesystem helpers use ROOTFS, the directory localdb.sh provisions.

# port_open PORT reports whether something accepts connections on 127.0.0.1:PORT.
port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# wait_port PORT waits up to 10 s for something to accept connections on 127.0.0.1:PORT.
wait_port() {
	for _ in $(seq 1 100); do
		port_open "$1" && return 0
		sleep 0.1
	done
	return 1
}

# is_local_url URL reports whether a database URL points at this machine.
is_local_url() {
	case "$1" in
	*@127.0.0.1[:/]* | *@localhost[:/]* | *//127.0.0.1[:/]* | *//localhost[:/]*) return 0 ;;
	*) return 1 ;;
	esac
}

# node_major prints the major version of the node on PATH, or nothing when there is none.
node_major() {
	local v
	v=$(node --version 2>/dev/null) || return 0
	v=${v#v}
	printf '%s\n' "${v%%.*}"
}

# ensure_supabase_cli installs Node.js and the CLI pinned in package.json when they are missing
# or stale; run it from the repository's root. The CLI needs Node.js 18 or newer: Debian 12
# (bookworm) and newer ship one; an older node is refused with what to install instead.
ensure_supabase_cli() {
	if ! command -v npm >/dev/null 2>&1 || [ -z "$(node_major)" ]; then
		command -v apt-get >/dev/null 2>&1 || die "Node.js and npm are missing; install Node.js 18 or newer with npm"
		log "installing Node.js and npm"
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null 2>&1) || {
			apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
		} || die "could not install nodejs and npm"
	fi
	local major
	major=$(node_major)
	case $major in
	'' | *[!0-9]*) major=0 ;;
	esac
	if [ "$major" -lt 18 ]; then
		die "the Supabase CLI needs Node.js 18 or newer; this machine has $(node --version 2>/dev/null || echo none).
Install a newer one: on Debian 12 (bookworm) or newer, 'apt-get install nodejs npm'; elsewhere
Node.js 18+ from https://nodejs.org/ (or your distribution's backports), then run this again."
	fi
	if [ ! -x node_modules/.bin/supabase ] || [ ! -f node_modules/.package-lock.json ] ||
		[ package-lock.json -nt node_modules/.package-lock.json ]; then
		log "installing the Supabase CLI (npm ci)"
		npm ci --no-audit --no-fund --loglevel=error >/dev/null || die "npm ci failed"
	fi
}

# in_chroot runs a command inside ROOTFS with a clean environment.
in_chroot() {
	chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

# as_postgres runs a shell command inside ROOTFS as the postgres user.
as_postgres() { in_chroot su postgres -s /bin/sh -c "$1"; }

# mount_rootfs mounts /proc and the host's /dev into ROOTFS, which PostgreSQL and PgBouncer need.
mount_rootfs() {
	mountpoint -q "$ROOTFS/proc" || mount -t proc proc "$ROOTFS/proc"
	mountpoint -q "$ROOTFS/dev" || mount --bind /dev "$ROOTFS/dev"
}

# mounts_under DIR lists the mount points at or under DIR, deepest first.
mounts_under() {
	local dir
	dir=$(realpath -m "$1")
	awk -v d="$dir" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# remove_tree DIR deletes a root filesystem: it unmounts everything mounted inside it first (the
# host's /dev is bind-mounted there: deleting through it would delete the host's device nodes),
# fails when anything stays mounted, and never crosses into another file system.
remove_tree() {
	local dir=$1 m
	[ -e "$dir" ] || return 0
	for m in $(mounts_under "$dir"); do
		umount "$m" 2>/dev/null || umount -l "$m" || die "cannot unmount $m; remove $dir by hand"
	done
	[ -z "$(mounts_under "$dir")" ] || die "file systems are still mounted under $dir; remove it by hand"
	rm -rf --one-file-system "$dir"
}
