#!/usr/bin/env bash
# A local RabbitMQ for tests and demos: Debian's package, listening on 127.0.0.1 only,
# with the management plugin. Idempotent: on a machine where it already answers, `start`
# returns at once.
#
#   scripts/rabbitmq.sh start    install if absent, configure, start, wait for /api/overview
#   scripts/rabbitmq.sh stop     stop the node this script manages
#   scripts/rabbitmq.sh status   exit 0 if the management API answers
#
# Environment: RABBITMQ_MANAGEMENT_PORT (15672), RABBITMQ_AMQP_PORT (5672), RABBITMQ_WAIT_SECONDS (180).
set -euo pipefail

amqp_port=${RABBITMQ_AMQP_PORT:-5672}
management_port=${RABBITMQ_MANAGEMENT_PORT:-15672}
wait_seconds=${RABBITMQ_WAIT_SECONDS:-180}
node=rabbit@localhost
marker="# managed by terraform-provider-rabbitmq scripts/rabbitmq.sh"

# Every Erlang program this script runs (rabbitmqctl starts epmd on its own) binds epmd to loopback.
export ERL_EPMD_ADDRESS=127.0.0.1

log() { echo "rabbitmq.sh: $*" >&2; }

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo --preserve-env=ERL_EPMD_ADDRESS "$@"; fi
}

answers() {
	curl -fsS --max-time 2 -u guest:guest "http://127.0.0.1:${management_port}/api/overview" >/dev/null 2>&1
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
	sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends rabbitmq-server ||
		{ sudo_if_needed apt-get update -q && sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends rabbitmq-server; } ||
		status=$?
	[ -n "$added_policy" ] && sudo_if_needed rm -f "$policy"
	return "$status"
}

# write_managed FILE CONTENT: writes FILE unless it already holds exactly CONTENT.
write_managed() {
	local file=$1 content="$marker"$'\n'"$2"
	if [ -f "$file" ] && [ "$(cat "$file")" = "$content" ]; then return 0; fi
	log "writing $file"
	printf '%s\n' "$content" | sudo_if_needed tee "$file" >/dev/null
}

configure() {
	sudo_if_needed mkdir -p /etc/rabbitmq
	write_managed /etc/rabbitmq/rabbitmq.conf "listeners.tcp.default = 127.0.0.1:${amqp_port}
management.tcp.ip = 127.0.0.1
management.tcp.port = ${management_port}
loopback_users.guest = true"
	# The node name must resolve to loopback; epmd and Erlang distribution listen on it only.
	write_managed /etc/rabbitmq/rabbitmq-env.conf "NODENAME=${node}
NODE_IP_ADDRESS=127.0.0.1
SERVER_ADDITIONAL_ERL_ARGS=\"-kernel inet_dist_use_interface {127,0,0,1}\"
# The node runs under su, with the soft limit of open files (often 1,024): too few for the
# thousands of queues and connections of the tests and benchmarks, and past it the node's
# database stops. This file is sourced by the node's start script: raise it to the hard limit.
ulimit -n \"\$(ulimit -Hn)\" 2>/dev/null || true"
	sudo_if_needed rabbitmq-plugins enable --offline rabbitmq_management >/dev/null
}

start() {
	if answers; then
		return 0
	fi
	install_package
	sudo_if_needed epmd -daemon
	configure
	if ! sudo_if_needed rabbitmqctl -n "$node" ping >/dev/null 2>&1; then
		log "starting $node"
		sudo_if_needed rabbitmq-server -detached
	fi
	local deadline=$((SECONDS + wait_seconds))
	# await_startup fails at once while the node is still booting, so retry it.
	until sudo_if_needed rabbitmqctl -n "$node" await_startup --timeout 10 >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			log "$node did not start within ${wait_seconds}s; its log: /var/log/rabbitmq/"
			exit 1
		fi
		sleep 1
	done
	until answers; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			log "management API on 127.0.0.1:${management_port} did not answer within ${wait_seconds}s"
			exit 1
		fi
		sleep 1
	done
	log "$node is up: amqp://127.0.0.1:${amqp_port}, http://127.0.0.1:${management_port}"
}

stop() {
	command -v rabbitmqctl >/dev/null 2>&1 || return 0
	if sudo_if_needed rabbitmqctl -n "$node" ping >/dev/null 2>&1; then
		sudo_if_needed rabbitmqctl -n "$node" stop >/dev/null
		log "stopped $node"
	fi
}

case "${1:-start}" in
start) start ;;
stop) stop ;;
status) answers ;;
*)
	echo "usage: $0 [start|stop|status]" >&2
	exit 2
	;;
esac
