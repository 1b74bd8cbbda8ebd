# Invoices that cannot be sent yet are retried after a delay of up to one hour: the delay set
# comes from this provider, under the local name "delayq" (see versions.tf); the queue it
# delivers to comes from the community provider (community.tf).

variable "rabbitmq_endpoint" {
  description = "The management API of the broker, for both providers."
  type        = string
  default     = "http://127.0.0.1:15672"
}

variable "rabbitmq_username" {
  description = "The user both providers log in as; the password comes from RABBITMQ_PASSWORD."
  type        = string
  default     = "guest"
}

provider "delayq" {
  endpoint = var.rabbitmq_endpoint
  username = var.rabbitmq_username
}

resource "rabbitmq_delay_queue_set" "invoice_retries" {
  provider  = delayq
  name      = "invoice-retries"
  max_delay = "1h"

  route {
    destination = local.invoices_queue
    key         = "invoices"
  }
}

# The data source belongs to this provider too: it plans the same set without the broker, here
# for its diagram.
data "rabbitmq_delay_topology" "invoice_retries" {
  provider = delayq
  name     = rabbitmq_delay_queue_set.invoice_retries.name
  levels   = rabbitmq_delay_queue_set.invoice_retries.levels

  route {
    destination = local.invoices_queue
    key         = "invoices"
  }
}

output "ingest_exchange" {
  value = rabbitmq_delay_queue_set.invoice_retries.ingest_exchange
}

# The routing key that retries an invoice in ten minutes: "invoices.0.0.1.0.0.1.0.1.1.0.0.0".
output "retry_in_10m" {
  value = provider::delayq::delay_routing_key(
    "invoices", "10m", rabbitmq_delay_queue_set.invoice_retries.levels, rabbitmq_delay_queue_set.invoice_retries.resolution
  )
}

output "diagram" {
  value = data.rabbitmq_delay_topology.invoice_retries.mermaid
}
