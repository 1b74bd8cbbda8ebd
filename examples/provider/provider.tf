terraform {
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}

provider "rabbitmq" {
  # Each setting falls back to its RABBITMQ_* environment variable
  # (RABBITMQ_ENDPOINT, RABBITMQ_USERNAME, RABBITMQ_PASSWORD, ...).
  endpoint = "http://127.0.0.1:15672"
  username = "guest"
  password = "guest"
  timeout  = "30s"
}
