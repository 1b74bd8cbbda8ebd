// Package faults holds the fault tests of delay queue sets: real RabbitMQ
// nodes of their own on 127.0.0.1, of the version RABBITMQ_VERSION picks
// (4.3 or 3.10), started, stopped, killed and restarted by
// scripts/rabbitmq-nodes.sh, with sets applied through the provider by a
// real terraform and real messages in flight. There is no non-test code.
//
//   - TestFaultBrokerRestart: persistent messages in flight through a quorum
//     set on one node; the node is stopped and started again.
//   - TestFaultRestartWhileDraining: the same restart while an older
//     generation of the set drains, messages in both; the next apply waits
//     for the old generation and deletes it.
//   - TestFaultChecksWithStatistics and TestFaultChecksWithoutStatistics
//     (the latter on 4.x only): plans, applies and refused destroys check a
//     draining generation's queues again and again, with and without
//     management metrics, and no check sends a message on early.
//   - TestFaultClusterNodeLoss: a 3-node cluster joined with join_cluster;
//     the node leading the most of the set's queues is killed with kill -9
//     and started again later, once per dead-letter strategy. The cluster
//     bounds at-least-once dead-lettering's wait for lost confirms with
//     rabbit.dead_letter_worker_publisher_confirm_timeout, and the test
//     checks the bound.
//   - TestFaultManagementTLS: the provider against a management listener
//     with TLS that requires client certificates, from a CA the test makes.
//   - TestFaultManagedBroker: the managed-broker profile (node 6): an
//     operator policy on every queue (delivery-limit, max-length), a vhost
//     whose default queue type is quorum, a user with the management tag
//     alone, the management API over TLS with cacert_file; create, data
//     path, refused destroys, a switch to radix 16, a queue filled past
//     max-length (its plan warns), destroy. MANAGED_MARKDOWN names the
//     file it writes its version's section of (benchmarks/managed-broker.md).
//
// Each test counts, for every message it published, whether it arrived,
// how often, and how late; `make test-faults` prints the table of all
// scenarios (lost, duplicated, early, extra lateness). The tests are slow
// (minutes) and start RabbitMQ nodes, so they run only with TF_ACC=1 and
// RABBITMQ_FAULTS=1, as `make test-faults` sets them; plain `go test ./...`
// and `make testacc` skip them. They stop every node they started, also
// when they fail. The shared broker of scripts/rabbitmq.sh is not used. The
// package's other tests check its own helpers (the node log's errors, the
// write-up) and run with plain `go test`.
//
// With FAULTS_MARKDOWN naming a file (`make test-faults
// FAULTS_MARKDOWN=benchmarks/faults.md`), a run that passed also writes its
// results there: the commit, machine and versions it ran on, the fault
// table as printed, and the write-up of the findings and the broker
// settings they lead to, whose numbers all come from the run.
package faults
