package provider

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// transportWarnings warns, when the provider is configured (every plan and
// apply), of the settings under which the credentials are not protected on
// the way to the broker: basic authentication over http://, or AMQP's
// PLAIN login over amqp://, to a host that is not loopback, and
// insecure = true. Each comes from the block or the environment, so the
// warnings name no attribute.
func transportWarnings(settings broker.Config) diag.Diagnostics {
	var diags diag.Diagnostics
	u, err := url.Parse(settings.Endpoint)
	credentials := settings.Username != "" || settings.Password != ""
	if err == nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) && credentials {
		diags.AddWarning("RabbitMQ Credentials Sent in Clear",
			fmt.Sprintf("The endpoint %s is http:// to %s, which is not a loopback address: the username and password "+
				"travel in clear with every request (HTTP basic authentication), readable by anyone on the way. Use the "+
				"management API's https:// listener.", broker.RedactURL(settings.Endpoint), u.Hostname()))
	}
	amqp, err := url.Parse(settings.AMQPEndpoint)
	countsOverAMQP := !settings.DisableAMQPCounts && settings.AMQPEndpoint != ""
	if err == nil && countsOverAMQP && amqp.Scheme == "amqp" && !loopbackHost(amqp.Hostname()) && credentials {
		diags.AddWarning("RabbitMQ Credentials Sent in Clear over AMQP",
			fmt.Sprintf("The AMQP endpoint %s is amqp:// to %s, which is not a loopback address: the username and password "+
				"travel in clear each time the provider connects to count a quorum queue's messages, readable by anyone on "+
				"the way. Use the broker's amqps:// listener.", broker.RedactURL(settings.AMQPEndpoint), amqp.Hostname()))
	}
	if settings.Insecure {
		diags.AddWarning("RabbitMQ TLS Certificate Not Verified", "insecure = true (or RABBITMQ_INSECURE) skips verifying "+
			unverifiedCertificates(settings)+": anyone on the way can pose as the broker and read the username and "+
			"password. Give the CA that signed the certificate in cacert_file instead.")
	}
	return diags
}

// unverifiedCertificates names what insecure = true stops verifying: the
// AMQP connection uses the management API's TLS settings, so its
// certificate too where the provider counts over amqps (a configured
// amqps:// endpoint, or the default beside an https:// one without a
// proxy).
func unverifiedCertificates(settings broker.Config) string {
	amqps := strings.HasPrefix(strings.ToLower(settings.AMQPEndpoint), "amqps://") ||
		settings.AMQPEndpoint == "" && settings.Proxy == "" && strings.HasPrefix(strings.ToLower(settings.Endpoint), "https://")
	if amqps && !settings.DisableAMQPCounts {
		return "the TLS certificates of the management API and of the broker's AMQP listener"
	}
	return "the management API's TLS certificate"
}

// loopbackHost tells whether host, a URL's hostname, is this machine:
// localhost, or an address of 127.0.0.0/8 or ::1.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
