// Command terraform-provider-rabbitmq serves the rabbitmq provider, which
// declares broker-native delay topologies on RabbitMQ.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
)

// version is set by goreleaser at build time (-ldflags "-X main.version=…").
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve")
	flag.Parse()
	if !debug {
		// A debug session's logs go to the user's terminal, not to Terraform.
		quietUnlessLogging()
	}

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/delayqueue/rabbitmq",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietUnlessLogging turns the plugin SDKs' logs off unless a TF_LOG
// variable asks Terraform for logs. The framework writes a trace line for
// nearly every value it plans, and Terraform reads each line only to drop
// it: a plan of a hundred sets spent about a fifth of its time on that.
func quietUnlessLogging() {
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TF_LOG") && value != "" && !strings.EqualFold(value, "off") {
			return
		}
	}
	_ = os.Setenv("TF_LOG_SDK", "off")
}
