# Every delay queue set in the vhost "/", and what is named as a set's objects but is not one whole set.
# Leave vhost unset to look in every vhost the user can read.
data "rabbitmq_delay_queue_sets" "here" {
  vhost = "/"
}

output "sets" {
  value = {
    for s in data.rabbitmq_delay_queue_sets.here.sets :
    s.import_id => "${s.layout} layout, ${s.levels} levels of radix ${s.radix} at ${s.resolution}, ${s.queue_type}"
  }
}

output "not_sets" {
  value = data.rabbitmq_delay_queue_sets.here.unreadable
}
