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

# Delays of up to one hour at one-second resolution. Messages published with key "orders"
# go to the queue "orders" once their delay is over.
resource "rabbitmq_delay_queue_set" "retries" {
  name      = "retries"
  max_delay = "1h"

  route {
    destination = "orders"
    key         = "orders"
  }
}

output "ingest_exchange" {
  value = rabbitmq_delay_queue_set.retries.ingest_exchange
}

# The routing key that delays a message with key "orders" by five seconds.
output "routing_key_in_5s" {
  value = provider::rabbitmq::delay_routing_key(
    "orders", "5s", rabbitmq_delay_queue_set.retries.levels, rabbitmq_delay_queue_set.retries.resolution
  )
}
