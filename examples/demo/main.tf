# The delay queue set `make demo` applies (scripts/demo.sh): six levels at a
# one-second resolution hold delays of 0 to 63 seconds, and a route delivers
# every message with key "demo" to the queue demo.work once its delay is over.
#
# The provider does not manage plain queues: scripts/demo.sh declares
# demo.work before this configuration binds the route to it.

terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

provider "rabbitmq" {
  endpoint = "http://127.0.0.1:15672"
  username = "guest"
  password = "guest"
}

locals {
  route_queue = "demo.work"
  route_key   = "demo"
}

resource "rabbitmq_delay_queue_set" "demo" {
  name       = "demo"
  levels     = 6
  resolution = "1s"

  route {
    destination = local.route_queue
    key         = local.route_key
  }
}

output "ingest_exchange" {
  description = "Publish delayed messages here, with routing key <key>.<levels binary digits>."
  value       = rabbitmq_delay_queue_set.demo.ingest_exchange
}

output "levels" {
  description = "How many binary digits a routing key's delay has."
  value       = rabbitmq_delay_queue_set.demo.levels
}

output "resolution" {
  description = "The tick every delay is rounded up to."
  value       = rabbitmq_delay_queue_set.demo.resolution
}

output "max_delay" {
  description = "The longest delay the set holds."
  value       = rabbitmq_delay_queue_set.demo.max_delay_effective
}

output "bindings" {
  description = "How many bindings the set declares: the delay chain, the unroutable binding and the route."
  value       = length(rabbitmq_delay_queue_set.demo.bindings)
}

output "route_queue" {
  description = "The queue delayed messages with key route_key end up in."
  value       = local.route_queue
}

output "route_key" {
  description = "The message key the route takes."
  value       = local.route_key
}
