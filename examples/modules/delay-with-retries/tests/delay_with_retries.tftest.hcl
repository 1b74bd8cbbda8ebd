# terraform test (Terraform 1.6 or later; OpenTofu's tofu test too): `make test-modules` runs it with the
# provider built from this checkout, against the local broker.
#
# The plan runs need no broker: they plan the module with a provider whose endpoint nothing listens on,
# and assert on what the provider plans alone, data source rabbitmq_delay_topology's bindings and the
# resource's planned ones. The apply runs declare the set on the broker that RABBITMQ_ENDPOINT,
# RABBITMQ_USERNAME and RABBITMQ_PASSWORD name, read it back through data source
# rabbitmq_delay_queue_sets, and terraform test destroys it at the end.

# The broker of the apply runs, from the environment.
provider "rabbitmq" {}

# No broker: port 9 (discard) on the loopback, where nothing listens. A create plan's read of the
# vhost's policies fails there and is ignored, so these runs hold what the provider
# plans without a broker.
provider "rabbitmq" {
  alias    = "no_broker"
  endpoint = "http://127.0.0.1:9"
  username = "nobody"
  password = "nothing"
}

variables {
  name      = "tftest.delay-with-retries"
  max_delay = "1h"
  retries = [
    { key = "orders", destination = "orders" },
    { key = "billing", destination = "billing.events", destination_type = "exchange" },
  ]
}

run "plans_retry_routes_without_a_broker" {
  command = plan

  providers = {
    rabbitmq = rabbitmq.no_broker
  }

  # 1h at 1s in radix 2: 12 digits, 2^12 - 1 = 4095 s.
  assert {
    condition     = data.rabbitmq_delay_topology.this.levels == 12
    error_message = "1h at a 1s resolution should take 12 binary levels, not ${data.rabbitmq_delay_topology.this.levels}."
  }

  # Each retry route is a binding of the out exchange on its key and 12 digits.
  assert {
    condition = contains(split("\n", data.rabbitmq_delay_topology.this.bindings),
    "tftest.delay-with-retries.out -> queue orders, key \"orders.*.*.*.*.*.*.*.*.*.*.*.*\"")
    error_message = "No route from the out exchange to queue orders on orders.<12 digits>:\n${data.rabbitmq_delay_topology.this.bindings}"
  }
  assert {
    condition = contains(split("\n", data.rabbitmq_delay_topology.this.bindings),
    "tftest.delay-with-retries.out -> exchange billing.events, key \"billing.*.*.*.*.*.*.*.*.*.*.*.*\"")
    error_message = "No route from the out exchange to exchange billing.events on billing.<12 digits>."
  }

  # Radix 2, 12 levels: N(N + 1)/2 + N + 1 = 91 delay bindings, the unroutable queue's, and the 2 routes.
  assert {
    condition     = length(split("\n", data.rabbitmq_delay_topology.this.bindings)) == 91 + 1 + 2
    error_message = "Expected 94 bindings, got ${length(split("\n", data.rabbitmq_delay_topology.this.bindings))}."
  }

  # The resource plans exactly what the data source renders.
  assert {
    condition     = rabbitmq_delay_queue_set.this.bindings == data.rabbitmq_delay_topology.this.bindings
    error_message = "The resource plans other bindings than data source rabbitmq_delay_topology renders."
  }
  assert {
    condition     = output.ingest_exchange == "tftest.delay-with-retries.ingest" && output.unroutable_queue == "tftest.delay-with-retries.unroutable"
    error_message = "Unexpected names: ingest ${output.ingest_exchange}, unroutable ${output.unroutable_queue}."
  }
  assert {
    condition     = output.retry_destinations == { orders = "orders", billing = "billing.events" }
    error_message = "retry_destinations should map each key to its destination."
  }
}

run "plans_radix_16_without_a_broker" {
  command = plan

  providers = {
    rabbitmq = rabbitmq.no_broker
  }

  variables {
    radix = 16
  }

  # 1h at 1s in radix 16: 3 digits, 16^3 - 1 = 4095 s; a route's key has 3 digits.
  assert {
    condition     = data.rabbitmq_delay_topology.this.levels == 3
    error_message = "1h at a 1s resolution should take 3 hexadecimal levels, not ${data.rabbitmq_delay_topology.this.levels}."
  }
  assert {
    condition = contains(split("\n", data.rabbitmq_delay_topology.this.bindings),
    "tftest.delay-with-retries.out -> queue orders, key \"orders.*.*.*\"")
    error_message = "No route from the out exchange to queue orders on orders.<3 digits>:\n${data.rabbitmq_delay_topology.this.bindings}"
  }
  # (r - 1) x N(N + 1)/2 + N + 1 = 15 x 6 + 4 = 94 delay bindings, the unroutable queue's, 2 routes.
  assert {
    condition     = length(split("\n", data.rabbitmq_delay_topology.this.bindings)) == 94 + 1 + 2
    error_message = "Expected 97 bindings, got ${length(split("\n", data.rabbitmq_delay_topology.this.bindings))}."
  }
  assert {
    condition     = rabbitmq_delay_queue_set.this.bindings == data.rabbitmq_delay_topology.this.bindings
    error_message = "The resource plans other bindings than data source rabbitmq_delay_topology renders."
  }
}

run "refuses_two_routes_with_one_key" {
  command = plan

  providers = {
    rabbitmq = rabbitmq.no_broker
  }

  variables {
    retries = [
      { key = "orders", destination = "orders" },
      { key = "orders", destination = "orders.audit" },
    ]
  }

  expect_failures = [var.retries]
}

# Against the broker: routes to exchanges every vhost has, so that nothing but the set needs declaring.
run "applies_to_the_broker" {
  variables {
    max_delay = "10s"
    retries = [
      { key = "orders", destination = "amq.direct", destination_type = "exchange" },
      { key = "billing", destination = "amq.topic", destination_type = "exchange" },
    ]
  }

  # 10s at 1s in radix 2: 4 levels (15 s).
  assert {
    condition     = output.levels == 4 && output.max_delay == "15s"
    error_message = "Expected 4 levels holding 15s, got ${output.levels} holding ${output.max_delay}."
  }
  assert {
    condition     = rabbitmq_delay_queue_set.this.bindings == data.rabbitmq_delay_topology.this.bindings
    error_message = "The applied set's bindings differ from what data source rabbitmq_delay_topology renders."
  }
}

# The broker holds the set as applied: the provider reads it back from the management API.
run "the_broker_holds_the_set" {
  command = plan

  module {
    source = "./tests/broker-sets"
  }

  variables {
    vhost = "/"
    name  = "tftest.delay-with-retries"
  }

  assert {
    condition     = output.count == 1
    error_message = "The broker holds ${output.count} whole sets named tftest.delay-with-retries, not 1; not whole: ${jsonencode(output.unreadable)}."
  }
  assert {
    condition     = output.set.levels == 4 && output.set.radix == 2 && output.set.queue_type == "quorum"
    error_message = "The broker's set is not the one applied: ${jsonencode(output.set)}."
  }
  assert {
    condition = toset([for r in output.set.routes : "${r.key} -> ${r.destination_type == null ? "queue" : r.destination_type} ${r.destination}"]) == toset([
      "orders -> exchange amq.direct",
      "billing -> exchange amq.topic",
    ])
    error_message = "The broker's set has other routes: ${jsonencode(output.set.routes)}."
  }
}
