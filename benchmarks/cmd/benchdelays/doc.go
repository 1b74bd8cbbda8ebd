// Command benchdelays measures the data path of delay queue sets on a real
// broker: for each queue type and dead-letter strategy the resource offers,
// in radix 2 or another radix (variants such as quorum-at-most-once-r16),
// it declares a set through the provider's code path, publishes persistent
// messages with confirms at a paced rate and delays drawn uniformly over the
// run's range (every set holds it with the fewest digits of its radix),
// consumes them from a route's queue and records, per message, its lateness
// and hop count, and in total the early, lost, duplicated and unroutable
// ones, the throughput and the broker's CPU per message. A one-level set of
// the same queue type is the one-hop baseline. Trials publish for twice the
// longest delay by default, so the figures are steady-state. It measures
// the broker's idle CPU and memory with a set of each of some radixes
// declared and empty, then searches, per variant, the highest paced rate at
// which p99 lateness stays under a limit, closing in on it in 10 % steps,
// and holds the rates against a per-hop cost model fitted to the run.
//
// It prints the tables and writes them to -out as delays.md, with the plot
// delays.svg and every figure in delays.json. It exits 1 when a main trial
// lost a message or any trial delivered one early, and 2 when it cannot run.
// Its paths (-out, -render, the default -rabbitmqctl) are relative to the
// working directory: make builds it and runs it from the repository's root.
//
//	benchdelays -quick -out /tmp/bench   # a short run to try it
//	benchdelays -estimate                # what the run measures, and how long it takes
//	benchdelays -out benchmarks          # what make bench-delays runs
//	benchdelays -render benchmarks/delays.json -out benchmarks  # the text again, same figures
package main
