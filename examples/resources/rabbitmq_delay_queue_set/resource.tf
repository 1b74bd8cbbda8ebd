# Delays of up to 36 hours at one-second resolution: 17 levels.
# The route's queue must exist: this provider manages only the delay set (declare the queue with
# the community provider's rabbitmq_queue, or route to an exchange with destination_type = "exchange").
resource "rabbitmq_delay_queue_set" "reminders" {
  name      = "reminders"
  max_delay = "36h"

  route {
    destination = "reminders.due"
    key         = "reminder"
  }
}

# Publish to this exchange with routing key "reminder.<levels binary digits>".
output "reminders_ingest" {
  value = rabbitmq_delay_queue_set.reminders.ingest_exchange
}

output "reminders_levels" {
  value = rabbitmq_delay_queue_set.reminders.levels
}
