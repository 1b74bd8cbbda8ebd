#!/usr/bin/env bash
# RabbitMQ nodes of their own for the fault tests (make test-faults): a node that is restarted,
# a 3-node cluster that loses a node, a node with a TLS management listener. They run beside the
# shared node of scripts/rabbitmq.sh (rabbit@localhost, 5672/15672), which this script never
# touches, on 127.0.0.1 only. RABBITMQ_VERSION picks their RabbitMQ, as it does the shared node's
# (`scripts/rabbitmq.sh install` installs any):
#   4.3   (the default) Debian sid's 4.3 in the chroot of scripts/rabbitmq.sh (/var/lib/rabbitmq-sid,
#         scripts/rabbitmq-chroot.sh)
#   4.0   Debian 13 (trixie)'s 4.0.5 in its chroot (/var/lib/rabbitmq-trixie)
#         In either chroot the nodes run as the chroot's rabbitmq user, with its Erlang cookie, and
#         register with the chroot's epmd (127.0.0.1:4370 for 4.3, 4371 for 4.0). While one of
#         them runs, the chroot has its mounts, this machine's /tmp among them, which is why their
#         files must be under /tmp; stopping the last node of the chroot (theirs or the shared one)
#         unmounts them.
#   3.10  Debian 12's package on this machine (3.10.8), as this machine's rabbitmq user, with its
#         Erlang cookie, registered with this machine's epmd (4369).
# Every version's node N has the same name and ports, so only one of them runs at a time.
#
# Node N (1–9) is rabbit-fN@localhost with
#   AMQP 127.0.0.1:568N, management API 127.0.0.1:1568N, Erlang distribution 127.0.0.1:2568N,
#   and 127.0.0.1:1569N kept free for a TLS management listener a caller configures;
# node NN (10–99) likewise with AMQP 57NN, management API 157NN, distribution 257NN and 158NN
# kept free for TLS (the 5-node cluster of make bench-cluster is 10–14)
# (RABBITMQ_NODES_NAME and RABBITMQ_NODES_PORT_BASE move the whole set: e.g. rabbit-cifN@localhost
# on 578N, 1578N, 2578N and 1579N with RABBITMQ_NODES_NAME=rabbit-cif RABBITMQ_NODES_PORT_BASE=5780,
# for a second set beside the first: .ci/run's, beside an engineer's fault tests)
# and everything it writes in $RABBITMQ_NODES_DIR/VERSION/fN (default /tmp/rabbitmq-nodes/4.3/fN;
# cifN for rabbit-cifN):
# rabbitmq.conf, advanced.config, enabled_plugins, env.conf, mnesia/ (data), log/; one version's
# data is never read by another. The directory is under /tmp because the rabbitmq user must be
# able to reach it, which a checkout in a private home directory would not allow (and 4.0's and
# 4.3's, in their chroots, see nothing else of this machine); the data is thrown away anyway.
#
#   start N...     start the nodes, keeping their data; wait until each management API answers
#   cluster N...   start the nodes and join every one to the first (join_cluster)
#   stop N...      stop the nodes gracefully (rabbitmqctl stop); a node not running is skipped
#   kill N...      kill -9 the nodes' OS processes, as a crash would; their data stays
#   rebalance N    spread the leaders of the quorum queues of N's cluster over its running nodes
#   pid N          print the node's OS process id
#   status N...    exit 0 if every node is running and its management API answers
#   describe N     print node=…, amqp_url=…, management_url=…, management_tls_port=…, dir=…,
#                  log=… (one per line)
#   metadata N     print how the node sees its cluster's metadata store (never fails)
#   delete N...    stop the nodes and remove their directories
#
# All commands are idempotent. `start` refuses to leave a running node on another
# configuration than the one asked for, or to start node N while another version's runs: stop
# it first.
#
# Environment for start and cluster:
#   RABBITMQ_NODES_CONF             extra rabbitmq.conf lines, e.g. management.ssl.* settings (for
#                                   4.0 and 4.3, the files they name must be under /tmp too)
#   RABBITMQ_NODES_ADVANCED_CONFIG  the nodes' advanced.config (Erlang terms); default none
#   RABBITMQ_NODES_ERL_ARGS         extra Erlang VM flags, e.g. "+sbwt none"; default none
# and for every command RABBITMQ_VERSION (4.3), RABBITMQ_NODES_DIR, RABBITMQ_NODES_NAME (rabbit-f),
# RABBITMQ_NODES_PORT_BASE (5680), RABBITMQ_WAIT_SECONDS (180), and scripts/rabbitmq.sh's
# RABBITMQ_CHROOT and RABBITMQ_CHROOT_EPMD_PORT.
set -euo pipefail

version=${RABBITMQ_VERSION:-4.3}
wait_seconds=${RABBITMQ_WAIT_SECONDS:-180}
marker="# managed by terraform-provider-rabbitmq scripts/rabbitmq-nodes.sh"

# Every Erlang program this script runs (rabbitmqctl starts epmd on its own) binds epmd to loopback.
export ERL_EPMD_ADDRESS=127.0.0.1

log() { echo "rabbitmq-nodes.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}

sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo --preserve-env=ERL_EPMD_ADDRESS,RABBITMQ_CONF_ENV_FILE "$@"; fi
}

# The versions and the chroots of RabbitMQ 4.0 and 4.3 (chroot_select, chroot_dir, in_chroot,
# mount_chroot, release_chroot, ...); every version asks the others' epmds whether their node N runs.
# shellcheck source=scripts/rabbitmq-chroot.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/rabbitmq-chroot.sh"

check_version "$version"
if in_a_chroot "$version"; then chroot_select "$version"; fi
base_dir=$(realpath -m "${RABBITMQ_NODES_DIR:-/tmp/rabbitmq-nodes}")/$version
if in_a_chroot "$version" && [[ $base_dir != /tmp/* ]]; then
	die "RABBITMQ_NODES_DIR must be under /tmp for RabbitMQ $version, whose chroot sees nothing else of this machine, not $base_dir"
fi

name_prefix=${RABBITMQ_NODES_NAME:-rabbit-f}
port_base=${RABBITMQ_NODES_PORT_BASE:-5680}
[[ $name_prefix =~ ^[a-z][a-z0-9-]*$ ]] || die "RABBITMQ_NODES_NAME must be lower-case letters, digits and dashes, not '$name_prefix'"
[[ $port_base =~ ^[1-9][0-9]*0$ ]] && [ "$port_base" -le 45500 ] || die "RABBITMQ_NODES_PORT_BASE must be a multiple of 10 up to 45500, not '$port_base'"

check_number() {
	[[ $1 =~ ^[1-9][0-9]?$ ]] || die "node number must be 1 to 99, not '$1'"
}

# node_vars N: sets the variables that describe node N.
node_vars() {
	check_number "$1"
	short=$name_prefix$1
	node=$short@localhost
	# Nodes 10–99 sit 20 ports above the base, their TLS listeners 100 above their management API.
	local base=$port_base tls=10
	[ "$1" -lt 10 ] || base=$((port_base + 20)) tls=100
	amqp_port=$((base + $1))
	management_port=$((10000 + base + $1))
	management_tls_port=$((10000 + base + tls + $1))
	dist_port=$((20000 + base + $1))
	# fN for rabbit-fN: another set's names make other directories.
	dir=$base_dir/${short#rabbit-}
	env_file=$dir/env.conf
}

# cli N PROGRAM ARGS...: RabbitMQ's PROGRAM (rabbitmq-server, rabbitmqctl, rabbitmq-queues) of
# RABBITMQ_VERSION for node N, as root, with N's env.conf: Debian's wrapper switches to the
# rabbitmq user, whose home holds the cookie. By its path: scripts/rabbitmq-cli may come first on
# PATH.
cli() {
	node_vars "$1"
	local program=/usr/sbin/$2
	shift 2
	if in_a_chroot "$version"; then
		in_chroot env RABBITMQ_CONF_ENV_FILE="$env_file" "$program" "$@"
	else
		RABBITMQ_CONF_ENV_FILE=$env_file sudo_if_needed "$program" "$@"
	fi
}

# ctl N ARGS...: rabbitmqctl against node N.
ctl() {
	node_vars "$1"
	cli "$1" rabbitmqctl -n "$node" "${@:2}"
}

# epmd_names VERSION: the short names of the nodes registered with VERSION's epmd, one a line.
epmd_names() {
	if in_a_chroot "$1"; then
		(
			chroot_select "$1"
			chroot_nodes
		)
	else
		command -v epmd >/dev/null 2>&1 || return 0
		env -u ERL_EPMD_PORT epmd -names 2>/dev/null | sed -n 's/^name \(.*\) at port [0-9]*$/\1/p' || true
	fi
}

# registered N [VERSION]: whether node N's Erlang VM is registered with the epmd of VERSION
# (RABBITMQ_VERSION's), i.e. running. Cheaper than asking the node, and epmd forgets a node the
# moment its VM ends, even after kill -9.
registered() {
	node_vars "$1"
	grep -qxF "$short" <<<"$(epmd_names "${2:-$version}")"
}

answers() {
	node_vars "$1"
	curl -fsS --max-time 2 -u guest:guest "http://127.0.0.1:${management_port}/api/overview" >/dev/null 2>&1
}

# write_file FILE CONTENT: writes FILE unless it holds CONTENT already; sets config_changed if it did.
write_file() {
	local file=$1 content="$2"
	# Both sides through $(…), which drops trailing newlines alike.
	if [ -f "$file" ] && [ "$(cat "$file")" = "$(printf '%s' "$content")" ]; then return 0; fi
	printf '%s\n' "$content" | sudo_if_needed tee "$file" >/dev/null
	config_changed=1
}

# configure N: writes node N's files; sets config_changed when any of them changed. (A status
# instead of a variable would turn off set -e inside, where callers test it.)
configure() {
	node_vars "$1"
	config_changed=
	local epmd_env=
	# The chroot's epmd, for the node and for rabbitmqctl (rabbitmq-env exports them).
	! in_a_chroot "$version" || epmd_env="
ERL_EPMD_PORT=${chroot_epmd_port}
ERL_EPMD_ADDRESS=127.0.0.1"
	if [ ! -d "$base_dir" ]; then
		sudo_if_needed install -d -m 0755 "$base_dir"
	fi
	# Owned by the rabbitmq user of the node's system: the chroot's has another uid than this
	# machine's, so its are made inside (where /tmp is this machine's, mounted).
	if in_a_chroot "$version"; then
		in_chroot install -d -m 0755 -o rabbitmq -g rabbitmq "$dir" "$dir/mnesia" "$dir/log"
	else
		sudo_if_needed install -d -m 0755 -o rabbitmq -g rabbitmq "$dir" "$dir/mnesia" "$dir/log"
	fi
	write_file "$dir/rabbitmq.conf" "$marker
listeners.tcp.default = 127.0.0.1:${amqp_port}
management.tcp.ip = 127.0.0.1
management.tcp.port = ${management_port}
loopback_users.guest = true
${RABBITMQ_NODES_CONF:-}"
	write_file "$dir/advanced.config" "%% ${marker#\# }
${RABBITMQ_NODES_ADVANCED_CONFIG:-[].}"
	write_file "$dir/enabled_plugins" "[rabbitmq_management]."
	# Read by rabbitmq-server instead of /etc/rabbitmq/rabbitmq-env.conf (the shared node's).
	write_file "$env_file" "$marker
NODENAME=${node}
NODE_IP_ADDRESS=127.0.0.1
NODE_PORT=${amqp_port}
DIST_PORT=${dist_port}
CONFIG_FILE=${dir}/rabbitmq.conf
ADVANCED_CONFIG_FILE=${dir}/advanced.config
ENABLED_PLUGINS_FILE=${dir}/enabled_plugins
MNESIA_BASE=${dir}/mnesia
LOG_BASE=${dir}/log
SERVER_ADDITIONAL_ERL_ARGS=\"${node_erl_args}${RABBITMQ_NODES_ERL_ARGS:+ $RABBITMQ_NODES_ERL_ARGS}\"${epmd_env}
# Sourced by the start script under su, whose soft limit of open files may be 1,024; as for the
# shared node (scripts/rabbitmq.sh), raise it to the hard limit.
ulimit -n \"\$(ulimit -Hn)\" 2>/dev/null || true"
}

# check_installed: fails unless RABBITMQ_VERSION's rabbitmq-server is there.
check_installed() {
	local server=/usr/sbin/rabbitmq-server
	! in_a_chroot "$version" || server=$chroot_dir$server
	[ -x "$server" ] || die "RabbitMQ $version is not installed ($server): run RABBITMQ_VERSION=$version scripts/rabbitmq.sh install first"
}

# check_files_visible: for 4.0 and 4.3, fails if RABBITMQ_NODES_CONF names a file (…file = PATH)
# outside /tmp, which the node in the chroot would not find.
check_files_visible() {
	in_a_chroot "$version" || return 0
	local key path
	while read -r key path; do
		[[ $path != /* || $path == /tmp/* ]] ||
			die "$key = $path: RabbitMQ $version runs in $chroot_dir, which sees only /tmp of this machine; put the file under /tmp"
	done < <(printf '%s\n' "${RABBITMQ_NODES_CONF:-}" | sed -n 's/^[[:space:]]*\([^#=[:space:]]*file\)[[:space:]]*=[[:space:]]*\(.*[^[:space:]]\)[[:space:]]*$/\1 \2/p')
}

# launch N: configures node N and starts its VM unless it runs already; does not wait. For 4.0 and
# 4.3 the caller holds chroot_lock and has mounted the chroot.
launch() {
	configure "$1"
	if registered "$1"; then
		if [ -n "$config_changed" ]; then
			die "$node runs with another configuration than asked for; stop it first ($0 stop $1)"
		fi
		return 0
	fi
	# A chroot's node starts the chroot's epmd itself, on the port its env.conf names.
	in_a_chroot "$version" || sudo_if_needed epmd -daemon
	log "starting $node (RabbitMQ $version, amqp 127.0.0.1:${amqp_port}, management 127.0.0.1:${management_port}, dir $dir)"
	if in_a_chroot "$version"; then
		# Without the lock's descriptor: the VM would hold the lock as long as it runs.
		cli "$1" rabbitmq-server -detached {chroot_lock_fd}<&-
	else
		cli "$1" rabbitmq-server -detached
	fi
}

# await N: waits until node N has booted and its management API answers.
await() {
	node_vars "$1"
	local deadline=$((SECONDS + wait_seconds))
	# await_startup fails at once while the node is still booting, so retry it.
	until ctl "$1" await_startup --timeout 10 >/dev/null 2>&1 && answers "$1"; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			die "$node did not start within ${wait_seconds}s; its log: $dir/log/"
		fi
		sleep 1
	done
}

start() {
	local n started=$SECONDS
	check_installed
	check_files_visible
	local other
	for n in "$@"; do
		for other in "${rabbitmq_versions[@]}"; do
			[ "$other" != "$version" ] || continue
			if registered "$n" "$other"; then
				die "$node runs on RabbitMQ $other, on the same ports; stop it first (RABBITMQ_VERSION=$other $0 stop $n)"
			fi
		done
	done
	if in_a_chroot "$version"; then
		# Held until the VMs are registered with the chroot's epmd, so that release_chroot (the
		# shared node or another fault node stopping) cannot unmount under them meanwhile.
		chroot_lock
		mount_chroot
		chroot_hosts
	fi
	for n in "$@"; do launch "$n"; done
	if in_a_chroot "$version"; then
		for n in "$@"; do
			node_vars "$n"
			await_chroot_node "$short"
		done
		chroot_unlock
	fi
	for n in "$@"; do await "$n"; done
	log "running: $(for n in "$@"; do node_vars "$n" && printf '%s ' "$node"; done)($((SECONDS - started))s)"
}

# member N FIRST: whether node N is in the cluster of node FIRST. 3.10 keeps its members in Mnesia,
# which rabbit_mnesia tells; 4.3 in Khepri and 4.0 in Mnesia (Khepri off by default), whose members
# rabbit_nodes tells either way (it has no list_members in 3.10).
member() {
	node_vars "$2"
	local first=$node members='rabbit_nodes:list_members()'
	[ "$version" != 3.10 ] || members='rabbit_mnesia:cluster_nodes(all)'
	[ "$(ctl "$1" eval "lists:member('${first}', ${members})." 2>/dev/null)" = true ]
}

# ctl_quiet N ARGS...: ctl, showing its output (log lines the CLI prints even when all goes
# well) only when it fails.
ctl_quiet() {
	local output
	if ! output=$(ctl "$@" 2>&1); then
		log "rabbitmqctl -n $name_prefix$1@localhost ${*:2} failed:"
		echo "$output" >&2
		return 1
	fi
}

cluster() {
	[ "$#" -ge 2 ] || die "cluster needs at least two nodes"
	start "$@"
	local first=$1 n started=$SECONDS joining=() pids=()
	node_vars "$first"
	local first_node=$node
	for n in "${@:2}"; do
		member "$n" "$first" || joining+=("$n")
	done
	[ "${#joining[@]}" -gt 0 ] || return 0
	log "joining $name_prefix{$(
		IFS=,
		echo "${joining[*]}"
	)}@localhost to $first_node"
	# Stopping and starting the app take seconds each, so the nodes do that together; the joins
	# themselves go one at a time.
	for n in "${joining[@]}"; do
		ctl_quiet "$n" stop_app &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid" || die "stop_app failed"; done
	for n in "${joining[@]}"; do
		ctl_quiet "$n" reset || die "reset failed"
		ctl_quiet "$n" join_cluster "$first_node" || die "join_cluster failed"
	done
	pids=()
	for n in "${joining[@]}"; do
		ctl_quiet "$n" start_app &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid" || die "start_app failed"; done
	for n in "${joining[@]}"; do await "$n"; done
	log "cluster of $first_node and $(($# - 1)) more ready ($((SECONDS - started))s to join)"
}

os_pid() {
	node_vars "$1"
	registered "$1" || die "$node is not running"
	# The node itself says: its command line does not name it, and a pid file outlives a crash.
	local pid
	pid=$(ctl "$1" eval 'list_to_integer(os:getpid()).') || die "$node did not tell its OS pid"
	[[ $pid =~ ^[0-9]+$ ]] || die "$node answered '$pid' for its OS pid"
	echo "$pid"
}

# wait_gone N: waits until node N's VM has ended.
wait_gone() {
	node_vars "$1"
	local deadline=$((SECONDS + wait_seconds))
	while registered "$1"; do
		[ "$SECONDS" -lt "$deadline" ] || die "$node still runs ${wait_seconds}s after being stopped"
		sleep 0.2
	done
}

stop() {
	local n pids=() stopping=()
	# Each stop takes seconds, so the nodes stop together.
	for n in "$@"; do
		registered "$n" || continue
		ctl_quiet "$n" stop &
		pids+=($!)
		stopping+=("$n")
	done
	for pid in "${pids[@]}"; do wait "$pid" || die "rabbitmqctl stop failed"; done
	for n in "${stopping[@]}"; do
		wait_gone "$n"
		log "stopped $node"
	done
	# Once no node runs in the chroot, neither these nor the shared one, its mounts go.
	if in_a_chroot "$version"; then release_chroot quiet; fi
}

kill_nodes() {
	local n pid
	for n in "$@"; do
		pid=$(os_pid "$n")
		node_vars "$n"
		sudo_if_needed kill -9 "$pid"
		wait_gone "$n"
		log "killed $node (pid $pid)"
	done
}

rebalance() {
	node_vars "$1"
	local output
	output=$(cli "$1" rabbitmq-queues -n "$node" rebalance quorum 2>&1) || {
		echo "$output" >&2
		die "rabbitmq-queues -n $node rebalance quorum failed"
	}
	log "rebalanced the quorum queue leaders of $node's cluster"
}

status() {
	local n
	for n in "$@"; do
		registered "$n" && answers "$n" || return 1
	done
}

# metadata N: prints, without failing, how node N sees its cluster's metadata store: its running
# nodes, and on 4.x whether Khepri holds the metadata, the store's members the node knows locally
# (what a quorum queue's declaration checks it is among) and the local store server's pid, or
# undefined when it is down. A failed fault test prints it.
metadata() {
	local expr='{node(), rabbit_mnesia:cluster_nodes(running)}'
	[ "$version" = 3.10 ] || expr='{node(), rabbit_nodes:list_running(), rabbit_khepri:is_enabled(), rabbit_khepri:locally_known_nodes(), whereis(rabbitmq_metadata)}'
	ctl "$1" eval "$expr." 2>&1 | tr -s ' \n' ' ' || true
	echo
}

describe() {
	node_vars "$1"
	cat <<EOF
node=$node
amqp_url=amqp://guest:guest@127.0.0.1:${amqp_port}/
management_url=http://127.0.0.1:${management_port}
management_tls_port=${management_tls_port}
dir=$dir
log=$dir/log/$node.log
EOF
}

delete() {
	stop "$@"
	local n
	for n in "$@"; do
		node_vars "$n"
		sudo_if_needed rm -rf "$dir"
	done
}

usage() {
	echo "usage: $0 start|cluster|stop|kill|status|delete N... | pid|rebalance|describe|metadata N   (N = 1…99)" >&2
	exit 2
}

[ "$#" -ge 2 ] || usage
command=$1
shift
for n in "$@"; do check_number "$n"; done
case "$command" in
start) start "$@" ;;
cluster) cluster "$@" ;;
stop) stop "$@" ;;
kill) kill_nodes "$@" ;;
pid) os_pid "$1" ;;
rebalance) rebalance "$1" ;;
status) status "$@" ;;
describe) describe "$1" ;;
metadata) metadata "$1" ;;
delete) delete "$@" ;;
*) usage ;;
esac
