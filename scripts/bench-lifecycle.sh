#!/usr/bin/env bash
# What a user meets, timed: terraform apply, plan, switch and destroy of the README's set (max_delay
# 36h, quorum, 17 levels), of a radix-16 set of the same delay, and of SETS (100) such sets in one
# configuration, against the local broker of scripts/rabbitmq.sh (RABBITMQ_VERSION, its ports and
# RABBITMQ_STATISTICS_SECONDS as the broker runs; RabbitMQ's default is 5 s). Each step runs RUNS
# (3) times; the table gives every run, the median and the load average of each run. A destroy
# comes 15 s after the apply before it, as for a set in use, whose queues have statistics; the
# destroy right after a creation is a row of its own.
#
#   scripts/bench-lifecycle.sh OUTPUT.md
#
# Environment: RABBITMQ_VERSION (4.3), RABBITMQ_MANAGEMENT_PORT (15672), RUNS (3), SETS (100;
# 0 skips the many-sets steps), BENCH_PREFIX (bench-lifecycle: the sets' names, so that two runs can
# share a broker), BENCH_AMQP_COUNTS (1; 0 counts by statistics alone: the provider's
# amqp_counts = false, for comparing the two ways of checking a quorum queue before its deletion),
# STEPS (all; many: the many-sets steps alone; fresh: the README's set's destroy right after its
# creation alone; floor: the broker's own cost of the many sets' quorum queues, declared and then
# deleted one at a time straight to the management API, by one curl over one connection, with no
# check, which the one-at-a-time quorum deletion of a destroy cannot beat, then declared again 10
# at a time, as a create's parallel requests may; switch: the README's set's empty switch to radix 16
# right after its creation and 15 s after it), BENCH_TRACE (0; 1 runs the many-sets destroy and STEPS=fresh's with the provider's debug log and
# adds where its time went: requests, waits, the gaps between quorum queue deletions), BENCH_FLOOR (0; 1
# adds to the many-sets steps the broker's floor of their requests: teardown_floor).
set -euo pipefail
output=${1:?usage: scripts/bench-lifecycle.sh OUTPUT.md}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
runs=${RUNS:-3}
sets=${SETS:-100}
amqp_counts=${BENCH_AMQP_COUNTS:-1}
prefix=${BENCH_PREFIX:-bench-lifecycle}
steps=${STEPS:-all}
trace=${BENCH_TRACE:-0}
floor_too=${BENCH_FLOOR:-0}
case $steps in all | many | fresh | floor | switch) ;; *) echo "bench-lifecycle: STEPS must be all, many, fresh, floor or switch" >&2; exit 2 ;; esac
case $steps in many | floor) [ "$sets" -gt 0 ] || { echo "bench-lifecycle: STEPS=$steps needs SETS above 0" >&2; exit 2; } ;; esac
[[ $prefix =~ ^[a-z][a-z0-9-]*$ ]] || { echo "bench-lifecycle: BENCH_PREFIX must be lower-case letters, digits and dashes" >&2; exit 2; }
port=${RABBITMQ_MANAGEMENT_PORT:-15672}
export CHECKPOINT_DISABLE=1
unset TF_ACC_TERRAFORM_VERSION

terraform=$(scripts/terraform.sh)
# The commit the provider is built from, now: the tree may move while the runs go on.
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- internal || echo ' (internal/ changed)')
TF_CLI_CONFIG_FILE=$(scripts/dev-overrides.sh)
export TF_CLI_CONFIG_FILE
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

disable=""
[ "$amqp_counts" = 1 ] || disable="  amqp_counts = false"

# config DIR COUNT RADIX: COUNT sets of the README's kind in DIR/main.tf.
config() {
	local dir=$1 count=$2 radix=$3
	mkdir -p "$dir"
	cat >"$dir/main.tf" <<EOF
terraform {
  required_providers {
    rabbitmq = { source = "delayqueue/rabbitmq" }
  }
}

provider "rabbitmq" {
  endpoint = "http://127.0.0.1:$port"
  username = "guest"
  password = "guest"
$disable
}

resource "rabbitmq_delay_queue_set" "retries" {
  count     = $count
  name      = "$prefix-\${count.index}"
  max_delay = "36h"
  radix     = $radix
  route {
    destination      = "amq.topic"
    destination_type = "exchange"
    key              = "orders"
  }
}
EOF
}

# timed NAME COMMAND...: runs the command, quietly, and appends NAME, seconds and load (tab-separated)
# to results.
results=$work/results
timed() {
	local name=$1
	shift
	local load started
	load=$(cut -d' ' -f1 /proc/loadavg)
	started=$(date +%s.%N)
	"$@" >"$work/last.log" 2>&1 || {
		tail -n 40 "$work/last.log" >&2
		echo "bench-lifecycle: $name failed" >&2
		exit 1
	}
	local seconds
	seconds=$(awk -v a="$(date +%s.%N)" -v b="$started" 'BEGIN { printf "%.2f", a - b }')
	printf '%s\t%s\t%s\n' "$name" "$seconds" "$load" >>"$results"
	echo "bench-lifecycle: $name ${seconds}s (load $load)" >&2
}

tf() { "$terraform" -chdir="$1" "${@:2}" -input=false -no-color; }

# readme_steps RUN: the README's set's and the radix-16 set's steps.
readme_steps() {
	local one=$work/one-$1
	config "$one" 1 2
	timed "create the README's set" tf "$one" apply -auto-approve
	timed "plan the README's set" tf "$one" plan -detailed-exitcode
	config "$one" 1 16
	timed "switch it to radix 16 (empty)" tf "$one" apply -auto-approve
	timed "destroy the switched set" tf "$one" destroy -auto-approve
	config "$one" 1 2
	tf "$one" apply -auto-approve >/dev/null
	timed "destroy the README's set right after its creation" tf "$one" destroy -auto-approve
	tf "$one" apply -auto-approve >/dev/null
	sleep 15 # a set in use: its queues have statistics
	timed "destroy the README's set" tf "$one" destroy -auto-approve
	config "$one" 1 16
	timed "create a radix-16 set" tf "$one" apply -auto-approve
	sleep 15
	timed "destroy a radix-16 set" tf "$one" destroy -auto-approve
}

# timed_destroy NAME DIR RUN: DIR's destroy, timed as NAME; with BENCH_TRACE=1 under the provider's
# debug log, and where its time went added to the traces.
timed_destroy() {
	local name=$1 dir=$2 run=$3
	if [ "$trace" != 1 ]; then
		timed "$name" tf "$dir" destroy -auto-approve
		return
	fi
	timed "$name (debug log)" env TF_LOG_PROVIDER=DEBUG TF_LOG_PATH="$dir/trace.log" \
		"$terraform" -chdir="$dir" destroy -auto-approve -input=false -no-color
	trace_summary "$run" "$dir/trace.log" >>"$work/traces"
}

# fresh_destroy RUN: the README's set destroyed right after its creation.
fresh_destroy() {
	local one=$work/one-$1
	config "$one" 1 2
	tf "$one" apply -auto-approve >/dev/null
	timed_destroy "destroy the README's set right after its creation" "$one" "$1"
}

# switch_steps RUN: the README's set switched to radix 16 right after its creation, and 15 s after
# it (a set in use, whose queues have statistics).
switch_steps() {
	local one=$work/switch-$1
	config "$one" 1 2
	tf "$one" apply -auto-approve >/dev/null
	config "$one" 1 16
	timed "switch the README's set to radix 16 right after its creation (empty)" tf "$one" apply -auto-approve
	tf "$one" destroy -auto-approve >/dev/null
	config "$one" 1 2
	tf "$one" apply -auto-approve >/dev/null
	sleep 15
	config "$one" 1 16
	timed "switch the README's set to radix 16 15 s after its creation (empty)" tf "$one" apply -auto-approve
	tf "$one" destroy -auto-approve >/dev/null
}

# many_steps RUN: SETS README sets in one configuration, each command's broker CPU beside it; with
# BENCH_FLOOR=1 their objects then created and deleted straight to the management API
# (teardown_floor).
many_steps() {
	local many=$work/many-$1
	config "$many" "$sets" 2
	with_broker_cpu "create $sets README sets" tf "$many" apply -auto-approve
	[ "$floor_too" != 1 ] || objects_of_sets >"$many/objects.json"
	with_broker_cpu "plan $sets README sets" tf "$many" plan -detailed-exitcode
	sleep 15
	with_broker_cpu timed_destroy "destroy $sets README sets" "$many" "$1"
	[ "$floor_too" != 1 ] || teardown_floor "$many"
}

# with_broker_cpu [timed_destroy] NAME ARGS...: the step, timed as NAME, and rows of the CPU seconds
# that the broker's Erlang VM (all its threads) and the step's own processes (terraform and the
# provider, or curl) spent meanwhile, of the 2 cores' 2 seconds per second.
with_broker_cpu() {
	local runner=timed
	if [ "$1" = timed_destroy ]; then
		runner=timed_destroy
		shift
	fi
	local name=$1 broker_before client_before load
	broker_before=$(broker_cpu)
	client_before=$(children_cpu)
	"$runner" "$@"
	load=$(cut -d' ' -f1 /proc/loadavg)
	printf '%s\t%s\t%s\n' "broker CPU, seconds: $name" "$(awk -v a="$(broker_cpu)" -v b="$broker_before" 'BEGIN { printf "%.2f", a - b }')" "$load" >>"$results"
	printf '%s\t%s\t%s\n' "client CPU, seconds: $name" "$(awk -v a="$(children_cpu)" -v b="$client_before" 'BEGIN { printf "%.2f", a - b }')" "$load" >>"$results"
}

# children_cpu: the CPU seconds so far of this script's children that ended (terraform counts its
# provider's).
children_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($14 + $15) / hz }' "/proc/$$/stat"
}

# broker_cpu: the user and system CPU seconds so far of the Erlang VM listening on the management port.
broker_cpu() {
	local pid
	pid=$(ss -Hltnp "sport = :$port" | sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -n 1)
	[ -n "$pid" ] || { echo "bench-lifecycle: no process listens on port $port" >&2; exit 1; }
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$pid/stat"
}

# objects_of_sets: the exchanges, queues and bindings of the sets named with the prefix, as the
# broker's definitions give them.
objects_of_sets() {
	curl -fsS -u guest:guest "http://127.0.0.1:$port/api/definitions/%2F" |
		jq -c --arg prefix "$prefix-" '{
			exchanges: [.exchanges[] | select(.name | startswith($prefix))],
			queues: [.queues[] | select(.name | startswith($prefix))],
			bindings: [.bindings[] | select(.source | startswith($prefix))]
		}'
}

# teardown_floor DIR: the sets of DIR/objects.json declared and then deleted straight to the
# management API, with no check, as a create and a destroy send their requests: declarations 10 at a
# time (Terraform's parallelism), exchanges, queues, then bindings; the ingest exchanges, the
# bindings into the queues (from the done exchanges: the ingest's go with it) 10 at a time, the quorum
# queues one at a time, as a destroy must (the dets race), then the other exchanges 10 at a time.
# Each group is one curl process whose operations share its connections; the whole is timed, with
# the broker's CPU.
teardown_floor() {
	local dir=$1 api="http://127.0.0.1:$port/api"
	local common=$'user = "guest:guest"\nfail\nsilent\nshow-error\noutput = "/dev/null"'
	jq -r --arg api "$api" --arg common "$common" '
		[(.exchanges[] | "url = \"\($api)/exchanges/%2F/\(.name | @uri)\"\nrequest = \"PUT\"\nheader = \"content-type: application/json\"\ndata = \({type, durable, auto_delete, internal, arguments} | tojson | tojson)\n\($common)")] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/declare-exchanges.curl"
	jq -r --arg api "$api" --arg common "$common" '
		[(.queues[] | "url = \"\($api)/queues/%2F/\(.name | @uri)\"\nrequest = \"PUT\"\nheader = \"content-type: application/json\"\ndata = \({durable, auto_delete, arguments} | tojson | tojson)\n\($common)")] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/declare-queues.curl"
	jq -r --arg api "$api" --arg common "$common" '
		[(.bindings[] | "url = \"\($api)/bindings/%2F/e/\(.source | @uri)/\(if .destination_type == "queue" then "q" else "e" end)/\(.destination | @uri)\"\nrequest = \"POST\"\nheader = \"content-type: application/json\"\ndata = \({routing_key, arguments} | tojson | tojson)\n\($common)")] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/declare-bindings.curl"
	local parallel=(--parallel --parallel-immediate --parallel-max 10)
	floor_create() {
		curl "${parallel[@]}" -K "$dir/declare-exchanges.curl"
		curl "${parallel[@]}" -K "$dir/declare-queues.curl"
		curl "${parallel[@]}" -K "$dir/declare-bindings.curl"
	}
	local count
	count=$(jq '[.exchanges, .queues, .bindings] | map(length) | add' "$dir/objects.json")
	with_broker_cpu "floor: declare the $count objects of $sets sets 10 at a time" floor_create
	# The deletions, from the broker as the sets now are (the properties keys of their bindings).
	curl -fsS -u guest:guest "$api/bindings/%2F" |
		jq -c --arg prefix "$prefix-" '[.[] | select((.source | startswith($prefix)) and (.source | endswith(".done")) and .destination_type == "queue")]' >"$dir/into-queues.json"
	jq -r --arg api "$api" --arg common "$common" '[.exchanges[] | select(.name | endswith(".ingest")) | "url = \"\($api)/exchanges/%2F/\(.name | @uri)\"\nrequest = \"DELETE\"\n\($common)"] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/delete-entries.curl"
	jq -r --arg api "$api" --arg common "$common" '[.[] | "url = \"\($api)/bindings/%2F/e/\(.source | @uri)/q/\(.destination | @uri)/\(.properties_key | @uri)\"\nrequest = \"DELETE\"\n\($common)"] | join("\nnext\n")' \
		"$dir/into-queues.json" >"$dir/delete-bindings.curl"
	jq -r --arg api "$api" --arg common "$common" '[.queues[] | "url = \"\($api)/queues/%2F/\(.name | @uri)\"\nrequest = \"DELETE\"\n\($common)"] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/delete-queues.curl"
	jq -r --arg api "$api" --arg common "$common" '[.exchanges[] | select(.name | endswith(".ingest") | not) | "url = \"\($api)/exchanges/%2F/\(.name | @uri)\"\nrequest = \"DELETE\"\n\($common)"] | join("\nnext\n")' \
		"$dir/objects.json" >"$dir/delete-exchanges.curl"
	floor_delete() {
		curl "${parallel[@]}" -K "$dir/delete-entries.curl"
		curl "${parallel[@]}" -K "$dir/delete-bindings.curl"
		curl -K "$dir/delete-queues.curl"
		curl "${parallel[@]}" -K "$dir/delete-exchanges.curl"
	}
	sleep 15
	with_broker_cpu "floor: delete them as a destroy does, $(jq length "$dir/into-queues.json") bindings into queues, no check" floor_delete
}

# floor_steps RUN: SETS README sets created by terraform; then their quorum queues, as the broker
# has them, deleted, declared again and deleted again one at a time by one curl process (a
# connection kept open), and declared again 10 at a time, each group of requests timed; then
# terraform destroys the sets.
floor_steps() {
	local floor=$work/floor-$1 api="http://127.0.0.1:$port/api"
	config "$floor" "$sets" 2
	tf "$floor" apply -auto-approve >/dev/null
	curl -fsS -u guest:guest "$api/queues/%2F?columns=name,arguments,durable" |
		jq -c --arg prefix "$prefix-" '[.[] | select((.name | startswith($prefix)) and .arguments["x-queue-type"] == "quorum")]' >"$floor/queues.json"
	local count
	count=$(jq length "$floor/queues.json")
	# A curl config per group: each queue an operation of its own ("next" resets every option), in
	# one process, whose connections the operations share.
	jq -r --arg api "$api" '[.[] | "url = \"\($api)/queues/%2F/\(.name | @uri)\"\nrequest = \"DELETE\"\nuser = \"guest:guest\"\nfail\nsilent\nshow-error\noutput = \"/dev/null\""] | join("\nnext\n")' \
		"$floor/queues.json" >"$floor/delete.curl"
	jq -r --arg api "$api" '[.[] | "url = \"\($api)/queues/%2F/\(.name | @uri)\"\nrequest = \"PUT\"\nuser = \"guest:guest\"\nfail\nsilent\nshow-error\nheader = \"content-type: application/json\"\ndata = \({durable, arguments} | tojson | tojson)\noutput = \"/dev/null\""] | join("\nnext\n")' \
		"$floor/queues.json" >"$floor/declare.curl"
	curl -K "$floor/delete.curl"
	timed "floor: declare the $count quorum queues of $sets sets one at a time" curl -K "$floor/declare.curl"
	sleep 15
	timed "floor: delete the $count quorum queues of $sets sets one at a time" curl -K "$floor/delete.curl"
	# A create may declare at once what a destroy must delete in turn: Terraform's parallelism (10).
	timed "floor: declare the $count quorum queues of $sets sets 10 at a time" curl --silent --show-error --parallel --parallel-immediate --parallel-max 10 -K "$floor/declare.curl"
	tf "$floor" destroy -auto-approve >/dev/null
}

# trace_summary RUN LOG: where a traced destroy's time went, from the provider's debug log: the
# checks before the deletions (HeldMessages) and the Applies (requests, durations), and the quorum
# queue deletions (when the first came after the log's first line, the gaps between them).
trace_summary() {
	awk -v run="$1" '
	function secs(ts) { split(substr(ts, 12, 12), p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }
	function field(name,   i) { for (i = 1; i <= NF; i++) if (index($i, name "=") == 1) return substr($i, length(name) + 2); return "" }
	function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	                                   return n ? a[int((n + 1) / 2)] : 0 }
	NR == 1 { start = secs($1) }
	/RabbitMQ management API: held messages/ { h++; hreq += field("requests"); hd[h] = field("duration_ms") + 0 }
	/RabbitMQ management API: apply/ { a++; areq += field("requests"); ad[a] = field("duration_ms") + 0 }
	/waiting for another quorum queue deletion/ { waits++ }
	/deleted a queue its check found empty/ && field("type") == "quorum" { t = secs($1); if (d) gaps[d] = (t - last) * 1000; else first = t - start; last = t; d++ }
	END { printf "- run %s: %d checks before deletions, %d requests, median %d ms; %d Applies, %d requests, median %d ms;", run, h, hreq, median(hd, h), a, areq, median(ad, a)
	      printf " %d quorum queues deleted after their checks, the first %.1f s after the log began, median gap %.1f ms; %d waits for the turn logged\n", d, first, median(gaps, d - 1), waits }
	' "$2"
}

for run in $(seq "$runs"); do
	case $steps in
	all)
		readme_steps "$run"
		[ "$sets" -eq 0 ] || many_steps "$run"
		;;
	many) many_steps "$run" ;;
	fresh) fresh_destroy "$run" ;;
	floor) floor_steps "$run" ;;
	switch) switch_steps "$run" ;;
	esac
done

version=$(curl -fsS -u guest:guest "http://127.0.0.1:$port/api/overview?columns=rabbitmq_version" | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p')
statistics=${RABBITMQ_STATISTICS_SECONDS:-5}
{
	echo "# Lifecycle of a set, as terraform runs it: RabbitMQ $version"
	echo
	echo "Written by \`scripts/bench-lifecycle.sh\` at commit $commit,"
	echo "$(date -u +%Y-%m-%d) on $(uname -m), $(nproc) CPUs; RabbitMQ $version, statistics every ${statistics} s;"
	echo "$("$terraform" version | head -n 1); checks before a quorum deletion: $([ "$amqp_counts" = 1 ] && echo "the leader's count over AMQP (amqp_counts = true)" || echo "statistics alone (amqp_counts = false)")."
	echo "The README's set: max_delay 36h, quorum, one route (17 levels); radix 16: the same delay; $runs runs, seconds;"
	echo "steps: $steps (STEPS); management API on port $port; the machine is shared, so the load of each run is given."
	echo
	echo "| step | median | runs | load average (1 min) at each run |"
	echo "|---|--:|---|---|"
	awk -F'\t' '{ name = $1; if (!(name in seen)) { order[++k] = name; seen[name] = 1 }
	       times[name] = times[name] (times[name] == "" ? "" : ", ") sprintf("%.1f", $2)
	       loads[name] = loads[name] (loads[name] == "" ? "" : ", ") $3; vals[name, ++c[name]] = $2 + 0 }
	     END { for (i = 1; i <= k; i++) { name = order[i]; m = c[name]
	             for (a = 1; a <= m; a++) s[a] = vals[name, a]
	             for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (s[b] < s[a]) { t = s[a]; s[a] = s[b]; s[b] = t }
	             printf "| %s | %.1f | %s | %s |\n", name, s[int((m + 1) / 2)], times[name], loads[name] } }' "$results"
	if [ -s "$work/traces" ]; then
		echo
		echo "Where the traced destroys' time went (TF_LOG_PROVIDER=DEBUG):"
		echo
		cat "$work/traces"
	fi
} >"$output"
echo "bench-lifecycle: wrote $output" >&2
