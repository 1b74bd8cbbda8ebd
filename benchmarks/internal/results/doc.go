// Package results is what the commands of the benchmarks module
// (benchdelays, benchcontrolplane, delaydemo) share to run and to write
// their results files, so that each writes them the same way:
//
//   - [Main] runs a command once its flags are parsed: -h exits 0, a flag
//     error 2, and the work gets a context that Ctrl-C cancels.
//   - [EnvOr] gives a flag its default from the environment, [List] and
//     [Words] read a comma-separated one, and [Failed] is the exit code of
//     a command that could not run.
//   - [Provenance] is a run's header: the commit, date and machine
//     (internal/machine), the broker's versions and terraform's; its
//     Markdown method writes it.
//   - [IsLocal] tells whether the broker runs on this machine, where its
//     process's CPU time can be read.
//   - [Count] and [Rate] write whole numbers with a comma between groups
//     of three digits, as every table of the results files does.
//   - [Table] and [PlainTable] write a Markdown table of rows ([Cells]),
//     padded or not.
//   - [WriteFile] writes a results file and says so.
package results
