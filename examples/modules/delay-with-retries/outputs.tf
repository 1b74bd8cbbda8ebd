output "ingest_exchange" {
  description = "The exchange consumers publish retries to, with routing key `<key>.<N digits of the wait>`."
  value       = rabbitmq_delay_queue_set.this.ingest_exchange
}

output "levels" {
  description = "N, the number of digits of a wait in a routing key."
  value       = rabbitmq_delay_queue_set.this.levels
}

output "radix" {
  description = "The base the digits are written in."
  value       = var.radix
}

output "resolution" {
  description = "The tick a wait counts in, rounded up."
  value       = rabbitmq_delay_queue_set.this.resolution
}

output "max_delay" {
  description = "The longest wait the set holds: (radix^N − 1) × resolution."
  value       = rabbitmq_delay_queue_set.this.max_delay_effective
}

output "unroutable_queue" {
  description = "Where a retry whose key matches no route, or is malformed, is parked: watch its depth."
  value       = rabbitmq_delay_queue_set.this.unroutable_queue
}

output "retry_destinations" {
  description = "Each retry route's destination, by its key: a retry published with the key comes back there."
  value       = { for r in var.retries : r.key => r.destination }
}

output "bindings" {
  description = "Every binding of the set, one a line, as the provider plans it."
  value       = rabbitmq_delay_queue_set.this.bindings
}

output "definitions_json" {
  description = "The set as RabbitMQ definitions (rabbitmqctl import_definitions), planned with no broker."
  value       = data.rabbitmq_delay_topology.this.definitions_json
}
