# Terraform 1.12 and later: the vhost and the set's name as they are, not escaped; the vhost defaults to "/".
import {
  to = rabbitmq_delay_queue_set.reminders
  identity = {
    vhost = "/"
    name  = "reminders"
  }
}
