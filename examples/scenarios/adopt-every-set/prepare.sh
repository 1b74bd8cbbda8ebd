#!/usr/bin/env bash
# Makes a vhost to try the adoption on: delay sets that exist on the broker but in no Terraform state,
# declared here through the management API, one HTTP request per object, as other tools and hands make them:
#   billing.retry    this provider's layout in radix 16, quorum at-least-once, one replica a queue
#                    (x-quorum-initial-group-size 1), as an earlier deployment whose state is lost left it
#   reminders        a binary chain built by hand in the same names: classic queues declared without
#                    x-queue-type
#   nservicebus      the delay infrastructure the NServiceBus RabbitMQ transport declares (v2)
# and the queues and exchange they deliver to. `prepare.sh delete` deletes the vhost and all in it.
#
# Environment: RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD (the local broker's by default),
# VHOST (adopt-example).
set -euo pipefail

endpoint=${RABBITMQ_ENDPOINT:-http://127.0.0.1:15672}
credentials=${RABBITMQ_USERNAME:-guest}:${RABBITMQ_PASSWORD:-guest}
vhost=${VHOST:-adopt-example}

api() { # METHOD PATH [BODY]
	curl -fsS -u "$credentials" -X "$1" -H 'content-type: application/json' ${3:+--data "$3"} "$endpoint/api$2" >/dev/null
}

if [ "${1:-}" = delete ]; then
	curl -sS -u "$credentials" -X DELETE "$endpoint/api/vhosts/$vhost" >/dev/null
	exit 0
fi

exchange() { # NAME TYPE [ALTERNATE-EXCHANGE]
	api PUT "/exchanges/$vhost/$1" "{\"type\":\"$2\",\"durable\":true,\"arguments\":{${3:+\"alternate-exchange\":\"$3\"}}}"
}
queue() { # NAME [ARGUMENTS, as JSON members]
	api PUT "/queues/$vhost/$1" "{\"durable\":true,\"arguments\":{${2:-}}}"
}
bind() { # SOURCE q|e DESTINATION KEY
	api POST "/bindings/$vhost/e/$1/$2/$3" "{\"routing_key\":\"$4\"}"
}

# words N WORD: WORD N times, each after a dot (".0.0" for 2 0).
words() {
	local i out=""
	for ((i = 0; i < $1; i++)); do out+=".$2"; done
	printf '%s' "$out"
}

# delay_set NAME RADIX LEVELS TICK_MS QUEUE_ARGUMENTS UNROUTABLE_ARGUMENTS ROUTE_QUEUE ROUTE_KEY declares a set of
# the provider's layout (DESIGN.md, "The layout"): level k holds digit v for v·RADIX^k ticks, dead-letters into
# level k's done exchange, and a message's key is ROUTE_KEY followed by LEVELS digit words.
delay_set() {
	local name=$1 radix=$2 levels=$3 tick=$4 arguments=$5 parking=$6 route=$7 key=$8 k j v weight=1
	local parks=$name.unroutable
	level_queue() { # LEVEL DIGIT
		if [ "$radix" = 2 ]; then printf '%s.level.%02d' "$name" "$1"; else printf '%s.r%s.%02d.%s' "$name" "$radix" "$1" "$2"; fi
	}
	level_done() { if [ "$radix" = 2 ]; then printf '%s.level.%02d.done' "$name" "$1"; else printf '%s.r%s.%02d.done' "$name" "$radix" "$1"; fi; }
	exchange "$parks" fanout
	queue "$parks" "$parking"
	bind "$parks" q "$parks" ""
	exchange "$name.ingest" topic "$parks"
	exchange "$name.out" topic "$parks"
	for ((k = 0; k < levels; k++)); do
		exchange "$(level_done "$k")" topic "$parks"
		for ((v = 1; v < radix; v++)); do
			queue "$(level_queue "$k" "$v")" "\"x-message-ttl\":$((tick * v * weight)),\"x-dead-letter-exchange\":\"$(level_done "$k")\"${arguments:+,$arguments}"
		done
		weight=$((weight * radix))
	done
	# The ingest exchange takes a message to the queue of its highest nonzero digit; level k's done exchange to
	# that of its next nonzero digit below k; either to out once the digits left are all 0.
	for ((k = 0; k <= levels; k++)); do
		local source=$name.ingest zeros=$levels
		[ "$k" -lt "$levels" ] && source=$(level_done "$k") && zeros=$k
		for ((j = zeros - 1; j >= 0; j--)); do
			for ((v = 1; v < radix; v++)); do
				bind "$source" q "$(level_queue "$j" "$v")" "#$(words $((zeros - 1 - j)) 0).$v$(words "$j" '*')"
			done
		done
		bind "$source" e "$name.out" "#$(words "$zeros" 0)"
	done
	bind "$name.out" q "$route" "$key$(words "$levels" '*')"
}

# nservicebus declares what DelayInfrastructure.Build declares: for each level L from 27 down, a topic exchange
# and a quorum queue of one name (TTL 2^L s, dead-lettering into level L−1, level 0 into the delivery
# exchange), the queue bound on bit L = 1 and the next level on bit L = 0 (the bits before it are any, "*");
# then the endpoint's binding from the delivery exchange.
nservicebus() { # ENDPOINT
	local k
	nsb_level() { if [ "$1" -lt 0 ]; then printf nsb.v2.delay-delivery; else printf 'nsb.v2.delay-level-%02d' "$1"; fi; }
	bit_key() { printf '%s%s.#' "$(words $((27 - $1)) '*' | cut -c2-)$([ "$1" = 27 ] || printf .)" "$2"; }
	for ((k = 27; k >= 0; k--)); do
		exchange "$(nsb_level "$k")" topic
		queue "$(nsb_level "$k")" "\"x-queue-type\":\"quorum\",\"x-dead-letter-strategy\":\"at-least-once\",\"x-overflow\":\"reject-publish\",\"x-message-ttl\":$(((1 << k) * 1000)),\"x-dead-letter-exchange\":\"$(nsb_level $((k - 1)))\""
		bind "$(nsb_level "$k")" q "$(nsb_level "$k")" "$(bit_key "$k" 1)"
	done
	exchange nsb.v2.delay-delivery topic
	for ((k = 27; k >= 0; k--)); do
		bind "$(nsb_level "$k")" e "$(nsb_level $((k - 1)))" "$(bit_key "$k" 0)"
	done
	bind nsb.v2.delay-delivery e "$1" "#.$1"
}

api PUT "/vhosts/$vhost" '{}'
queue reminders.due
exchange Sales fanout
queue Sales
bind Sales q Sales ""
delay_set billing.retry 16 2 1000 '"x-queue-type":"quorum","x-dead-letter-strategy":"at-least-once","x-overflow":"reject-publish","x-queue-leader-locator":"balanced","x-quorum-initial-group-size":1' \
	'"x-queue-type":"quorum"' Sales invoices
delay_set reminders 2 3 1000 '' '' reminders.due reminders
nservicebus Sales
