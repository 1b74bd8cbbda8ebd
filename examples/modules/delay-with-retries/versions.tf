terraform {
  # The provider's floor: the oldest Terraform it is tested with.
  required_version = ">= 1.5.7"

  required_providers {
    rabbitmq = {
      source  = "delayqueue/rabbitmq"
      version = "~> 0.1"
    }
  }
}
