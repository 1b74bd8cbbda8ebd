# shellcheck shell=bash
# The versions of RabbitMQ the scripts run, and the Debian chroots of the two that are not this
# machine's own package: sourced by the two scripts whose nodes run there, scripts/rabbitmq.sh (the
# local broker rabbit@localhost) and scripts/rabbitmq-nodes.sh (the fault tests' rabbit-fN@localhost).
# They define log, die and sudo_if_needed; make_chroot also needs rabbitmq.sh's apt_install and
# is_version.
#
#   3.10  Debian 12's rabbitmq-server (3.10.8), this machine's package; this machine's epmd (4369)
#   4.0   Debian 13 (trixie)'s rabbitmq-server (4.0.5) in /var/lib/rabbitmq-trixie; epmd 4371
#   4.3   Debian sid's rabbitmq-server (4.3) in /var/lib/rabbitmq-sid; epmd 4370
#
# Each version is an Erlang world of its own: its nodes register with its own epmd and run as its
# own rabbitmq user (the chroot's has another uid than this machine's), with that user's Erlang
# cookie. So each can run its own rabbit@localhost (and rabbit-fN@localhost) at the same time as
# the others, on other ports.
#
# A chroot (RABBITMQ_CHROOT) is made once by make_chroot with debootstrap (RABBITMQ_CHROOT_SUITE,
# from RABBITMQ_DEBIAN_MIRROR, default the Debian archive this machine's apt sources name for its
# own release), and must hold the version's rabbitmq-server. It shares this machine's network and
# processes (a node's OS pid is the same inside and out). RABBITMQ_CHROOT, RABBITMQ_CHROOT_SUITE
# and RABBITMQ_CHROOT_EPMD_PORT change RABBITMQ_VERSION's chroot only; the other one keeps its
# defaults above.
#
# A node runs there only with /proc, /sys (read-only), /dev, /dev/pts and this machine's /tmp
# (where the fault nodes keep their files and tests write theirs, at the same paths) mounted in
# it. A script mounts them (mount_chroot) and starts its node while holding chroot_lock, until the
# node is registered with the chroot's epmd (await_chroot_node); after it stops a node,
# release_chroot stops the epmd and unmounts them, but only when no node of the chroot is
# registered any more. So neither script unmounts under the other's running node.

rabbitmq_versions=(3.10 4.0 4.3)

# The Erlang VM flags of every node, of every version (SERVER_ADDITIONAL_ERL_ARGS). Erlang
# distribution listens on loopback only. multi_time_warp: 3.10 runs on Erlang 25, whose default
# time warp mode (none) follows a step of the system clock by running its own clock up to 1% fast
# or slow until the two agree; quorum queues time their TTLs by that clock, so meanwhile they
# expire messages early. Erlang 26 and later (4.x here) warp at once by default.
node_erl_args="-kernel inet_dist_use_interface {127,0,0,1} +C multi_time_warp"

# check_version VERSION: fails unless the scripts know VERSION.
check_version() {
	case "$1" in
	3.10 | 4.0 | 4.3) ;;
	*) die "RABBITMQ_VERSION must be 3.10, 4.0 or 4.3, not '$1'" ;;
	esac
}

# in_a_chroot VERSION: whether VERSION runs in a chroot (all but this machine's 3.10).
in_a_chroot() { [ "$1" != 3.10 ]; }

# chroot_select VERSION: points the functions below at VERSION's chroot (chroot_version,
# chroot_dir, chroot_epmd_port, chroot_suite). To look at another version's for a moment, call it
# in a subshell: the chroot lock (chroot_lock_fd) belongs to one chroot.
chroot_select() {
	local dir port suite
	case "$1" in
	4.0) dir=/var/lib/rabbitmq-trixie port=4371 suite=trixie ;;
	4.3) dir=/var/lib/rabbitmq-sid port=4370 suite=sid ;;
	*) die "RabbitMQ $1 does not run in a chroot" ;;
	esac
	if [ "$1" = "${RABBITMQ_VERSION:-4.3}" ]; then
		dir=${RABBITMQ_CHROOT:-$dir}
		port=${RABBITMQ_CHROOT_EPMD_PORT:-$port}
		suite=${RABBITMQ_CHROOT_SUITE:-$suite}
	fi
	chroot_version=$1
	# Absolute and resolved, as /proc/mounts names the mounts in it.
	chroot_dir=$(realpath -m "$dir")
	chroot_epmd_port=$port
	chroot_suite=$suite
}

# in_chroot COMMAND...: runs COMMAND in the chroot as root, with a clean environment that points
# Erlang at the chroot's own epmd.
in_chroot() {
	sudo_if_needed env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		ERL_EPMD_PORT="$chroot_epmd_port" ERL_EPMD_ADDRESS=127.0.0.1 chroot "$chroot_dir" "$@"
}

# debian_mirror: the Debian archive to debootstrap from.
debian_mirror() {
	if [ -n "${RABBITMQ_DEBIAN_MIRROR:-}" ]; then
		echo "$RABBITMQ_DEBIAN_MIRROR"
		return
	fi
	local codename uri
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	uri=$(
		{
			# One-line sources: deb [options] URI SUITE COMPONENT...
			cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | sed 's/\[[^]]*\]//' |
				awk -v suite="$codename" '$1 == "deb" && $3 == suite { print $2; exit }'
			# deb822 sources: the first stanza of type deb whose suites hold the release's own.
			cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v suite="$codename" '
				function emit() {
					if (!printed && deb && has_suite && uri != "") { print uri; printed = 1; exit }
					deb = has_suite = 0; uri = ""
				}
				/^[[:space:]]*$/ { emit(); next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "uris:" { uri = $2 }
				tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1 }
				END { emit() }'
		} | head -n 1
	)
	echo "${uri:-http://deb.debian.org/debian}"
}

mounted() { awk -v dir="$1" '$2 == dir { found = 1 } END { exit !found }' /proc/mounts; }

# unmount_under DIR: unmounts everything mounted at or below DIR, the deepest first.
unmount_under() {
	local dir=$1 mount_point
	awk -v dir="$dir" '$2 == dir || index($2, dir "/") == 1 { print $2 }' /proc/mounts | tac |
		while read -r mount_point; do
			# A process still holding a file there (say /dev/null) makes it busy: detach it then.
			sudo_if_needed umount "$mount_point" 2>/dev/null || sudo_if_needed umount -l "$mount_point"
		done
}

chroot_package_version() {
	dpkg-query --admindir="$chroot_dir/var/lib/dpkg" -W -f '${Version}' rabbitmq-server 2>/dev/null || true
}

# make_chroot: debootstraps the chroot unless it is there; fails unless it holds rabbitmq-server
# chroot_version.
make_chroot() {
	if [ ! -e "$chroot_dir" ]; then
		command -v debootstrap >/dev/null 2>&1 || {
			log "installing debootstrap from Debian's packages"
			apt_install debootstrap
		}
		# Made beside, then renamed: the chroot directory is there only once it is complete.
		local partial=$chroot_dir.partial debootstrap_log mirror started=$SECONDS
		if [ -e "$partial" ]; then
			log "removing $partial, left by an interrupted run"
			unmount_under "$partial"
			sudo_if_needed rm -rf --one-file-system "$partial"
		fi
		mirror=$(debian_mirror)
		debootstrap_log=$(mktemp -t rabbitmq-debootstrap.XXXXXX)
		log "making a Debian $chroot_suite chroot with rabbitmq-server in $chroot_dir from $mirror (debootstrap: ~3 min, ~400 MB, once; log $debootstrap_log)"
		if ! sudo_if_needed debootstrap --variant=minbase --include=rabbitmq-server "$chroot_suite" "$partial" "$mirror" >"$debootstrap_log" 2>&1; then
			unmount_under "$partial"
			tail -n 20 "$debootstrap_log" >&2 || true
			die "debootstrap failed; its log: $debootstrap_log"
		fi
		unmount_under "$partial"
		sudo_if_needed mv "$partial" "$chroot_dir"
		rm -f "$debootstrap_log"
		log "made $chroot_dir in $((SECONDS - started))s"
	fi
	local package
	package=$(chroot_package_version)
	[ -n "$package" ] || die "$chroot_dir holds no rabbitmq-server: remove it, or set RABBITMQ_CHROOT to another directory"
	is_version "$package" "$chroot_version" ||
		die "$chroot_dir holds rabbitmq-server $package, not $chroot_version (Debian $chroot_suite moved on?): remove it to make it again from RABBITMQ_CHROOT_SUITE, or set RABBITMQ_CHROOT"
}

chroot_mounts=(proc sys dev dev/pts tmp)

mount_chroot() {
	local target
	for target in "${chroot_mounts[@]}"; do
		mounted "$chroot_dir/$target" && continue
		case "$target" in
		proc) sudo_if_needed mount -t proc proc "$chroot_dir/proc" ;;
		sys) sudo_if_needed mount -t sysfs -o ro sysfs "$chroot_dir/sys" ;;
		*) sudo_if_needed mount --bind "/$target" "$chroot_dir/$target" ;;
		esac
	done
}

# chroot_hosts: writes the chroot's /etc/hosts, where the nodes' host, localhost, must resolve to
# loopback, and so must the machine's own name: RabbitMQ 4.3 looks it up for every AMQP connection
# it accepts or opens (rabbit_reader:server_properties, when no cluster_name is set), the management
# API's peeks included, and a lookup left to the DNS server took 5 s about once in 60 here
# (benchmarks/peeks-4.3-hostname-by-dns.md).
chroot_hosts() {
	local file=$chroot_dir/etc/hosts machine
	machine=$(hostname)
	local content="# managed by terraform-provider-rabbitmq scripts/rabbitmq-chroot.sh
127.0.0.1	localhost${machine:+ $machine}
::1	localhost ip6-localhost ip6-loopback"
	if [ -f "$file" ] && [ "$(cat "$file")" = "$content" ]; then return 0; fi
	log "writing $file"
	printf '%s\n' "$content" | sudo_if_needed tee "$file" >/dev/null
}

# chroot_nodes: the short names of the nodes registered with the chroot's epmd (rabbit,
# rabbit-f1, …), one a line: the nodes whose VMs run. Nothing when its epmd does not run.
chroot_nodes() {
	[ -x "$chroot_dir/usr/bin/epmd" ] || return 0
	in_chroot epmd -names 2>/dev/null | sed -n 's/^name \(.*\) at port [0-9]*$/\1/p' || true
}

# await_chroot_node SHORT: waits, up to 30 s, until the node SHORT has registered with the chroot's
# epmd, which its VM does first thing: from then on release_chroot leaves the mounts alone. A node
# that ends before (a configuration it refuses) is left for its caller's wait to report.
await_chroot_node() {
	local deadline=$((SECONDS + 30))
	until grep -qxF "$1" <<<"$(chroot_nodes)"; do
		[ "$SECONDS" -lt "$deadline" ] || return 0
		sleep 0.2
	done
}

# The descriptor chroot_lock holds, for chroot_unlock. A node started while it is held must not
# inherit it (its VM would keep the lock as long as it runs): start it with {chroot_lock_fd}<&-.
chroot_lock_fd=

# chroot_lock: waits for the lock of starting and stopping the chroot's nodes, a file beside the
# chroot, taken for as long as this script holds it or until chroot_unlock.
chroot_lock() {
	local file=$chroot_dir.lock
	[ -e "$file" ] || sudo_if_needed touch "$file"
	exec {chroot_lock_fd}<"$file"
	flock -w "${wait_seconds:-180}" "$chroot_lock_fd" ||
		die "$file stayed locked for ${wait_seconds:-180}s: another script is starting or stopping a node of $chroot_dir"
}

chroot_unlock() {
	[ -n "$chroot_lock_fd" ] || return 0
	exec {chroot_lock_fd}<&-
	chroot_lock_fd=
}

# release_chroot [quiet]: once no node of the chroot runs, stops its epmd (which the first node
# started) and unmounts what mount_chroot mounted; while one runs, the shared node or a fault
# node, leaves both, and says so unless told quiet.
release_chroot() {
	[ -d "$chroot_dir" ] || return 0
	chroot_lock
	local running
	running=$(chroot_nodes)
	if [ -n "$running" ]; then
		if [ "${1:-}" != quiet ] && mounted "$chroot_dir/proc"; then log "$chroot_dir stays mounted for the nodes still running there: ${running//$'\n'/, }"; fi
	else
		# epmd refuses to go while a node is registered.
		if mounted "$chroot_dir/proc"; then in_chroot epmd -kill >/dev/null 2>&1 || true; fi
		unmount_under "$chroot_dir"
	fi
	chroot_unlock
}
