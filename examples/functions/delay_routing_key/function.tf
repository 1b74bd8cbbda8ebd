# Routing keys for a set of 8 levels at one-second resolution (delays up to 4m15s).
resource "rabbitmq_delay_queue_set" "jobs" {
  name   = "jobs"
  levels = 8
}

locals {
  levels     = rabbitmq_delay_queue_set.jobs.levels
  resolution = rabbitmq_delay_queue_set.jobs.resolution
}

output "in_five_seconds" {
  # "orders.0.0.0.0.0.1.0.1"
  value = provider::rabbitmq::delay_routing_key("orders", "5s", local.levels, local.resolution)
}

output "in_ninety_seconds" {
  # "orders.0.1.0.1.1.0.1.0"
  value = provider::rabbitmq::delay_routing_key("orders", "90s", local.levels, local.resolution)
}
