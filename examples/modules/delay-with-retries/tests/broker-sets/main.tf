# The tests' view of the broker: the delay sets a vhost holds, as the provider reads them back from the
# management API (data source rabbitmq_delay_queue_sets), apart from the module's own state.
terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

variable "vhost" {
  type = string
}

variable "name" {
  type = string
}

data "rabbitmq_delay_queue_sets" "found" {
  vhost = var.vhost
}

locals {
  found = [for s in data.rabbitmq_delay_queue_sets.found.sets : s if s.name == var.name]
}

output "count" {
  value = length(local.found)
}

output "set" {
  value = one(local.found)
}

output "unreadable" {
  value = [for u in data.rabbitmq_delay_queue_sets.found.unreadable : u.reason if u.name == var.name]
}
