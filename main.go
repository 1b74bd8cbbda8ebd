// Command terraform-provider-rabbitmq serves the rabbitmq provider, which
// declares broker-native delay topologies on RabbitMQ.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
)

// version is set by goreleaser at build time (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/delayqueue/rabbitmq",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
