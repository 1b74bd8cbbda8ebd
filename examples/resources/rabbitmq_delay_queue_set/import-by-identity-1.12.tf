# The vhost ("/" when left out) and the name, as they are.
import {
  to = rabbitmq_delay_queue_set.reminders
  identity = {
    vhost = "/"
    name  = "reminders"
  }
}
