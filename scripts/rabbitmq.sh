#!/usr/bin/env bash
# The local RabbitMQ for tests, examples, demos and benchmarks: the node rabbit@localhost,
# listening on 127.0.0.1 only (guest/guest) with the management plugin, from Debian's packages.
# RABBITMQ_VERSION picks the broker (scripts/rabbitmq-chroot.sh):
#   4.3   (the default) Debian sid's rabbitmq-server 4.3, in a chroot of its own (/var/lib/rabbitmq-sid)
#   4.0   Debian 13 (trixie)'s rabbitmq-server 4.0.5, in a chroot of its own (/var/lib/rabbitmq-trixie)
#   3.10  Debian 12's rabbitmq-server (3.10.8), installed on this machine
# debootstrap makes a chroot once from the Debian archive (~1-3 min, ~400 MB). All are the same
# broker to their clients.
#
# Ports: AMQP RABBITMQ_AMQP_PORT (5672), management API RABBITMQ_MANAGEMENT_PORT (15672), Erlang
# distribution the AMQP port + 20000 (25672). Each version is an Erlang world of its own (its own
# epmd, user and cookie), so each can run its rabbit@localhost at the same time as the others, on
# ports of its own: e.g. 4.3 on 5672/15672 beside 4.0 on 5673/15673 and 3.10 on 5674/15674.
#
#   scripts/rabbitmq.sh start     install if absent, configure, start, wait for /api/overview.
#                                 Idempotent: returns at once when RABBITMQ_VERSION's node answers
#                                 on the ports asked for. Another version's node (one this script
#                                 started) that holds one of those ports is stopped first;
#                                 RABBITMQ_VERSION's own node, if it runs on other ports, is
#                                 restarted on the ones asked for (one node per version).
#   scripts/rabbitmq.sh stop      stop RABBITMQ_VERSION's node, wherever it runs; with
#                                 RABBITMQ_VERSION unset, every version's node this script started
#   scripts/rabbitmq.sh status    exit 0 if the management API answers on RABBITMQ_MANAGEMENT_PORT
#   scripts/rabbitmq.sh version   print the version of RabbitMQ that answers there (e.g. 4.3.6)
#   scripts/rabbitmq.sh list      print each running version's node and ports, one a line
#   scripts/rabbitmq.sh install   install RABBITMQ_VERSION's broker without starting it
#   scripts/rabbitmq.sh ctl ARGS  run RABBITMQ_VERSION's rabbitmqctl (scripts/rabbitmq-cli/rabbitmqctl)
#
# A chroot (scripts/rabbitmq-chroot.sh, which this script and scripts/rabbitmq-nodes.sh source)
# shares this machine's network and processes. Its node is rabbit@localhost too, but its Erlang port
# mapper (epmd) listens on 127.0.0.1:4370 (4.3) or 4371 (4.0), apart from this machine's on 4369
# (Debian 12's nodes): the Erlangs never meet. While a node runs there, its chroot has /proc, /sys
# (read-only), /dev, /dev/pts and this machine's /tmp (where tests write files for rabbitmqctl)
# mounted; `stop` unmounts them, unless a fault node of scripts/rabbitmq-nodes.sh (same version, in
# the same chroot) still runs there.
#
# Environment: RABBITMQ_VERSION (4.3), RABBITMQ_AMQP_PORT (5672), RABBITMQ_MANAGEMENT_PORT (15672),
# RABBITMQ_WAIT_SECONDS (180), RABBITMQ_STATISTICS_SECONDS (below; read when a node starts); for 4.0
# and 4.3 also RABBITMQ_CHROOT, RABBITMQ_CHROOT_EPMD_PORT, RABBITMQ_CHROOT_SUITE (those of
# RABBITMQ_VERSION's chroot) and RABBITMQ_DEBIAN_MIRROR (default: the Debian archive this machine's
# apt sources name for its own release, else http://deb.debian.org/debian).
set -euo pipefail

version=${RABBITMQ_VERSION:-4.3}
amqp_port=${RABBITMQ_AMQP_PORT:-5672}
management_port=${RABBITMQ_MANAGEMENT_PORT:-15672}
wait_seconds=${RABBITMQ_WAIT_SECONDS:-180}
node=rabbit@localhost
marker="managed by terraform-provider-rabbitmq scripts/rabbitmq.sh"

# Every Erlang program this script runs (rabbitmqctl starts epmd on its own) binds epmd to loopback.
export ERL_EPMD_ADDRESS=127.0.0.1

log() { echo "rabbitmq.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo --preserve-env=ERL_EPMD_ADDRESS "$@"; fi
}

# The versions, and their chroots (chroot_select, in_chroot, make_chroot, mount_chroot,
# release_chroot, chroot_lock, ...).
# shellcheck source=scripts/rabbitmq-chroot.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rabbitmq-chroot.sh"

check_version "$version"
if in_a_chroot "$version"; then chroot_select "$version"; fi

for port in "$amqp_port" "$management_port"; do
	[[ $port =~ ^[1-9][0-9]{0,4}$ ]] && [ "$port" -le 45535 ] || die "RABBITMQ_AMQP_PORT and RABBITMQ_MANAGEMENT_PORT must be ports up to 45535, not '$port'"
done
# The node's Erlang distribution port, as RabbitMQ's own default derives it from the AMQP port.
dist_port=$((amqp_port + 20000))
[ "$amqp_port" != "$management_port" ] && [ "$dist_port" != "$management_port" ] ||
	die "RABBITMQ_AMQP_PORT ($amqp_port), RABBITMQ_MANAGEMENT_PORT ($management_port) and the distribution port ($dist_port) must differ"

answers() {
	curl -fsS --max-time 2 -u guest:guest "http://127.0.0.1:${management_port}/api/overview" >/dev/null 2>&1
}

# answering_version: the version of the RabbitMQ answering on the management port; nothing if none.
answering_version() {
	curl -fsS --max-time 2 -u guest:guest "http://127.0.0.1:${management_port}/api/overview" 2>/dev/null |
		grep -o '"rabbitmq_version":"[^"]*"' | cut -d'"' -f4 || true
}

# is_version ANSWERED WANTED: whether version ANSWERED (4.3.6) is a release of WANTED (4.3).
is_version() { [[ $1 == "$2".* ]]; }

apt_install() {
	sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" ||
		{ sudo_if_needed apt-get update -q && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@"; }
}

install_package() {
	command -v rabbitmq-server >/dev/null 2>&1 && return 0
	log "installing rabbitmq-server from Debian's packages"
	# Keep the package's maintainer scripts from starting a node with the default,
	# all-interfaces configuration before ours is written.
	local policy=/usr/sbin/policy-rc.d added_policy=
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | sudo_if_needed tee "$policy" >/dev/null
		sudo_if_needed chmod +x "$policy"
		added_policy=1
	fi
	local status=0
	apt_install rabbitmq-server || status=$?
	[ -n "$added_policy" ] && sudo_if_needed rm -f "$policy"
	return "$status"
}

# write_managed FILE CONTENT [COMMENT]: writes FILE, its first line the marker behind COMMENT (#),
# unless it already holds exactly that.
write_managed() {
	local file=$1 content="${3:-#} $marker"$'\n'"$2"
	if [ -f "$file" ] && [ "$(cat "$file")" = "$content" ]; then return 0; fi
	log "writing $file"
	printf '%s\n' "$content" | sudo_if_needed tee "$file" >/dev/null
}

rabbitmq_conf="listeners.tcp.default = 127.0.0.1:${amqp_port}
management.tcp.ip = 127.0.0.1
management.tcp.port = ${management_port}
loopback_users.guest = true"

# RABBITMQ_STATISTICS_SECONDS (RabbitMQ's 5 when unset): how often the node samples its queues'
# counts (quorum_tick_interval, collect_statistics_interval) and collects them into the management
# statistics (the first step of every sample_retention_policies, whose later steps stay RabbitMQ's);
# only advanced.config sets the first and the last. CI's acceptance pass on 4.0 sets 1: there a
# quorum queue's deletion waits for three samples.
statistics_seconds=${RABBITMQ_STATISTICS_SECONDS:-}
advanced_config="[]."
if [ -n "$statistics_seconds" ]; then
	[[ $statistics_seconds =~ ^[1-9][0-9]*$ ]] || die "RABBITMQ_STATISTICS_SECONDS must be whole seconds, not '$statistics_seconds'"
	advanced_config="[{rabbit, [{quorum_tick_interval, ${statistics_seconds}000}, {collect_statistics_interval, ${statistics_seconds}000}]},
 {rabbitmq_management, [{sample_retention_policies, [{global, [{605, ${statistics_seconds}}, {3660, 60}, {29400, 600}, {86400, 1800}]},
                                                     {basic, [{605, ${statistics_seconds}}, {3600, 60}]},
                                                     {detailed, [{605, ${statistics_seconds}}]}]}]}]."
fi

# The start of every node's rabbitmq-env.conf. DIST_PORT, which RabbitMQ would derive from
# NODE_PORT, is written out: it is what another start reads back from epmd (node_ports).
env_conf="NODENAME=${node}
NODE_IP_ADDRESS=127.0.0.1
NODE_PORT=${amqp_port}
DIST_PORT=${dist_port}"

# The end of every node's rabbitmq-env.conf.
ulimit_comment="# The node runs under su, with the soft limit of open files (often 1,024): too few for the
# thousands of queues and connections of the tests and benchmarks, and past it the node's
# database stops. This file is sourced by the node's start script: raise it to the hard limit.
ulimit -n \"\$(ulimit -Hn)\" 2>/dev/null || true"

# env_content VERSION: VERSION's rabbitmq-env.conf. The node name must resolve to loopback. In a
# chroot it is sourced by rabbitmq-server and rabbitmqctl alike, which export the ERL_EPMD_*
# variables: the chroot's own epmd, on loopback.
env_content() {
	local epmd_env=
	if in_a_chroot "$1"; then
		epmd_env=$(
			chroot_select "$1"
			printf '\nERL_EPMD_PORT=%s\nERL_EPMD_ADDRESS=127.0.0.1' "$chroot_epmd_port"
		)
	fi
	printf '%s\n' "${env_conf}${epmd_env}
SERVER_ADDITIONAL_ERL_ARGS=\"${node_erl_args}\"
$ulimit_comment"
}

configure() {
	sudo_if_needed mkdir -p /etc/rabbitmq
	write_managed /etc/rabbitmq/rabbitmq.conf "$rabbitmq_conf"
	write_managed /etc/rabbitmq/advanced.config "$advanced_config" %
	write_managed /etc/rabbitmq/rabbitmq-env.conf "$(env_content "$version")"
	sudo_if_needed rabbitmq-plugins enable --offline rabbitmq_management >/dev/null
}

configure_chroot() {
	chroot_hosts
	write_managed "$chroot_dir/etc/rabbitmq/rabbitmq.conf" "$rabbitmq_conf"
	write_managed "$chroot_dir/etc/rabbitmq/advanced.config" "$advanced_config" %
	write_managed "$chroot_dir/etc/rabbitmq/rabbitmq-env.conf" "$(env_content "$version")"
	write_managed "$chroot_dir/etc/rabbitmq/enabled_plugins" "[rabbitmq_management]." %%
}

# --- any version ---------------------------------------------------------------------------------

# ctl VERSION ARGS...: rabbitmqctl of VERSION's broker, as the rabbitmq user (Debian's wrapper
# switches). By its path: scripts/rabbitmq-cli/rabbitmqctl may come first on PATH.
ctl() {
	local v=$1
	shift
	if in_a_chroot "$v"; then
		(
			chroot_select "$v"
			in_chroot /usr/sbin/rabbitmqctl "$@"
		)
	else
		sudo_if_needed /usr/sbin/rabbitmqctl "$@"
	fi
}

# etc_dir VERSION: the directory of VERSION's rabbitmq.conf, as seen from this machine.
etc_dir() {
	if in_a_chroot "$1"; then
		(
			chroot_select "$1"
			echo "$chroot_dir/etc/rabbitmq"
		)
	else
		echo /etc/rabbitmq
	fi
}

# registered_port VERSION: the distribution port of VERSION's rabbit@localhost, as VERSION's epmd
# tells it: nothing when the node's VM does not run (epmd forgets a VM the moment it ends).
registered_port() {
	local names
	if in_a_chroot "$1"; then
		names=$(
			chroot_select "$1"
			[ -x "$chroot_dir/usr/bin/epmd" ] || exit 0
			in_chroot epmd -names 2>/dev/null || true
		)
	else
		command -v epmd >/dev/null 2>&1 || return 0
		names=$(env -u ERL_EPMD_PORT epmd -names 2>/dev/null || true)
	fi
	sed -n "s/^name ${node%@*} at port \([0-9]*\)\$/\1/p" <<<"$names"
}

# node_ports VERSION: "AMQP MANAGEMENT DISTRIBUTION", the ports of VERSION's rabbit@localhost if
# its VM runs; nothing if not. The distribution port is epmd's; the other two are those of the
# rabbitmq.conf this script wrote before starting it (the defaults if none says).
node_ports() {
	local dist conf amqp management
	dist=$(registered_port "$1")
	[ -n "$dist" ] || return 0
	conf=$(etc_dir "$1")/rabbitmq.conf
	amqp=$(sed -n 's/^listeners\.tcp\.default = .*:\([0-9]*\)$/\1/p' "$conf" 2>/dev/null | head -n 1)
	management=$(sed -n 's/^management\.tcp\.port = \([0-9]*\)$/\1/p' "$conf" 2>/dev/null | head -n 1)
	echo "${amqp:-5672} ${management:-15672} $dist"
}

# describe_ports AMQP MANAGEMENT DISTRIBUTION
describe_ports() { echo "amqp 127.0.0.1:$1, management 127.0.0.1:$2, distribution $3"; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_ports_free PORT...: waits until nothing listens on the ports.
wait_ports_free() {
	local deadline=$((SECONDS + wait_seconds)) port
	for port in "$@"; do
		while port_open "$port"; do
			[ "$SECONDS" -lt "$deadline" ] || die "127.0.0.1:$port still in use ${wait_seconds}s after $node stopped"
			sleep 0.5
		done
	done
}

# stop_version VERSION: stops VERSION's node if it runs and waits until its ports are free.
stop_version() {
	local v=$1 ports
	ports=$(node_ports "$v")
	if [ -n "$ports" ]; then
		# A node still booting may not take the stop at once; its VM ending is what counts.
		ctl "$v" -n "$node" stop >/dev/null 2>&1 || true
		local deadline=$((SECONDS + wait_seconds))
		while [ -n "$(registered_port "$v")" ]; do
			[ "$SECONDS" -lt "$deadline" ] || die "$node (RabbitMQ $v) still runs ${wait_seconds}s after being stopped"
			sleep 0.2
		done
		# shellcheck disable=SC2086 # three ports
		wait_ports_free $ports
		log "stopped $node (RabbitMQ $v, $(describe_ports $ports))"
	fi
	if in_a_chroot "$v"; then
		# Unmounts unless a fault node of scripts/rabbitmq-nodes.sh still runs there.
		(
			chroot_select "$v"
			release_chroot
		)
	fi
}

install_version() {
	if in_a_chroot "$1"; then
		(
			chroot_select "$1"
			make_chroot
		)
	else
		install_package
	fi
}

# shares_port AMQP MANAGEMENT DISTRIBUTION: whether a node on those ports holds one of the ports asked for.
shares_port() {
	local port
	for port in "$@"; do
		case " $amqp_port $management_port $dist_port " in *" $port "*) return 0 ;; esac
	done
	return 1
}

# configured VERSION: whether VERSION's configuration files are those this run would write (the
# node read them when it started).
configured() {
	local etc
	etc=$(etc_dir "$1")
	[ "$(cat "$etc/rabbitmq.conf" 2>/dev/null)" = "# $marker"$'\n'"$rabbitmq_conf" ] &&
		[ "$(cat "$etc/advanced.config" 2>/dev/null)" = "% $marker"$'\n'"$advanced_config" ] &&
		[ "$(cat "$etc/rabbitmq-env.conf" 2>/dev/null)" = "# $marker"$'\n'"$(env_content "$1")" ]
}

start() {
	local answering
	answering=$(answering_version)
	if [ -n "$answering" ] && is_version "$answering" "$version" && [ "$(registered_port "$version")" = "$dist_port" ]; then
		if configured "$version"; then
			return 0
		fi
		log "RabbitMQ $version runs with another configuration; restarting it"
		stop_version "$version"
	fi
	# Which of this script's nodes hold the ports asked for: RABBITMQ_VERSION's own on other ports is
	# restarted on them; another version's that holds one of them is stopped.
	local v ports mine= stopping=() held=" "
	for v in "${rabbitmq_versions[@]}"; do
		ports=$(node_ports "$v")
		[ -n "$ports" ] || continue
		if [ "$v" = "$version" ] && [ "$ports" = "$amqp_port $management_port $dist_port" ]; then
			mine=1 # running, or still booting: waited for below
		# shellcheck disable=SC2086 # three ports
		elif [ "$v" = "$version" ] || shares_port $ports; then
			stopping+=("$v")
			held+="$ports "
		fi
	done
	# Anything else on those ports, this script does not stop: it refuses before stopping anything.
	if [ -z "$mine" ]; then
		for port in "$amqp_port" "$management_port" "$dist_port"; do
			if [[ $held != *" $port "* ]] && port_open "$port"; then
				die "127.0.0.1:$port is in use, not by a node this script started (ss -ltnp 'sport = :$port' tells by what): stop that, or ask for other ports (RABBITMQ_AMQP_PORT, RABBITMQ_MANAGEMENT_PORT)"
			fi
		done
	fi
	for v in "${stopping[@]}"; do
		ports=$(node_ports "$v")
		if [ "$v" = "$version" ]; then
			# shellcheck disable=SC2086 # three ports
			log "RabbitMQ $v runs on $(describe_ports $ports); restarting it on amqp $amqp_port, management $management_port"
		else
			# shellcheck disable=SC2086 # three ports
			log "RabbitMQ $v runs on $(describe_ports $ports); stopping it for $version"
		fi
		stop_version "$v"
	done
	install_version "$version"
	local started=$SECONDS
	if in_a_chroot "$version"; then
		# Held until the node is registered, so that release_chroot (a fault node stopping) cannot
		# unmount under it meanwhile.
		chroot_lock
		mount_chroot
		configure_chroot
	else
		sudo_if_needed epmd -daemon
		configure
	fi
	if [ -z "$(registered_port "$version")" ]; then
		log "starting $node (RabbitMQ $version, $(describe_ports "$amqp_port" "$management_port" "$dist_port"))"
		if in_a_chroot "$version"; then
			in_chroot /usr/sbin/rabbitmq-server -detached {chroot_lock_fd}<&-
			await_chroot_node "${node%@*}"
		else
			sudo_if_needed rabbitmq-server -detached
		fi
	fi
	chroot_unlock
	local deadline=$((SECONDS + wait_seconds)) logs=/var/log/rabbitmq/
	! in_a_chroot "$version" || logs=$chroot_dir/var/log/rabbitmq/
	# await_startup fails at once while the node is still booting, so retry it.
	until ctl "$version" -n "$node" await_startup --timeout 10 >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			die "$node did not start within ${wait_seconds}s; its log: $logs"
		fi
		sleep 1
	done
	until answers; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			die "management API on 127.0.0.1:${management_port} did not answer within ${wait_seconds}s"
		fi
		sleep 1
	done
	answering=$(answering_version)
	is_version "$answering" "$version" || die "RabbitMQ $answering answers on 127.0.0.1:${management_port}, not $version"
	log "$node is up: RabbitMQ $answering, amqp://127.0.0.1:${amqp_port}, http://127.0.0.1:${management_port} ($((SECONDS - started))s)"
}

stop() {
	local v
	if [ -n "${RABBITMQ_VERSION:-}" ]; then
		stop_version "$version"
		return
	fi
	for v in "${rabbitmq_versions[@]}"; do stop_version "$v"; done
}

list() {
	local v ports
	for v in "${rabbitmq_versions[@]}"; do
		ports=$(node_ports "$v")
		# shellcheck disable=SC2086 # three ports
		[ -z "$ports" ] || echo "$v $node $(describe_ports $ports)"
	done
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
status) answers ;;
version)
	answered=$(answering_version)
	[ -n "$answered" ] || exit 1
	echo "$answered"
	;;
list) list ;;
install) install_version "$version" ;;
ctl) ctl "$version" "${@:2}" ;;
*)
	echo "usage: $0 [start|stop|status|version|list|install|ctl ARGS...]" >&2
	exit 2
	;;
esac
