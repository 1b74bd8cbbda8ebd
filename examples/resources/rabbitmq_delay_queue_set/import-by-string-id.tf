# The URL-escaped vhost, "/" and the name; or "reminders@/".
import {
  to = rabbitmq_delay_queue_set.reminders
  id = "%2F/reminders"
}
