# Delays of up to 36 hours at one-second resolution. The route's queue must exist.
resource "rabbitmq_delay_queue_set" "reminders" {
  name      = "reminders"
  max_delay = "36h"

  route {
    destination = "reminders.due"
    key         = "reminder"
  }
}

output "reminders_ingest" {
  value = rabbitmq_delay_queue_set.reminders.ingest_exchange
}
