// Package machine says where a measurement was made and reads what the
// machine did meanwhile, from git and Linux's /proc. The benchmarks, the demo
// and the acceptance and fault tests that write results files under
// benchmarks/ use it; the provider does not.
//
// Where a measurement comes from: [Collect] returns a [Provenance] — the
// commit of the checkout that was measured, when, on which computer, with
// which Go — to which the caller adds the RabbitMQ, Erlang and Terraform
// versions ([TerraformVersion] asks a terraform binary). [Provenance.Markdown]
// is the paragraph every results file opens with, the same way in each:
// figures mean little without it; [Provenance.Machine] and
// [Provenance.Revision] are its parts. [Commit] alone reads the checkout's
// commit, or [UnknownCommit].
//
// What the machine did: counters that a caller reads before and after what it
// measures, and subtracts —
//   - [ProcessCPU]: the CPU time a process (the broker, terraform, the
//     provider) has used;
//   - [ThreadCPU]: the same for a process's threads, summed by
//     [ThreadKind], which names an Erlang VM thread's kind (schedulers,
//     dirty I/O, …) whichever Erlang release named the thread;
//   - [CPUTicks]: the busy and total ticks of all the machine's CPUs;
//
// and readings of the moment: [ResidentBytes], a process's resident memory,
// and [LoadAverage], the 1-minute load average.
package machine
