package machine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// UnknownCommit is Provenance.Commit outside a git checkout, or without git.
const UnknownCommit = "unknown"

// Provenance is where and when a measurement was made. Collect fills in
// the commit, the date and the machine; the caller adds the versions of
// the broker and of Terraform it asked for, which Markdown leaves out
// while they are empty. It is stored with the figures (in JSON, for
// example) so that a report rendered again later names the run's
// provenance, not the renderer's.
type Provenance struct {
	// Commit is the abbreviated hash of the checkout's HEAD, or
	// UnknownCommit; Dirty is true when tracked files differed from it.
	Commit string `json:"commit"`
	Dirty  bool   `json:"uncommitted_changes"`
	// Date is when the measurement started, in UTC.
	Date      time.Time `json:"date"`
	CPUs      int       `json:"cpus"`
	CPUModel  string    `json:"cpu_model,omitempty"`
	MemoryKiB int64     `json:"memory_kib,omitempty"`
	OS        string    `json:"os"`
	Arch      string    `json:"arch"`
	Go        string    `json:"go"`
	RabbitMQ  string    `json:"rabbitmq,omitempty"`
	Erlang    string    `json:"erlang,omitempty"`
	// MetadataStore is the broker's: Khepri or Mnesia.
	MetadataStore string `json:"metadata_store,omitempty"`
	Terraform     string `json:"terraform,omitempty"`
}

// Collect returns the provenance of a measurement that starts now, of the
// git checkout that holds dir (the working directory when dir is "").
func Collect(ctx context.Context, dir string) Provenance {
	p := Provenance{
		Date: time.Now().UTC(), CPUs: runtime.NumCPU(), CPUModel: cpuModel("/proc/cpuinfo"),
		MemoryKiB: memTotalKiB("/proc/meminfo"), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version(),
	}
	p.Commit, p.Dirty = Commit(ctx, dir)
	return p
}

// Machine describes the computer, for example "2 CPUs (Intel(R) Xeon(R)
// …), 24.0 GiB RAM, linux/amd64". Parts that could not be read are left out.
func (p Provenance) Machine() string {
	parts := []string{fmt.Sprintf("%d CPUs", p.CPUs)}
	if p.CPUModel != "" {
		parts[0] += " (" + p.CPUModel + ")"
	}
	if p.MemoryKiB > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(p.MemoryKiB)/(1<<20)))
	}
	parts = append(parts, p.OS+"/"+p.Arch)
	return strings.Join(parts, ", ")
}

// Revision is the commit, followed by " (with uncommitted changes)" when
// the checkout had some.
func (p Provenance) Revision() string {
	if p.Dirty {
		return p.Commit + " (with uncommitted changes)"
	}
	return p.Commit
}

// Markdown is the paragraph every results file opens with, for example:
//
//	Measured at commit 5dae7b0abcde (with uncommitted changes) on
//	2026-11-24 01:08 UTC. Machine: 2 CPUs (…), 24.0 GiB RAM, linux/amd64.
//	Software: go1.26.8, RabbitMQ 3.10.8 (Erlang 25.2.3), Terraform 1.11.4.
//
// on one line, ending with a newline.
func (p Provenance) Markdown() string {
	software := []string{p.Go}
	if p.RabbitMQ != "" {
		rabbit := "RabbitMQ " + p.RabbitMQ
		var details []string
		if p.Erlang != "" {
			details = append(details, "Erlang "+p.Erlang)
		}
		if p.MetadataStore != "" {
			details = append(details, "metadata in "+p.MetadataStore)
		}
		if len(details) > 0 {
			rabbit += " (" + strings.Join(details, ", ") + ")"
		}
		software = append(software, rabbit)
	}
	if p.Terraform != "" {
		software = append(software, "Terraform "+p.Terraform)
	}
	return fmt.Sprintf("Measured at commit %s on %s. Machine: %s. Software: %s.\n",
		p.Revision(), p.Date.UTC().Format("2006-01-02 15:04 MST"), p.Machine(), strings.Join(software, ", "))
}

// Commit returns the abbreviated hash of HEAD of the git checkout that
// holds dir, and whether its tracked files differ from HEAD (untracked
// files do not count, nor do results files under the checkout's
// benchmarks/, which one measurement rewrites before the next starts;
// when git status fails, they are taken to differ); UnknownCommit when dir
// is in no checkout or git cannot be run.
func Commit(ctx context.Context, dir string) (hash string, dirty bool) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	hash, err := git("rev-parse", "--short=12", "HEAD")
	if err != nil || hash == "" {
		return UnknownCommit, false
	}
	status, err := git("status", "--porcelain", "--untracked-files=no", "--", ":/", ":(top,exclude)benchmarks")
	return hash, err != nil || status != ""
}

// TerraformVersion asks a terraform binary its version, such as "1.11.4".
func TerraformVersion(ctx context.Context, terraform string) (string, error) {
	cmd := exec.CommandContext(ctx, terraform, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("running %s version: %w: %s", terraform, err, strings.TrimSpace(stderr.String()))
	}
	var version struct {
		Terraform string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &version); err != nil || version.Terraform == "" {
		return "", fmt.Errorf("%s version -json said %q, without a terraform_version", terraform, out)
	}
	return version.Terraform, nil
}

// cpuModel is the first "model name" of a /proc/cpuinfo file.
func cpuModel(path string) string {
	return field(path, "model name")
}

// memTotalKiB is MemTotal of a /proc/meminfo file, in KiB.
func memTotalKiB(path string) int64 {
	kib, _ := kibibytes(field(path, "MemTotal"))
	return kib
}

// kibibytes reads a size of a /proc file's field, "123456 kB", in KiB;
// false when value is not one.
func kibibytes(value string) (int64, bool) {
	kib, err := strconv.ParseInt(strings.TrimSuffix(value, " kB"), 10, 64)
	return kib, err == nil
}

// field returns the value of the first "name: value" line of a file, or
// "" if there is none.
func field(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		key, value, ok := strings.Cut(scanner.Text(), ":")
		if ok && strings.TrimSpace(key) == name {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
