// Package faults holds the fault tests of delay queue sets: real RabbitMQ
// nodes of their own on 127.0.0.1, of the version RABBITMQ_VERSION picks
// (4.3 or 3.10), started, stopped, killed and restarted by
// scripts/rabbitmq-nodes.sh, with sets applied through the provider by a
// real terraform and real messages in flight. There is no non-test code.
//
//   - TestFaultBrokerRestart and TestFaultRestartWhileDraining: a node
//     stopped and started with messages in flight, the second while an
//     older generation drains.
//   - TestFaultChecksWithStatistics and TestFaultChecksWithoutStatistics:
//     repeated checks of a draining generation send nothing on early.
//   - TestFaultClusterNodeLoss: a 3-node cluster loses, by kill -9, the
//     node that leads the most of the set's queues.
//   - TestFaultManagementTLS and TestFaultManagedBroker: the management API
//     over TLS, and the managed-broker profile (benchmarks/managed-broker.md).
//
// Each test counts, for every message it published, whether it arrived,
// how often, and how late; `make test-faults` prints the table of all
// scenarios (lost, duplicated, early, extra lateness). The tests are slow
// (minutes) and start RabbitMQ nodes, so they run only with TF_ACC=1 and
// RABBITMQ_FAULTS=1, as `make test-faults` sets them; plain `go test ./...`
// and `make testacc` skip them. They stop every node they started, also
// when they fail; the shared broker of scripts/rabbitmq.sh is not used.
//
// With FAULTS_MARKDOWN naming a file (`make test-faults
// FAULTS_MARKDOWN=benchmarks/faults.md`), a run that passed also writes its
// results there, every number from the run.
package faults
