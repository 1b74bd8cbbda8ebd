# The ID is the URL-escaped vhost and the set's name, joined by a slash.
terraform import rabbitmq_delay_queue_set.reminders '%2F/reminders'
