# Adopts every delay queue set of a vhost in one apply, which changes nothing on the broker
# (Terraform 1.7 or later). prepare.sh makes such a vhost to try it on.

data "rabbitmq_delay_queue_sets" "existing" {
  vhost = var.vhost
}

locals {
  # Keyed by import ID: unique among the sets found, and the same from one plan to the next.
  existing = { for s in data.rabbitmq_delay_queue_sets.existing.sets : s.import_id => s }
}

import {
  for_each = local.existing
  to       = rabbitmq_delay_queue_set.adopted[each.key]
  id       = each.value.import_id
}

resource "rabbitmq_delay_queue_set" "adopted" {
  for_each = local.existing

  name                      = each.value.name
  vhost                     = each.value.vhost
  layout                    = each.value.layout
  levels                    = each.value.levels
  radix                     = each.value.radix
  resolution                = each.value.resolution
  queue_type                = each.value.queue_type
  dead_letter_strategy      = each.value.dead_letter_strategy
  queue_leader_locator      = each.value.queue_leader_locator
  quorum_initial_group_size = each.value.quorum_initial_group_size

  dynamic "route" {
    for_each = each.value.routes
    content {
      destination      = route.value.destination
      destination_type = route.value.destination_type
      key              = route.value.key
    }
  }
}

output "adopted" {
  description = "The import IDs of the sets adopted."
  value       = keys(rabbitmq_delay_queue_set.adopted)
}

output "not_adopted" {
  description = "What is named as a set's objects but is not one whole set, and why: import such a set on its own, and review its plan."
  value       = data.rabbitmq_delay_queue_sets.existing.unreadable
}
