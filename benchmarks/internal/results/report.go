package results

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
	"github.com/delayqueue/terraform-provider-rabbitmq/internal/machine"
)

// Main runs the command name once its flags are parsed (parsed: their error; 0
// for -h, 2 for another), with a context Ctrl-C cancels, and returns work's code.
func Main(name string, stderr io.Writer, parsed error, work func(ctx context.Context) (int, error)) int {
	if errors.Is(parsed, flag.ErrHelp) {
		return 0
	}
	if parsed != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, parsed)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code, err := work(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
	}
	return code
}

// Failed is the exit code and error of a command that could not run: 2
// when err is set.
func Failed(err error) (int, error) {
	if err != nil {
		return 2, err
	}
	return 0, nil
}

// List parses each item of a comma-separated list with parse, leaving out
// empty ones.
func List[T any](list string, parse func(string) (T, error)) ([]T, error) {
	var items []T
	for _, field := range strings.Split(list, ",") {
		if field = strings.TrimSpace(field); field == "" {
			continue
		}
		item, err := parse(field)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	return items, nil
}

// Words are the items of a comma-separated list, leaving out empty ones.
func Words(list string) []string {
	words, _ := List(list, func(word string) (string, error) { return word, nil })
	return words
}

// EnvOr is the environment variable name, or fallback when it is empty.
func EnvOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// Provenance is the header of a run's results: the commit at dir ("" the working
// directory's), the machine, the broker's versions and terraform's when named.
func Provenance(ctx context.Context, dir string, node broker.NodeInfo, terraform string) (machine.Provenance, error) {
	p := machine.Collect(ctx, dir)
	p.RabbitMQ, p.Erlang, p.MetadataStore = node.RabbitMQVersion, node.ErlangVersion, node.MetadataStore
	if terraform == "" {
		return p, nil
	}
	var err error
	p.Terraform, err = machine.TerraformVersion(ctx, terraform)
	return p, err
}

// IsLocal tells whether the broker's URL (AMQP or management) names this
// machine, where the broker's process, and so its CPU time, can be seen.
func IsLocal(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// Count writes n with a comma between groups of three digits: 1,234,567.
func Count(n int) string {
	digits := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Join joins what write makes of each item with sep.
func Join[T any](items []T, sep string, write func(T) string) string {
	parts := make([]string, len(items))
	for i, item := range items {
		parts[i] = write(item)
	}
	return strings.Join(parts, sep)
}

// Rate writes a rate in whole messages per second, as [Count] does.
func Rate(rate float64) string { return Count(int(math.Round(rate))) }

// WriteFile writes text to the file path, unless path is empty, and says
// "wrote PATH" on log.
func WriteFile(path, text string, log io.Writer) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return err
	}
	_, err := fmt.Fprintf(log, "wrote %s\n", path)
	return err
}
