// Command benchcontrolplane measures what a delay queue set costs the
// control plane: for sets of several sizes it runs the real terraform with
// the provider built from this checkout against a RabbitMQ management API,
// and prints the requests and the wall time of a create (terraform apply),
// of a no-change terraform plan (a refresh), and of a destroy — on an
// otherwise empty vhost, then on one that also holds thousands of unrelated
// queues and bindings. Requests are counted by a reverse proxy between the
// provider and the broker, so every request counts, whoever makes it.
//
// The many-sets scenario does the same for one configuration of 10, then
// 100 sets (one resource block with for_each), adds a plan without refresh,
// and measures the CPU time of terraform, of the provider and of the
// broker per operation; and Terraform's own floor, a plan of as many data
// sources, which ask no broker.
//
// It also times the two ways of creating a fresh set that the broker
// offers — the provider's bounded parallel declares, and one definitions
// upload — so the choice between them rests on a figure.
//
//	go -C benchmarks run ./cmd/benchcontrolplane -terraform "$(scripts/terraform.sh)"   # make bench-control-plane
package main
