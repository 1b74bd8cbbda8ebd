#!/usr/bin/env bash
# `make examples`: applies every example under examples/ (but examples/demo, which `make demo`
# runs, and examples/modules, whose own tests `make test-modules` runs) against the local RabbitMQ
# with the provider built from this checkout, runs what the example is for, and destroys it. Each
# example runs in a copy under .tools/examples/, so the tree stays clean; nothing is downloaded
# (dev_overrides, no init).
#
#   scripts/examples.sh                                      every example
#   scripts/examples.sh examples/scenarios/retry-backoff     only these
#
# What runs beyond apply and destroy:
#   examples/quickstart                           steps 3 and 4 of the quick start (docs/index.md):
#       a message published with curl arrives in its queue after five seconds, not before
#   examples/resources/rabbitmq_delay_queue_set   import.sh, import-by-string-id.tf and (Terraform 1.12
#       and later) import-by-identity-1.12.tf import the applied set again; after each the configuration
#       plans no change
#   examples/scenarios/retry-backoff              the Go consumer fails four times and succeeds on
#       the fifth, printing the waits
#   examples/scenarios/two-providers              this provider under the local name "delayq"
#       beside the community provider (cyrilgdn/rabbitmq), which cannot be installed here: see
#       without_community_provider
#   examples/scenarios/adopt-every-set            its prepare.sh declares three sets in a vhost of their
#       own outside Terraform; the apply adopts all three and changes no definition of the vhost (GET
#       /api/definitions before and after), and then the configuration plans no change
# Examples that call provider functions are skipped below Terraform 1.8, which has none; an example
# whose terraform block says `required_version = ">= X"` below X.
#
# Environment:
#   TERRAFORM             the CLI to run (default: scripts/terraform.sh's; an OpenTofu `tofu` works)
#   EXAMPLES_REAL_DELAYS  1 runs retry-backoff with its own 1s,10s,100s,500s schedule (about 10
#                         minutes) instead of 10ms,100ms,1s,5s at a 10ms resolution (about 7 s)
#   RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD (the local broker's by default:
#   http://127.0.0.1:RABBITMQ_MANAGEMENT_PORT, 15672 unless set), RABBITMQ_AMQP_URL
#   (amqp://guest:guest@127.0.0.1:RABBITMQ_AMQP_PORT/, 5672 unless set). An example that names the
#   local broker's default endpoint (http://127.0.0.1:15672) runs against RABBITMQ_ENDPOINT instead.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
tools=$repo/.tools

# The local broker's endpoint as the examples write it.
default_endpoint=http://127.0.0.1:15672
export RABBITMQ_ENDPOINT=${RABBITMQ_ENDPOINT:-http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT:-15672}}
export RABBITMQ_AMQP_URL=${RABBITMQ_AMQP_URL:-amqp://guest:guest@127.0.0.1:${RABBITMQ_AMQP_PORT:-5672}/}
export RABBITMQ_USERNAME=${RABBITMQ_USERNAME:-guest}
export RABBITMQ_PASSWORD=${RABBITMQ_PASSWORD:-guest}
export CHECKPOINT_DISABLE=1
unset TF_ACC_TERRAFORM_VERSION

step() { echo "==> [examples +$((SECONDS - started))s] $*" >&2; }
started=$SECONDS

terraform=${TERRAFORM:-$(scripts/terraform.sh)}
version=$("$terraform" version -json 2>/dev/null | sed -n 's/.*"terraform_version": *"\([0-9.]*\)[^"]*".*/\1/p')
step "$terraform, version $version"
TF_CLI_CONFIG_FILE=$(scripts/dev-overrides.sh)
export TF_CLI_CONFIG_FILE

# import.sh says `terraform`: this directory puts the CLI under test under that name.
shim=$tools/examples/bin
mkdir -p "$shim"
ln -sf "$terraform" "$shim/terraform"

# The queues each example's routes deliver to. The provider manages only delay sets, so they
# are declared before apply and deleted after destroy, through the management API.
queues_for() {
	case $1 in
	examples/resources/rabbitmq_delay_queue_set | examples/scenarios/scheduled-reminders) echo reminders.due ;;
	examples/quickstart | examples/scenarios/retry-backoff) echo orders ;;
	examples/scenarios/controller-backoff) echo controller.certificate controller.deployment ;;
	examples/scenarios/two-providers) echo invoices ;;
	esac
}

# without_community_provider: an example that also uses the community provider
# (cyrilgdn/rabbitmq) keeps that provider's part in community.tf: its provider block, the
# route's queue, and a local that refers to the queue. The community provider cannot be installed
# here (no registry, no init), so that file and its required_providers entry are left out of
# $work, the queue is declared through the management API (queues_for), and the local is
# written here as the queue's name. Everything of this provider in the example runs as written.
without_community_provider() {
	rm "$work/community.tf" || return 1
	sed -i '/^    rabbitmq = {$/,/^    }$/d' "$work/versions.tf" || return 1
	if grep -q cyrilgdn "$work"/*.tf; then
		echo "examples.sh: $example names cyrilgdn/rabbitmq outside community.tf and its versions.tf entry" >&2
		return 1
	fi
	case $example in
	examples/scenarios/two-providers) printf 'locals {\n  invoices_queue = "invoices"\n}\n' >"$work/community.tf" ;;
	*)
		echo "examples.sh: $example uses the community provider, and nothing here stands in for it" >&2
		return 1
		;;
	esac
}

# Variables that make an example fast enough for CI.
vars_for() {
	case $1 in
	examples/scenarios/retry-backoff)
		[ "${EXAMPLES_REAL_DELAYS:-}" = 1 ] || echo "-var=resolution=10ms -var=max_delay=5s"
		;;
	esac
}

queue_api() { # METHOD QUEUE [BODY]
	local url="$RABBITMQ_ENDPOINT/api/queues/%2F/$2"
	curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -X "$1" -H 'content-type: application/json' \
		${3:+--data "$3"} "$url" >/dev/null
}

# at_least VERSION: the CLI is at least that version.
at_least() {
	[ "$(printf '%s\n%s\n' "$1" "$version" | sort -V | head -n 1)" = "$1" ]
}

tf() { "$terraform" -chdir="$work" "$@"; }

# expect_no_changes: the configuration in $work plans no change.
expect_no_changes() {
	local status=0
	tf plan -detailed-exitcode -input=false -no-color $vars >"$work/plan.txt" 2>&1 || status=$?
	if [ "$status" -ne 0 ]; then
		cat "$work/plan.txt" >&2
		echo "examples.sh: $example plans changes (exit $status) where none were expected" >&2
		return 1
	fi
}

# quiet_apply applies $work, showing the output only when it fails.
quiet_apply() {
	tf apply -auto-approve -input=false -no-color $vars >"$work/apply.txt" 2>&1 || {
		cat "$work/apply.txt" >&2
		return 1
	}
}

check_import() {
	local address=rabbitmq_delay_queue_set.reminders
	step "$example: import.sh"
	tf state rm "$address" >/dev/null || return 1
	(cd "$work" && PATH="$shim:$PATH" bash "$repo/$example/import.sh") || return 1
	# Import infers levels, not max_delay: the first apply writes max_delay into state and
	# changes nothing on the broker.
	quiet_apply || return 1
	expect_no_changes || return 1

	step "$example: import-by-string-id.tf"
	tf state rm "$address" >/dev/null || return 1
	cp "$repo/$example/import-by-string-id.tf" "$work/" || return 1
	quiet_apply || return 1
	rm "$work/import-by-string-id.tf" || return 1
	expect_no_changes || return 1

	if ! at_least 1.12.0; then
		step "$example: import-by-identity-1.12.tf SKIPPED (resource identities need Terraform 1.12; this is $version)"
		return 0
	fi
	step "$example: import-by-identity-1.12.tf"
	tf state rm "$address" >/dev/null || return 1
	cp "$repo/$example/import-by-identity-1.12.tf" "$work/" || return 1
	quiet_apply || return 1
	rm "$work/import-by-identity-1.12.tf" || return 1
	expect_no_changes
}

# check_quickstart follows steps 3 and 4 of the quick start in docs/index.md: publish through the
# management API with the key the configuration outputs, and get the message from the queue once,
# and only once, five seconds have passed.
check_quickstart() {
	local key published got
	key=$(tf output -raw routing_key_in_5s) || return 1
	step "$example: publishing with routing key $key, then getting it from orders"
	published=$(date +%s%N)
	curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -H 'content-type: application/json' \
		-d "{\"routing_key\":\"$key\",\"payload\":\"hello\",\"payload_encoding\":\"string\",\"properties\":{\"delivery_mode\":2}}" \
		"$RABBITMQ_ENDPOINT/api/exchanges/%2F/retries.ingest/publish" | grep -q '"routed":true' || return 1
	# A guard against a hung broker, not a bound on lateness: a loaded machine may be seconds late.
	local deadline=$((SECONDS + 120))
	while ((SECONDS < deadline)); do
		got=$(curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -H 'content-type: application/json' \
			-d '{"count":1,"ackmode":"ack_requeue_false","encoding":"auto"}' \
			"$RABBITMQ_ENDPOINT/api/queues/%2F/orders/get") || return 1
		if [[ $got == *'"payload":"hello"'* ]]; then
			local waited_ms=$((($(date +%s%N) - published) / 1000000))
			step "$example: the message arrived after ${waited_ms}ms"
			[ "$waited_ms" -ge 5000 ] || {
				echo "examples.sh: the message came $((5000 - waited_ms))ms early" >&2
				return 1
			}
			return 0
		fi
		sleep 0.25
	done
	echo "examples.sh: hung: no message in orders 2 min after publishing" >&2
	return 1
}

# check_two_providers: the function, called under the local name delayq, gives the key that
# main.tf's comment shows, and a message published with no delay goes through the set to the
# queue that community.tf declares (here, the management API).
check_two_providers() {
	local key want=invoices.0.0.1.0.0.1.0.1.1.0.0.0 got
	key=$(tf output -raw retry_in_10m) || return 1
	[ "$key" = "$want" ] || {
		echo "examples.sh: retry_in_10m is $key, not $want" >&2
		return 1
	}
	step "$example: publishing with no delay, then getting it from invoices"
	curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -H 'content-type: application/json' \
		-d '{"routing_key":"invoices.0.0.0.0.0.0.0.0.0.0.0.0","payload":"invoice 42","payload_encoding":"string","properties":{}}' \
		"$RABBITMQ_ENDPOINT/api/exchanges/%2F/invoice-retries.ingest/publish" | grep -q '"routed":true' || return 1
	local deadline=$((SECONDS + 120)) # a hang guard, as in check_quickstart
	while ((SECONDS < deadline)); do
		got=$(curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" -H 'content-type: application/json' \
			-d '{"count":1,"ackmode":"ack_requeue_false","encoding":"auto"}' \
			"$RABBITMQ_ENDPOINT/api/queues/%2F/invoices/get") || return 1
		[[ $got == *'"payload":"invoice 42"'* ]] && return 0
		sleep 0.25
	done
	echo "examples.sh: hung: no message in invoices 2 min after publishing" >&2
	return 1
}

# definitions VHOST: the vhost's exchanges, queues, bindings and policies as GET /api/definitions
# exports them, one per line with sorted keys, sorted.
definitions() {
	curl -fsS -u "$RABBITMQ_USERNAME:$RABBITMQ_PASSWORD" "$RABBITMQ_ENDPOINT/api/definitions/$1" |
		jq -cS '(.exchanges, .queues, .bindings, .policies)[]' | sort
}

# prepare_adoption makes the sets adopt-every-set adopts, outside Terraform, and keeps the vhost's
# definitions from before the apply.
prepare_adoption() {
	step "$example: prepare.sh (sets made outside Terraform)"
	bash "$example/prepare.sh" || return 1
	definitions adopt-example >"$work/definitions-before.txt"
}

# check_adoption: the apply adopted the three sets and nothing else, changed nothing on the broker, and
# leaves nothing to change.
check_adoption() {
	local adopted not_adopted
	adopted=$(tf output -json adopted | jq -c .) || return 1
	not_adopted=$(tf output -json not_adopted | jq length) || return 1
	step "$example: adopted $adopted; not adopted: $not_adopted"
	[ "$adopted" = '["adopt-example/billing.retry","adopt-example/nservicebus/nservicebus","adopt-example/reminders"]' ] &&
		[ "$not_adopted" = 0 ] || {
		echo "examples.sh: $example adopted $adopted and left $not_adopted, not the three sets prepare.sh made" >&2
		return 1
	}
	definitions adopt-example >"$work/definitions-after.txt" || return 1
	diff "$work/definitions-before.txt" "$work/definitions-after.txt" >&2 || {
		echo "examples.sh: the adopting apply changed the definitions of vhost adopt-example (< before, > after)" >&2
		return 1
	}
	expect_no_changes
}

check_retry() {
	step "$example: the consumer (go run ./$example/consumer)"
	tf output -json >"$work/outputs.json" || return 1
	local backoff=10ms,100ms,1s,5s,5s
	[ "${EXAMPLES_REAL_DELAYS:-}" = 1 ] && backoff=1s,10s,100s,500s,500s
	go run "./$example/consumer" -tf-output "$work/outputs.json" -backoff "$backoff" -failures 4
}

# cleanup: destroy what the example applied and delete its queues, whatever happened before.
cleanup() {
	local status=0
	if [ -f "$work/terraform.tfstate" ]; then
		# The provider refuses to delete queues that hold messages, judging by the larger of the
		# management API's statistics, which lag by up to 5 s, and a peek: a destroy right after
		# the last message left the set may be refused until the statistics catch up.
		for attempt in 1 2 3 4; do
			status=0
			tf destroy -auto-approve -input=false -no-color $vars >"$work/destroy.txt" 2>&1 || status=$?
			[ "$status" -ne 0 ] && grep -q 'Delay Queues Hold Messages' "$work/destroy.txt" && [ "$attempt" -lt 4 ] || break
			step "$example: destroy refused while the statistics show messages; again in 5s"
			sleep 5
		done
		[ "$status" -eq 0 ] || cat "$work/destroy.txt" >&2
	fi
	for queue in $(queues_for "$example"); do
		queue_api DELETE "$queue" || status=$?
	done
	if [ "$example" = examples/scenarios/adopt-every-set ]; then
		bash "$example/prepare.sh" delete || status=$?
	fi
	return "$status"
}

# exercise applies the example in $work and runs its checks. It is called where `set -e` does
# not apply (its status is tested), so every step returns on failure explicitly.
exercise() {
	if [ "$example" = examples/scenarios/adopt-every-set ]; then
		prepare_adoption || return 1
	fi
	step "$example: apply $vars"
	quiet_apply || return 1
	sed -n '/^Outputs:/,$p' "$work/apply.txt" >&2
	case $example in
	examples/resources/rabbitmq_delay_queue_set) check_import || return 1 ;;
	examples/scenarios/retry-backoff) check_retry || return 1 ;;
	examples/quickstart) check_quickstart || return 1 ;;
	examples/scenarios/two-providers) check_two_providers || return 1 ;;
	examples/scenarios/adopt-every-set) check_adoption || return 1 ;;
	esac
}

run_example() {
	example=$1
	work=$tools/examples/${example//\//_}
	vars=$(vars_for "$example")
	local began=$SECONDS
	if grep -q 'provider::' "$example"/*.tf && ! at_least 1.8.0; then
		step "$example: SKIPPED (calls provider functions, which need Terraform 1.8; this is $version)"
		skipped+=("$example")
		return 0
	fi
	local required
	required=$(sed -n 's/^  required_version = ">= \([0-9.]*\)"$/\1/p' "$example"/*.tf | head -n 1)
	if [ -n "$required" ] && ! at_least "$required"; then
		step "$example: SKIPPED (needs Terraform $required; this is $version)"
		skipped+=("$example")
		return 0
	fi
	rm -rf "$work" && mkdir -p "$work"
	# Every configuration file but the import blocks, which check_import adds in its turn.
	find "$example" -maxdepth 1 -name '*.tf' ! -name 'import-by-*.tf' -exec cp {} "$work/" \;
	# A provider block or variable default naming the local broker names the one asked for.
	if [ "$RABBITMQ_ENDPOINT" != "$default_endpoint" ]; then
		sed -i "s|\"$default_endpoint\"|\"$RABBITMQ_ENDPOINT\"|g" "$work"/*.tf
	fi
	if grep -q cyrilgdn/rabbitmq "$work"/*.tf; then
		without_community_provider || {
			failed+=("$example")
			return 0
		}
	fi
	if ! grep -q required_providers "$work"/*.tf; then
		# Documentation snippets leave this to examples/provider/provider.tf.
		printf 'terraform {\n  required_providers {\n    rabbitmq = {\n      source = "delayqueue/rabbitmq"\n    }\n  }\n}\n' >"$work/versions.tf"
	fi
	for queue in $(queues_for "$example"); do
		queue_api PUT "$queue" '{"durable":true}'
	done

	local status=0
	exercise || status=$?
	step "$example: destroy"
	cleanup || status=$?
	if [ "$status" -ne 0 ]; then
		step "$example: FAILED after $((SECONDS - began))s"
		failed+=("$example")
	else
		step "$example: ok in $((SECONDS - began))s"
		passed+=("$example")
	fi
}

if [ "$#" -gt 0 ]; then
	examples=("${@%/}")
else
	mapfile -t examples < <(find examples -name '*.tf' ! -path 'examples/demo/*' ! -path 'examples/modules/*' -exec dirname {} \; | sort -u)
fi
passed=() failed=() skipped=()
for example in "${examples[@]}"; do
	run_example "$example"
done
echo "examples: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped in $((SECONDS - started))s"
[ "${#failed[@]}" -eq 0 ] || {
	printf '  failed: %s\n' "${failed[@]}"
	exit 1
}
