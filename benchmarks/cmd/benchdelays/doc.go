// Command benchdelays measures the data path of delay queue sets on a real
// broker. For each variant (a queue type and dead-letter strategy in a radix,
// such as quorum-at-most-once-r16) it declares a set as the provider does,
// publishes persistent messages with confirms at a paced rate, delays drawn
// uniformly over the run's range, and records each message's lateness and
// hops, the early, lost, duplicated and unroutable ones, and the broker's CPU
// per message, beside a one-level set of the same kind (the one-hop
// baseline). It then measures idle sets of some radixes, searches each
// variant's highest rate with p99 under a limit, and holds the rates against
// a per-hop cost model fitted to the run.
//
// It writes delays.md, delays.svg, rates.svg and delays.json into -out, and
// exits 1 when a main trial lost a message or any trial delivered one early,
// 2 when it cannot run. Paths are relative to the working directory: make
// runs it from the repository's root.
//
//	benchdelays -quick -out /tmp/bench   # a short run to try it
//	benchdelays -estimate                # what the run measures, and how long it takes
//	benchdelays -out benchmarks          # what make bench-delays runs
//	benchdelays -render benchmarks/delays.json -out benchmarks  # the text again, same figures
package main
