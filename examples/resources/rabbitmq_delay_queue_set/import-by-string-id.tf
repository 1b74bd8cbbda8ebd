# The ID is the URL-escaped vhost and the set's name, joined by a slash,
# or the name and the vhost joined by "@": "reminders@/".
import {
  to = rabbitmq_delay_queue_set.reminders
  id = "%2F/reminders"
}
