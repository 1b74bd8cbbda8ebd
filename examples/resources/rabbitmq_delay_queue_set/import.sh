# The ID is the set's name and its vhost, joined by "@" (the vhost is what follows the last "@"):
#   terraform import rabbitmq_delay_queue_set.reminders 'reminders@/'
# or the URL-escaped vhost and the set's name, joined by a slash:
terraform import rabbitmq_delay_queue_set.reminders '%2F/reminders'
