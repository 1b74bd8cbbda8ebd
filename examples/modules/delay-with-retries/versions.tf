terraform {
  # optional() object attributes with defaults.
  required_version = ">= 1.3"

  required_providers {
    rabbitmq = {
      source  = "delayqueue/rabbitmq"
      version = "~> 0.1"
    }
  }
}
