# Scheduled reminders hours ahead: an app publishes "remind me in 9h30m" to the set with the
# delay in its routing key, and the reminder reaches reminders.due when it is due. Two days at
# one-second resolution need 18 levels; the messages wait in at most 18 quorum queues, so a
# broker restart does not lose them.
#
# The reminders.due queue must exist before apply (this provider manages only the delay set).

terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

# Connection settings come from RABBITMQ_ENDPOINT, RABBITMQ_USERNAME and RABBITMQ_PASSWORD.
provider "rabbitmq" {}

resource "rabbitmq_delay_queue_set" "reminders" {
  name      = "reminders"
  max_delay = "48h"

  route {
    destination = "reminders.due"
    key         = "reminder"
  }
}

locals {
  # Examples of what the app publishes: reminders and how far ahead they are due.
  reminders = {
    standup   = "9h30m"
    invoice   = "26h"
    follow_up = "47h59m59s"
  }
}

# The routing key of each reminder, as the app computes it (see the publishing guide).
output "routing_keys" {
  value = {
    for name, delay in local.reminders :
    name => provider::rabbitmq::delay_routing_key(
      "reminder", delay, rabbitmq_delay_queue_set.reminders.levels, rabbitmq_delay_queue_set.reminders.resolution
    )
  }
}

output "ingest_exchange" {
  value = rabbitmq_delay_queue_set.reminders.ingest_exchange
}

output "max_delay" {
  value = rabbitmq_delay_queue_set.reminders.max_delay_effective
}
