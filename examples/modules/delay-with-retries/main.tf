# A delay set with a retry route per consumer: a consumer that fails to process a message publishes it to
# `ingest_exchange` with routing key `<key>.<digits of the wait>`, and the set delivers it back to the
# route's destination once the wait is over. See README.md.

locals {
  routes = [for r in var.retries : {
    key              = r.key
    destination      = r.destination
    destination_type = r.destination_type
  }]
}

resource "rabbitmq_delay_queue_set" "this" {
  name       = var.name
  vhost      = var.vhost
  max_delay  = var.max_delay
  resolution = var.resolution
  radix      = var.radix
  queue_type = var.queue_type

  dynamic "route" {
    for_each = local.routes
    content {
      key              = route.value.key
      destination      = route.value.destination
      destination_type = route.value.destination_type
    }
  }
}

# The same set planned by the provider alone, with no broker: the definitions a reviewer can read, or load
# with `rabbitmqctl import_definitions` where Terraform does not reach the broker. The module's tests plan
# it without a broker.
data "rabbitmq_delay_topology" "this" {
  name       = var.name
  vhost      = var.vhost
  max_delay  = var.max_delay
  resolution = var.resolution
  radix      = var.radix
  queue_type = var.queue_type

  dynamic "route" {
    for_each = local.routes
    content {
      key              = route.value.key
      destination      = route.value.destination
      destination_type = route.value.destination_type
    }
  }
}
