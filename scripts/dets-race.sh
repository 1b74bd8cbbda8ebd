#!/usr/bin/env bash
# Why the provider deletes quorum queues one at a time (internal/broker, Client.quorumDeletions): runs
# scripts/dets_race.erl — what Ra's directory does to its dets table while quorum queues come and
# go on a node — in the Erlang of each installed RabbitMQ version, with each number of processes
# in DETS_WORKERS, RUNS times with select_delete (what Ra 2.13.3 and later, RabbitMQ 3.13.5 and
# later, run for a member deleted twice) and RUNS times without, and writes a table of what each
# run left: the table intact, or corrupt (dets premature_eof, after which the table refuses every
# request until it is opened again). 8 processes stand for quorum queues deleted and declared 8 at
# a time; 2 for one deletion at a time, whose member is deleted twice at once.
#
#   scripts/dets-race.sh [VERSION...]    3.10, 4.0, 4.3 (default: every one installed)
#
# Environment: DETS_MARKDOWN (benchmarks/dets-race.md), DETS_WORKERS ("8 2"), DETS_ROUNDS (5000),
# DETS_RUNS (3).
set -euo pipefail
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.."

log() { echo "dets-race.sh: $*" >&2; }
die() {
	log "$*"
	exit 1
}
sudo_if_needed() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}
# shellcheck source=scripts/rabbitmq-chroot.sh
. scripts/rabbitmq-chroot.sh

markdown=${DETS_MARKDOWN:-benchmarks/dets-race.md}
read -r -a workers <<<"${DETS_WORKERS:-8 2}"
rounds=${DETS_ROUNDS:-5000}
runs=${DETS_RUNS:-3}
[ "$#" -gt 0 ] || set -- "${rabbitmq_versions[@]}"

# work_dir VERSION: where VERSION's Erlang runs the race: a directory holding dets_race.erl, made
# once, on this machine for 3.10 and inside the chroot for 4.0 and 4.3 (removed at the end).
work_dir() {
	if in_a_chroot "$1"; then echo "$(chroot_select "$1" && echo "$chroot_dir")/root/dets-race"; else echo "$host_dir"; fi
}

# erl_in VERSION ARGS...: runs ARGS (erlc, erl) in VERSION's Erlang, in its work_dir; fails when
# that Erlang is not installed.
erl_in() {
	local version=$1
	shift
	if ! in_a_chroot "$version"; then
		command -v erl >/dev/null || return 1
		(cd "$host_dir" && "$@")
		return
	fi
	(
		chroot_select "$version"
		[ -x "$chroot_dir/usr/bin/erl" ] || exit 1
		in_chroot sh -c 'cd /root/dets-race && "$@"' sh "$@"
	)
}

host_dir=$(mktemp -d -t dets-race.XXXXXX)
chroot_dirs=()
cleanup() {
	rm -rf "$host_dir"
	if [ "${#chroot_dirs[@]}" -gt 0 ]; then sudo_if_needed rm -rf "${chroot_dirs[@]}"; fi
}
trap cleanup EXIT

rows=()
for version in "$@"; do
	check_version "$version"
	dir=$(work_dir "$version")
	if [ "$dir" != "$host_dir" ] && [ -d "$(dirname "$dir")" ]; then
		sudo_if_needed mkdir -p "$dir"
		chroot_dirs+=("$dir")
	fi
	[ ! -d "$dir" ] || sudo_if_needed cp scripts/dets_race.erl "$dir/"
	otp=$(erl_in "$version" erl -noshell -eval '{ok, V} = file:read_file(filename:join([code:root_dir(), "releases", erlang:system_info(otp_release), "OTP_VERSION"])), io:format("~s", [string:trim(V)]), halt().' 2>/dev/null) ||
		{
			log "RabbitMQ $version's Erlang is not installed: skipped"
			continue
		}
	erl_in "$version" erlc dets_race.erl
	for processes in "${workers[@]}"; do
		for mode in select_delete plain; do
			results=()
			for run in $(seq 1 "$runs"); do
				result=$(erl_in "$version" erl -noshell -run dets_race run names.dets "$processes" "$rounds" "$mode" 2>&1 | tail -n 1)
				[ -n "$result" ] || die "RabbitMQ $version, $processes processes, $mode, run $run printed nothing"
				log "RabbitMQ $version (Erlang $otp), $processes processes, $mode, run $run: $result"
				results+=("$result")
			done
			rows+=("| $version | $otp | $processes | $mode | $(printf '%s; ' "${results[@]}" | sed 's/; $//') |")
		done
	done
done
[ "${#rows[@]}" -gt 0 ] || die "no RabbitMQ version's Erlang is installed"

commit=$(git rev-parse --short=12 HEAD)
git diff --quiet HEAD -- scripts/dets_race.erl scripts/dets-race.sh || commit="$commit (with uncommitted changes to the race)"
{
	echo "# dets select_delete beside other writers"
	echo
	echo "Measured at commit $commit on $(date -u '+%Y-%m-%d %H:%M UTC'). Machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM, $(uname -m), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
	echo "Written by \`scripts/dets-race.sh\`: processes share one dets table, each $rounds rounds of insert, lookup and delete of a name of its own, with or without a select_delete of that name's id after the delete (what Ra's directory runs for a quorum queue member deleted twice, from Ra 2.13.3: RabbitMQ 3.13.5 and later; RabbitMQ 3.10.8's Ra 2.2.0 never runs it, so its row is its Erlang's alone). Each cell is one run: intact after all rounds, or the round at which a request first answered an error."
	echo
	echo "| RabbitMQ's Erlang | OTP | processes | mode | runs |"
	echo "|---|---|--:|---|---|"
	printf '%s\n' "${rows[@]}"
} >"$markdown"
log "wrote $markdown"
