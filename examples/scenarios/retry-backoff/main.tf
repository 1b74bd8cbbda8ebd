# Retry with exponential backoff: a consumer that fails to process a message publishes it again to
# the set with the next wait of its schedule, and the set delivers it back to the queue when the
# wait is over. The work queue must exist before apply: this provider manages only the delay set.

terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

# Connection settings come from RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD.
provider "rabbitmq" {}

variable "queue" {
  description = "The work queue: messages that fail go back to it after their wait."
  type        = string
  default     = "orders"
}

variable "resolution" {
  description = "The tick of the delays. Tests use a shorter one to run the whole schedule quickly."
  type        = string
  default     = "1s"
}

variable "max_delay" {
  description = "The longest wait of the backoff schedule."
  type        = string
  default     = "500s"
}

resource "rabbitmq_delay_queue_set" "retry" {
  name       = "${var.queue}.retry"
  max_delay  = var.max_delay
  resolution = var.resolution

  # Retried messages carry the queue's name as their key and come back to the queue.
  route {
    destination = var.queue
    key         = var.queue
  }
}

# What the consumer needs to publish retries: the exchange, and how to encode a wait.
output "ingest_exchange" {
  value = rabbitmq_delay_queue_set.retry.ingest_exchange
}

output "levels" {
  value = rabbitmq_delay_queue_set.retry.levels
}

output "resolution" {
  value = rabbitmq_delay_queue_set.retry.resolution
}

output "queue" {
  value = var.queue
}

output "unroutable_queue" {
  value = rabbitmq_delay_queue_set.retry.unroutable_queue
}
