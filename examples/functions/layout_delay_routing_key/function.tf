# Routing keys for the delay infrastructure of NServiceBus and of Celery.
output "nservicebus_in_90_seconds" {
  # 28 bits of 90 s, then the endpoint's queue: "0.….0.1.0.1.1.0.1.0.Sales"
  value = provider::rabbitmq::layout_delay_routing_key("nservicebus", "Sales", "90s")
}

output "celery_in_4_9_seconds" {
  # Celery truncates 4.9 s to 4 s: "0.….0.1.0.0.tasks.add"
  value = provider::rabbitmq::layout_delay_routing_key("celery", "tasks.add", "4.9s")
}
