# The delay queue sets `make demo` applies (scripts/demo.sh), side by side: six levels of
# binary digits at a one-second resolution hold delays of 0 to 63 seconds; two levels of
# radix-16 digits hold 0 to 255 seconds and pass a message through at most two queues. Each
# set has a route that delivers every message with key "demo" to the queue demo.work once
# its delay is over; the demo publishes to one set, then the other.
#
# The provider does not manage plain queues: scripts/demo.sh declares
# demo.work before this configuration binds the routes to it.

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

# Radix 2, the default: routing key <key>.<6 binary digits>, e.g. demo.1.0.0.0.1.0 for 34 s.
resource "rabbitmq_delay_queue_set" "demo" {
  name       = "demo"
  levels     = 6
  resolution = "1s"

  route {
    destination = local.route_queue
    key         = local.route_key
  }
}

# Radix 16: routing key <key>.<2 digits 0 to 15>, e.g. demo.2.2 for 34 s (2 × 16 + 2).
resource "rabbitmq_delay_queue_set" "demo16" {
  name       = "demo16"
  levels     = 2
  radix      = 16
  resolution = "1s"

  route {
    destination = local.route_queue
    key         = local.route_key
  }
}

# What a publisher needs of each set, and what benchmarks/cmd/delaydemo reads
# (delaydemo -tf-output outputs.json -tf-set binary, or radix16).
output "binary" {
  description = "The binary set: publish to ingest_exchange with routing key <key>.<levels digits in radix>."
  value = {
    ingest_exchange = rabbitmq_delay_queue_set.demo.ingest_exchange
    levels          = rabbitmq_delay_queue_set.demo.levels
    radix           = rabbitmq_delay_queue_set.demo.radix
    resolution      = rabbitmq_delay_queue_set.demo.resolution
    max_delay       = rabbitmq_delay_queue_set.demo.max_delay_effective
    bindings        = length(split("\n", rabbitmq_delay_queue_set.demo.bindings))
    route_queue     = local.route_queue
    route_key       = local.route_key
  }
}

output "radix16" {
  description = "The radix-16 set: publish to ingest_exchange with routing key <key>.<levels digits in radix>."
  value = {
    ingest_exchange = rabbitmq_delay_queue_set.demo16.ingest_exchange
    levels          = rabbitmq_delay_queue_set.demo16.levels
    radix           = rabbitmq_delay_queue_set.demo16.radix
    resolution      = rabbitmq_delay_queue_set.demo16.resolution
    max_delay       = rabbitmq_delay_queue_set.demo16.max_delay_effective
    bindings        = length(split("\n", rabbitmq_delay_queue_set.demo16.bindings))
    route_queue     = local.route_queue
    route_key       = local.route_key
  }
}
