# A back-off loop for a controller: when reconciling an object fails, the controller publishes
# the object's reference to the set with a delay that doubles on each failure, from 100ms up to
# five minutes, and gets it back on its work queue when the delay is over. One set serves every
# kind of object: the message key ("reconcile.<kind>") picks the work queue it returns to.
#
# The work queues must exist before apply (this provider manages only the delay set).

terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

# Connection settings come from RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD.
provider "rabbitmq" {}

variable "kinds" {
  description = "The kinds of object the controller reconciles, each with its own work queue."
  type        = set(string)
  default     = ["deployment", "certificate"]
}

resource "rabbitmq_delay_queue_set" "requeue" {
  name       = "controller.requeue"
  max_delay  = "5m"
  resolution = "100ms"
  # A requeue lost in a broker failure is only a late reconcile: classic queues are enough.
  queue_type = "classic"

  dynamic "route" {
    for_each = var.kinds
    content {
      destination = "controller.${route.value}"
      key         = "reconcile.${route.value}"
    }
  }
}

locals {
  # 100ms · 2^failures, capped at five minutes: 0.1s, 0.2s, 0.4s, … 204.8s, 300s.
  backoff = [for failures in range(13) : format("%dms", min(100 * pow(2, failures), 300000))]
}

# The routing key of a deployment's requeue after each number of failures.
output "deployment_requeue_keys" {
  value = [
    for delay in local.backoff : provider::rabbitmq::delay_routing_key(
      "reconcile.deployment", delay, rabbitmq_delay_queue_set.requeue.levels, rabbitmq_delay_queue_set.requeue.resolution
    )
  ]
}

output "levels" {
  value = rabbitmq_delay_queue_set.requeue.levels
}
