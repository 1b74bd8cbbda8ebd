# Both providers have the type name "rabbitmq", so they need two local names. The community
# provider keeps "rabbitmq": its many rabbitmq_* resources then need no provider argument.
# This provider is "delayq": its resource and data source say `provider = delayq`, and its
# function is called as provider::delayq::delay_routing_key.
terraform {
  required_providers {
    rabbitmq = {
      source  = "cyrilgdn/rabbitmq"
      version = "~> 1.8"
    }
    delayq = {
      source = "delayqueue/rabbitmq"
    }
  }
}
