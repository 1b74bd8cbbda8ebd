# Import blocks take for_each from Terraform 1.7 on.
terraform {
  required_version = ">= 1.7"
  required_providers {
    rabbitmq = {
      source = "delayqueue/rabbitmq"
    }
  }
}
