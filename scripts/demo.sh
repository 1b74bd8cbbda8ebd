#!/usr/bin/env bash
# `make demo`: applies examples/demo with the provider built from this checkout against the
# local RabbitMQ, then publishes messages with different delays and shows when they arrive:
# first through the binary set, then through the radix-16 set, one report each. It exits 1
# if either run saw a message early, twice or not at all.
# Idempotent: a second run finds the sets in place (terraform apply is then a no-op).
# Nothing is downloaded: terraform runs the provider through dev_overrides, without init.
#
# Environment: RABBITMQ_VERSION, RABBITMQ_AMQP_PORT and RABBITMQ_MANAGEMENT_PORT (the local broker,
# as scripts/rabbitmq.sh starts it), RABBITMQ_ENDPOINT (http://127.0.0.1:RABBITMQ_MANAGEMENT_PORT;
# when it is not examples/demo's http://127.0.0.1:15672, examples/demo/endpoint_override.tf, which
# git ignores, points the provider at it), RABBITMQ_AMQP_URL
# (amqp://guest:guest@127.0.0.1:RABBITMQ_AMQP_PORT/), DEMO_ARGS (extra
# benchmarks/cmd/delaydemo flags for both runs, e.g. DEMO_ARGS='-delays 0s,2s,7s'), DEMO_MARKDOWN (a results
# file the binary set's report is also written to, with the commit, machine and versions:
# DEMO_MARKDOWN=benchmarks/demo.md; the radix-16 set's goes beside it, benchmarks/demo-radix16.md).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
example=examples/demo
tools=$repo/.tools
route_queue=demo.work # the route's destination in examples/demo/main.tf

step() { echo "==> $*" >&2; }

step "starting the local RabbitMQ (scripts/rabbitmq.sh start)"
scripts/rabbitmq.sh start

export RABBITMQ_ENDPOINT=${RABBITMQ_ENDPOINT:-http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT:-15672}}
export RABBITMQ_AMQP_URL=${RABBITMQ_AMQP_URL:-amqp://guest:guest@127.0.0.1:${RABBITMQ_AMQP_PORT:-5672}/}
# examples/demo/main.tf names the local broker's default endpoint; an override file (Terraform
# merges *_override.tf over the configuration) names another.
override=$example/endpoint_override.tf
if [ "$RABBITMQ_ENDPOINT" = http://127.0.0.1:15672 ]; then
	rm -f "$override"
else
	printf '# Written by scripts/demo.sh for RABBITMQ_ENDPOINT.\nprovider "rabbitmq" {\n  endpoint = "%s"\n}\n' "$RABBITMQ_ENDPOINT" >"$override"
fi

terraform=$(scripts/terraform.sh)

step "building the provider (scripts/dev-overrides.sh) and benchmarks/cmd/delaydemo into ${tools#"$repo"/}/bin"
mkdir -p "$tools/bin"
go -C benchmarks build -o "$tools/bin/delaydemo" ./cmd/delaydemo

# dev_overrides makes terraform use the provider built from this checkout, with no init and no registry.
TF_CLI_CONFIG_FILE=$(scripts/dev-overrides.sh)
export TF_CLI_CONFIG_FILE
export CHECKPOINT_DISABLE=1
unset TF_ACC_TERRAFORM_VERSION

# terraform warns on every command that dev_overrides are in effect; that is expected here.
step "declaring the route's queue (the provider manages only the delay set)"
"$tools/bin/delaydemo" -declare-queue -queue "$route_queue"

step "$terraform -chdir=$example apply -auto-approve"
"$terraform" -chdir="$example" apply -auto-approve -input=false -no-color

outputs=$tools/demo-outputs.json
"$terraform" -chdir="$example" output -no-color -json >"$outputs"
step "terraform outputs: $(tr -d ' \n' <"$outputs" | head -c 400)"

# The outputs binary and radix16 of examples/demo/main.tf, one run each.
status=0
for set in binary radix16; do
	step "publishing delayed messages through the $set set and waiting for them (benchmarks/cmd/delaydemo -tf-set $set)"
	report=()
	if [ -n "${DEMO_MARKDOWN:-}" ]; then
		markdown=$DEMO_MARKDOWN
		[ "$set" = binary ] || markdown=${DEMO_MARKDOWN%.md}-$set.md
		report=(-markdown "$markdown" -terraform "$terraform")
	fi
	# shellcheck disable=SC2086 # DEMO_ARGS is a list of flags
	"$tools/bin/delaydemo" -tf-output "$outputs" -tf-set "$set" "${report[@]}" ${DEMO_ARGS:-} || {
		code=$?
		[ "$status" -ne 0 ] || status=$code
	}
done
exit "$status"
