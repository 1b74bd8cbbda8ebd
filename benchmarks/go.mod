module github.com/delayqueue/terraform-provider-rabbitmq/benchmarks

go 1.25.8

require (
	github.com/delayqueue/terraform-provider-rabbitmq v0.0.0
	github.com/google/go-cmp v0.7.0
	github.com/michaelklishin/rabbit-hole/v3 v3.5.0
	github.com/rabbitmq/amqp091-go v1.16.0
)

replace github.com/delayqueue/terraform-provider-rabbitmq => ../
