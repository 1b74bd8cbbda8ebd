// Command benchcontrolplane measures what a delay queue set costs the
// control plane: it runs the real terraform, with the provider built from
// this checkout, to create, plan without changes and destroy sets of several
// sizes, in an empty vhost and in one holding thousands of unrelated queues
// and bindings, and prints the requests (counted by a proxy in front of the
// management API) and the wall and CPU times of each. It does the same for
// configurations of many sets against floors (the broker's cheapest ways,
// and Terraform's own cost for as many data sources), times peeks at an
// empty queue, and compares the two ways to create a fresh set.
//
//	go -C benchmarks run ./cmd/benchcontrolplane -terraform "$(scripts/terraform.sh)"   # make bench-control-plane
package main
