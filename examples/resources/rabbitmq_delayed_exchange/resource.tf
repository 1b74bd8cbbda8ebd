# The retry delays publishers ask for with the x-delay header: 5 s, 30 s and 5 min.
resource "rabbitmq_delayed_exchange" "retries" {
  name          = "retries"
  delays_ms     = [5000, 30000, 300000]
  delivery_type = "topic"
}

# Publish here, with x-delay, as to the plugin's exchange.
output "retries_exchange" {
  value = rabbitmq_delayed_exchange.retries.exchange
}

# Bind consumers' queues here; an x-delay that is not listed ends in parking_queue.
output "retries_delivery_exchange" {
  value = rabbitmq_delayed_exchange.retries.delivery_exchange
}
