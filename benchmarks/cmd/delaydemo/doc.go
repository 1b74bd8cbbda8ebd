// Command delaydemo shows a delay queue set at work: it publishes a handful
// of messages with different delays to the set's ingest exchange, consumes
// them from a route's queue, and prints when each arrived as a table and an
// ASCII timeline. It exits 1 if a message arrived early, twice, or not at
// all, and 2 when it cannot run.
//
// The defaults match examples/demo's binary set; `make demo` passes the values
// of `terraform output -json` with -tf-output, once for each set of the
// example (-tf-set names the output object that holds a set's values):
//
//	delaydemo -declare-queue                                # declare the route's queue, then exit
//	delaydemo -tf-output outputs.json                       # publish, wait, report (top-level outputs)
//	delaydemo -tf-output outputs.json -tf-set radix16       # the same for the set in output radix16
package main
