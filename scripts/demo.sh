#!/usr/bin/env bash
# `make demo`: applies examples/demo with the provider built from this checkout against the
# local RabbitMQ, then publishes messages with different delays and shows when they arrive.
# Idempotent: a second run finds the set in place (terraform apply is then a no-op).
# Nothing is downloaded: terraform runs the provider through dev_overrides, without init.
#
# Environment: RABBITMQ_AMQP_URL (amqp://guest:guest@127.0.0.1:5672/), DEMO_ARGS (extra
# cmd/delaydemo flags, e.g. DEMO_ARGS='-delays 0s,2s,7s'), DEMO_MARKDOWN (a results file the report
# is also written to, with the commit, machine and versions: DEMO_MARKDOWN=benchmarks/demo.md).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
example=examples/demo
tools=$repo/.tools
route_queue=demo.work # the route's destination in examples/demo/main.tf

step() { echo "==> $*" >&2; }

step "starting the local RabbitMQ (scripts/rabbitmq.sh start)"
scripts/rabbitmq.sh start

terraform=$(scripts/terraform.sh)

step "building the provider (scripts/dev-overrides.sh) and cmd/delaydemo into ${tools#"$repo"/}/bin"
mkdir -p "$tools/bin"
go build -o "$tools/bin/delaydemo" ./cmd/delaydemo

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

step "publishing delayed messages and waiting for them (cmd/delaydemo)"
report=()
if [ -n "${DEMO_MARKDOWN:-}" ]; then
	report=(-markdown "$DEMO_MARKDOWN" -terraform "$terraform")
fi
# shellcheck disable=SC2086 # DEMO_ARGS is a list of flags
"$tools/bin/delaydemo" -tf-output "$outputs" "${report[@]}" ${DEMO_ARGS:-}
