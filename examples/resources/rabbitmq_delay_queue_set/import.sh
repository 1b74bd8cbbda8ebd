# Or 'reminders@/': the name, "@", then the vhost as it is.
terraform import rabbitmq_delay_queue_set.reminders '%2F/reminders'
