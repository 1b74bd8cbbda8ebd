#!/usr/bin/env bash
# The local RabbitMQ for tests, examples, demos and benchmarks: the node rabbit@localhost,
# listening on 127.0.0.1 only (AMQP 5672, management API 15672, guest/guest) with the management
# plugin, from Debian's packages. RABBITMQ_VERSION picks the broker:
#   4.3   (the default) Debian sid's rabbitmq-server 4.3, in a chroot of its own (RABBITMQ_CHROOT,
#         /var/lib/rabbitmq-sid) that debootstrap makes once from the Debian archive (~3 min, ~400 MB)
#   3.10  Debian 12's rabbitmq-server (3.10.8), installed on this machine
# Either is the same broker to its clients. Idempotent: `start` returns at once when the version
# asked for answers; when the other one (a node this script started) answers, it stops that first.
#
#   scripts/rabbitmq.sh start     install if absent, configure, start, wait for /api/overview
#   scripts/rabbitmq.sh stop      stop the node this script started, whichever version it is
#   scripts/rabbitmq.sh status    exit 0 if the management API answers
#   scripts/rabbitmq.sh version   print the version of RabbitMQ that answers there (e.g. 4.3.6)
#   scripts/rabbitmq.sh install   install RABBITMQ_VERSION's broker without starting it
#   scripts/rabbitmq.sh ctl ARGS  run RABBITMQ_VERSION's rabbitmqctl (scripts/rabbitmq-cli/rabbitmqctl)
#
# The chroot (scripts/rabbitmq-chroot.sh, which this script and scripts/rabbitmq-nodes.sh source)
# shares this machine's network and processes. Its node is rabbit@localhost too, but its Erlang port
# mapper (epmd) listens on 127.0.0.1:RABBITMQ_CHROOT_EPMD_PORT (4370), apart from this machine's on
# 4369 (Debian 12's nodes): the two Erlangs never meet. While its node runs, the chroot has /proc,
# /sys (read-only), /dev, /dev/pts and this machine's /tmp (where tests write files for rabbitmqctl)
# mounted; `stop` unmounts them, unless a fault node of scripts/rabbitmq-nodes.sh (RabbitMQ 4.3, in
# the same chroot) still runs there.
#
# Environment: RABBITMQ_VERSION (4.3), RABBITMQ_MANAGEMENT_PORT (15672), RABBITMQ_AMQP_PORT (5672),
# RABBITMQ_WAIT_SECONDS (180); for 4.3 also RABBITMQ_CHROOT, RABBITMQ_CHROOT_EPMD_PORT,
# RABBITMQ_CHROOT_SUITE (sid) and RABBITMQ_DEBIAN_MIRROR (default: the Debian archive this machine's
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

case "$version" in
4.3) other=3.10 ;;
3.10) other=4.3 ;;
*) die "RABBITMQ_VERSION must be 4.3 or 3.10, not '$version'" ;;
esac

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo --preserve-env=ERL_EPMD_ADDRESS "$@"; fi
}

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

# The end of both nodes' rabbitmq-env.conf.
ulimit_comment="# The node runs under su, with the soft limit of open files (often 1,024): too few for the
# thousands of queues and connections of the tests and benchmarks, and past it the node's
# database stops. This file is sourced by the node's start script: raise it to the hard limit.
ulimit -n \"\$(ulimit -Hn)\" 2>/dev/null || true"

configure() {
	sudo_if_needed mkdir -p /etc/rabbitmq
	write_managed /etc/rabbitmq/rabbitmq.conf "$rabbitmq_conf"
	# The node name must resolve to loopback; epmd and Erlang distribution listen on it only.
	write_managed /etc/rabbitmq/rabbitmq-env.conf "NODENAME=${node}
NODE_IP_ADDRESS=127.0.0.1
SERVER_ADDITIONAL_ERL_ARGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"
$ulimit_comment"
	sudo_if_needed rabbitmq-plugins enable --offline rabbitmq_management >/dev/null
}

# --- RabbitMQ 4.3 in a Debian sid chroot ---------------------------------------------------------

# The chroot's variables (chroot_dir, chroot_epmd_port) and functions: in_chroot, make_chroot,
# mount_chroot, release_chroot, chroot_lock, ...
# shellcheck source=scripts/rabbitmq-chroot.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rabbitmq-chroot.sh"

configure_chroot() {
	chroot_hosts
	write_managed "$chroot_dir/etc/rabbitmq/rabbitmq.conf" "$rabbitmq_conf"
	# Sourced by rabbitmq-server and rabbitmqctl alike, which export the ERL_EPMD_* variables.
	write_managed "$chroot_dir/etc/rabbitmq/rabbitmq-env.conf" "NODENAME=${node}
NODE_IP_ADDRESS=127.0.0.1
ERL_EPMD_PORT=${chroot_epmd_port}
ERL_EPMD_ADDRESS=127.0.0.1
SERVER_ADDITIONAL_ERL_ARGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"
$ulimit_comment"
	write_managed "$chroot_dir/etc/rabbitmq/enabled_plugins" "[rabbitmq_management]." %%
}

# --- either version ------------------------------------------------------------------------------

# ctl VERSION ARGS...: rabbitmqctl of VERSION's broker, as the rabbitmq user (Debian's wrapper
# switches). By its path: scripts/rabbitmq-cli/rabbitmqctl may come first on PATH.
ctl() {
	local v=$1
	shift
	case "$v" in
	3.10) sudo_if_needed /usr/sbin/rabbitmqctl "$@" ;;
	4.3) in_chroot /usr/sbin/rabbitmqctl "$@" ;;
	esac
}

# running VERSION: whether the node of VERSION runs (answers a ping).
running() {
	case "$1" in
	3.10) [ -x /usr/sbin/rabbitmqctl ] || return 1 ;;
	# It runs only with the chroot's mounts in place.
	4.3) [ -x "$chroot_dir/usr/sbin/rabbitmqctl" ] && mounted "$chroot_dir/proc" || return 1 ;;
	esac
	ctl "$1" -n "$node" ping >/dev/null 2>&1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# wait_ports_free: waits until nothing listens on the node's AMQP, management and distribution ports.
wait_ports_free() {
	local deadline=$((SECONDS + wait_seconds)) port
	for port in "$amqp_port" "$management_port" $((amqp_port + 20000)); do
		while port_open "$port"; do
			[ "$SECONDS" -lt "$deadline" ] || die "127.0.0.1:$port still in use ${wait_seconds}s after $node stopped"
			sleep 0.5
		done
	done
}

stop_version() {
	local v=$1
	if running "$v"; then
		ctl "$v" -n "$node" stop >/dev/null
		wait_ports_free
		log "stopped $node (RabbitMQ $v)"
	fi
	if [ "$v" = 4.3 ]; then
		# Its VM leaves the chroot's epmd as it ends, about when its ports close.
		local deadline=$((SECONDS + wait_seconds))
		while grep -qxF "${node%@*}" <<<"$(chroot_nodes)"; do
			[ "$SECONDS" -lt "$deadline" ] || die "$node still registered with the chroot's epmd ${wait_seconds}s after it stopped"
			sleep 0.2
		done
		# Unmounts unless a fault node of scripts/rabbitmq-nodes.sh still runs there.
		release_chroot
	fi
}

install_version() {
	case "$1" in
	3.10) install_package ;;
	4.3) make_chroot ;;
	esac
}

start() {
	local answering
	answering=$(answering_version)
	if [ -n "$answering" ] && is_version "$answering" "$version"; then
		return 0
	fi
	# The other version's node, whether it answers or is still booting, holds the ports.
	if running "$other"; then
		log "RabbitMQ $other runs; stopping it for $version"
		stop_version "$other"
	elif [ -n "$answering" ]; then
		die "RabbitMQ $answering answers on 127.0.0.1:${management_port}, not a node this script started: stop it first"
	fi
	install_version "$version"
	local started=$SECONDS
	if [ "$version" = 3.10 ]; then
		sudo_if_needed epmd -daemon
		configure
	else
		# Held until the node is registered, so that release_chroot (a fault node stopping) cannot
		# unmount under it meanwhile.
		chroot_lock
		mount_chroot
		configure_chroot
	fi
	if ! ctl "$version" -n "$node" ping >/dev/null 2>&1; then
		log "starting $node (RabbitMQ $version)"
		if [ "$version" = 3.10 ]; then
			sudo_if_needed rabbitmq-server -detached
		else
			in_chroot /usr/sbin/rabbitmq-server -detached {chroot_lock_fd}<&-
			await_chroot_node "${node%@*}"
		fi
	fi
	chroot_unlock
	local deadline=$((SECONDS + wait_seconds)) logs=/var/log/rabbitmq/
	[ "$version" = 3.10 ] || logs=$chroot_dir/var/log/rabbitmq/
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
	stop_version 3.10
	stop_version 4.3
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
install) install_version "$version" ;;
ctl) ctl "$version" "${@:2}" ;;
*)
	echo "usage: $0 [start|stop|status|version|install|ctl ARGS...]" >&2
	exit 2
	;;
esac
