package machine

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestFields(t *testing.T) {
	dir := t.TempDir()
	cpuinfo := filepath.Join(dir, "cpuinfo")
	meminfo := filepath.Join(dir, "meminfo")
	writeFile(t, cpuinfo, "processor\t: 0\nmodel name\t: Example CPU @ 2.00GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: Example CPU @ 2.00GHz\n")
	writeFile(t, meminfo, "MemTotal:       25165824 kB\nMemFree:         1000 kB\n")
	if got, want := cpuModel(cpuinfo), "Example CPU @ 2.00GHz"; got != want {
		t.Errorf("cpuModel = %q, want %q", got, want)
	}
	if got, want := memTotalKiB(meminfo), int64(25165824); got != want {
		t.Errorf("memTotalKiB = %d, want %d", got, want)
	}
	if got := cpuModel(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("cpuModel of a missing file = %q, want empty", got)
	}
	if got := memTotalKiB(cpuinfo); got != 0 {
		t.Errorf("memTotalKiB of a file without MemTotal = %d, want 0", got)
	}
}

// resultsCommit is what the repository's check looks for in every results file.
var resultsCommit = regexp.MustCompile(`commit[^|]*[0-9a-f]{7}`)

func TestMarkdown(t *testing.T) {
	t.Parallel()
	p := Provenance{
		Commit: "5dae7b0abcde", Date: time.Date(2026, 11, 24, 1, 8, 59, 0, time.UTC),
		CPUs: 2, CPUModel: "Example CPU", MemoryKiB: 25165824, OS: "linux", Arch: "amd64", Go: "go1.26.8",
		RabbitMQ: "3.10.8", Erlang: "25.2.3", Terraform: "1.11.4",
	}
	tests := map[string]struct {
		change func(*Provenance)
		want   string
	}{
		"everything": {
			change: func(*Provenance) {},
			want: "Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs (Example CPU), 24.0 GiB RAM, linux/amd64. " +
				"Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3), Terraform 1.11.4.\n",
		},
		"uncommitted changes, no terraform": {
			change: func(p *Provenance) { p.Dirty, p.Terraform = true, "" },
			want: "Measured at commit 5dae7b0abcde (with uncommitted changes) on 2026-11-24 01:08 UTC. Machine: 2 CPUs (Example CPU), 24.0 GiB RAM, linux/amd64. " +
				"Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3).\n",
		},
		"no broker, machine unreadable": {
			change: func(p *Provenance) { p.RabbitMQ, p.Erlang, p.CPUModel, p.MemoryKiB = "", "", "", 0 },
			want: "Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs, linux/amd64. " +
				"Software: go1.26.8, Terraform 1.11.4.\n",
		},
		"the broker's metadata store": {
			change: func(p *Provenance) { p.RabbitMQ, p.Erlang, p.MetadataStore = "4.3.6", "29.1.2", "Khepri" },
			want: "Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs (Example CPU), 24.0 GiB RAM, linux/amd64. " +
				"Software: go1.26.8, RabbitMQ 4.3.6 (Erlang 29.1.2, metadata in Khepri), Terraform 1.11.4.\n",
		},
		"a date in another zone is written in UTC": {
			change: func(p *Provenance) { p.Date = p.Date.In(time.FixedZone("CET", 3600)) },
			want: "Measured at commit 5dae7b0abcde on 2026-11-24 01:08 UTC. Machine: 2 CPUs (Example CPU), 24.0 GiB RAM, linux/amd64. " +
				"Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3), Terraform 1.11.4.\n",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := p
			tt.change(&p)
			got := p.Markdown()
			if got != tt.want {
				t.Errorf("Markdown() =\n%q\nwant\n%q", got, tt.want)
			}
			if !resultsCommit.MatchString(got) {
				t.Errorf("Markdown() = %q does not match %s", got, resultsCommit)
			}
		})
	}
	unknown := p
	unknown.Commit = UnknownCommit
	if got := unknown.Markdown(); !strings.Contains(got, "commit unknown on") {
		t.Errorf("Markdown() without a commit = %q, want it to say the commit is unknown", got)
	}
}

// TestCommit runs git in a repository of its own: a clean checkout, one
// with an untracked file only, one with a changed tracked file, and a
// directory that is no checkout.
func TestCommit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := t.Context()
	notRepo := t.TempDir()
	if hash, dirty := Commit(ctx, notRepo); hash != UnknownCommit || dirty {
		t.Errorf("Commit outside a checkout = %q, %t; want %q, false", hash, dirty, UnknownCommit)
	}

	repo := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.com",
			"-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	writeFile(t, filepath.Join(repo, "tracked"), "one\n")
	if err := os.Mkdir(filepath.Join(repo, "benchmarks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(repo, "benchmarks", "results.md"), "old\n")
	git("add", "tracked", "benchmarks/results.md")
	git("commit", "-q", "-m", "first")
	head := git("rev-parse", "HEAD")

	hash, dirty := Commit(ctx, repo)
	if len(hash) != 12 || !strings.HasPrefix(head, hash) || dirty {
		t.Errorf("Commit of a clean checkout = %q, %t; want the first 12 digits of %s, false", hash, dirty, head)
	}
	sub := filepath.Join(repo, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := Commit(ctx, sub); got != hash {
		t.Errorf("Commit of a subdirectory = %q, want %q", got, hash)
	}
	writeFile(t, filepath.Join(repo, "untracked"), "x\n")
	if _, dirty := Commit(ctx, repo); dirty {
		t.Error("an untracked file counts as an uncommitted change")
	}
	writeFile(t, filepath.Join(repo, "benchmarks", "results.md"), "new\n")
	if _, dirty := Commit(ctx, sub); dirty {
		t.Error("a results file rewritten under benchmarks/ counts as an uncommitted change")
	}
	writeFile(t, filepath.Join(repo, "tracked"), "two\n")
	if got, dirty := Commit(ctx, sub); got != hash || !dirty {
		t.Errorf("Commit of a subdirectory with a changed tracked file = %q, %t; want %q, true", got, dirty, hash)
	}
	if got, dirty := Commit(ctx, repo); got != hash || !dirty {
		t.Errorf("Commit with a changed tracked file = %q, %t; want %q, true", got, dirty, hash)
	}
	p := Collect(ctx, repo)
	if p.Commit != hash || !p.Dirty || !strings.Contains(p.Markdown(), "commit "+hash+" (with uncommitted changes)") {
		t.Errorf("Collect = %+v; Markdown %q", p, p.Markdown())
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC()
	p := Collect(t.Context(), t.TempDir())
	if p.CPUs < 1 || !strings.HasPrefix(p.Go, "go") || p.OS == "" || p.Arch == "" || p.Date.Before(before.Add(-time.Second)) || p.Date.Location() != time.UTC {
		t.Errorf("Collect = %+v", p)
	}
	if !strings.Contains(p.Machine(), "CPUs") {
		t.Errorf("Machine() = %q, want it to count the CPUs", p.Machine())
	}
}

// TestTerraformVersion runs a stand-in for terraform that prints what
// terraform version -json prints, and one that prints something else.
func TestTerraformVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "terraform")
	writeFile(t, good, "#!/bin/sh\n[ \"$1 $2\" = 'version -json' ] || exit 1\necho '{\"terraform_version\": \"1.11.4\", \"platform\": \"linux_amd64\"}'\n")
	bad := filepath.Join(dir, "not-terraform")
	writeFile(t, bad, "#!/bin/sh\necho 'Terraform v1.11.4'\n")
	for _, path := range []string{good, bad} {
		if err := os.Chmod(path, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := TerraformVersion(t.Context(), good); err != nil || got != "1.11.4" {
		t.Errorf("TerraformVersion = %q, %v; want 1.11.4", got, err)
	}
	if got, err := TerraformVersion(t.Context(), bad); err == nil {
		t.Errorf("TerraformVersion of a binary without -json output = %q, want an error", got)
	}
	if _, err := TerraformVersion(t.Context(), filepath.Join(dir, "missing")); err == nil {
		t.Error("TerraformVersion of a missing binary succeeded")
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestThreadKind(t *testing.T) {
	for name, want := range map[string]string{
		"erts_sched_2": "erts_sched", "erts_dios_10": "erts_dios", "erts_poll_0": "erts_poll",
		"beam.smp": "beam.smp", "erts_ssig_disp": "erts_ssig_disp", "worker_": "worker_",
		// Erlang before 26 (RabbitMQ 3.10's 25), and a kind already grouped.
		"erts_sched": "erts_sched", "1_scheduler": "erts_sched", "2_scheduler": "erts_sched",
		"10_dirty_io_sch": "erts_dios", "1_dirty_io_sche": "erts_dios", "2_dirty_cpu_sch": "erts_dcpus",
		"1_aux": "erts_aux", "0_poller": "erts_poll", "x_scheduler": "x_scheduler",
	} {
		if got := ThreadKind(name); got != want {
			t.Errorf("ThreadKind(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestThreadCPUOfThisProcess(t *testing.T) {
	threads, err := ThreadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) == 0 {
		t.Fatal("no thread of this process read")
	}
	for kind, cpu := range threads {
		if kind == "" || cpu < 0 {
			t.Errorf("thread kind %q, CPU %s", kind, cpu)
		}
	}
}
