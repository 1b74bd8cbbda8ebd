# Plans a set without a broker, for brokers Terraform does not reach:
#   terraform output -raw definitions > definitions.json
#   rabbitmqctl import_definitions definitions.json
data "rabbitmq_delay_topology" "retries" {
  name      = "retries"
  max_delay = "15m"

  route {
    destination = "orders"
    key         = "orders"
  }
}

output "definitions" {
  value = data.rabbitmq_delay_topology.retries.definitions_json
}

output "diagram" {
  value = data.rabbitmq_delay_topology.retries.mermaid
}

output "levels" {
  value = data.rabbitmq_delay_topology.retries.levels
}
