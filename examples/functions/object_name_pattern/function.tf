# The permissions, in its vhost, of a user that manages the set "orders" alone and routes to the queue
# orders-work: for the community provider's rabbitmq_permissions (see the operating guide).
output "orders_permissions" {
  value = {
    configure = provider::rabbitmq::object_name_pattern("orders")
    write     = "${provider::rabbitmq::object_name_pattern("orders")}|^orders-work$"
    read      = provider::rabbitmq::object_name_pattern("orders")
  }
}
