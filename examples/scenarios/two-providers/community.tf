# The community provider (cyrilgdn/rabbitmq) declares the queue the delayed messages go to.
# Its provider block takes the same settings as this provider's, from the same variables; both
# read the password from RABBITMQ_PASSWORD.
provider "rabbitmq" {
  endpoint = var.rabbitmq_endpoint
  username = var.rabbitmq_username
}

resource "rabbitmq_queue" "invoices" {
  name  = "invoices"
  vhost = "/"

  settings {
    durable = true
  }
}

locals {
  # The set's route names the queue through this reference, so Terraform declares the queue
  # before the set and, on destroy, deletes the set before the queue.
  invoices_queue = rabbitmq_queue.invoices.name
}
