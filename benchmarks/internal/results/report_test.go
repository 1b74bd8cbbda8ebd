package results

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

func TestCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000: "20,000", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	t.Parallel()
	for rate, want := range map[float64]string{0: "0", 999.6: "1,000", 8000: "8,000", 123456: "123,456", 1234567: "1,234,567"} {
		if got := Rate(rate); got != want {
			t.Errorf("Rate(%g) = %q, want %q", rate, got, want)
		}
	}
}

func TestIsLocal(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]bool{
		"amqp://guest:guest@127.0.0.1:5672/": true,
		"amqp://localhost/":                  true,
		"amqps://[::1]:5671/":                true,
		"amqp://rabbit.example.com/":         false,
		"::not a url":                        false,
	} {
		if got := IsLocal(url); got != want {
			t.Errorf("IsLocal(%q) = %t, want %t", url, got, want)
		}
	}
}

func TestMainExitCodes(t *testing.T) {
	t.Parallel()
	var stderr bytes.Buffer
	ran := func(context.Context) (int, error) { t.Error("work ran after a flag error"); return 0, nil }
	if code := Main("cmd", &stderr, flag.ErrHelp, ran); code != 0 || stderr.Len() != 0 {
		t.Errorf("Main(-h) = %d, %q; want 0 and nothing said", code, stderr.String())
	}
	if code := Main("cmd", &stderr, errors.New("bad flag"), ran); code != 2 || stderr.String() != "cmd: bad flag\n" {
		t.Errorf("Main(flag error) = %d, %q; want 2 and the error", code, stderr.String())
	}
	stderr.Reset()
	code := Main("cmd", &stderr, nil, func(ctx context.Context) (int, error) {
		if ctx.Err() != nil {
			t.Error("work's context is done before it starts")
		}
		return 1, errors.New("failed")
	})
	if code != 1 || stderr.String() != "cmd: failed\n" {
		t.Errorf("Main(work fails) = %d, %q; want work's 1 and its error", code, stderr.String())
	}
}

func TestProvenance(t *testing.T) {
	t.Parallel()
	p, err := Provenance(t.Context(), "", broker.NodeInfo{RabbitMQVersion: "4.0.5", ErlangVersion: "27.3", MetadataStore: "mnesia"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.RabbitMQ != "4.0.5" || p.Erlang != "27.3" || p.MetadataStore != "mnesia" || p.Terraform != "" || p.Date.IsZero() {
		t.Errorf("Provenance = %+v; want the node's versions, a date and no terraform", p)
	}
	if _, err := Provenance(t.Context(), "", broker.NodeInfo{}, filepath.Join(t.TempDir(), "no-terraform")); err == nil {
		t.Error("Provenance with a terraform that does not exist succeeded")
	}
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	if err := WriteFile("", "text", &log); err != nil || log.Len() != 0 {
		t.Errorf("WriteFile(\"\") = %v, said %q; want nothing done", err, log.String())
	}
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteFile(path, "# report\n", &log); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "# report\n" {
		t.Errorf("the file holds %q, %v", data, err)
	}
	if !strings.Contains(log.String(), "wrote "+path) {
		t.Errorf("WriteFile said %q, want it to name the file", log.String())
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	got, err := List(" 8, ,16,", strconv.Atoi)
	if err != nil || !slices.Equal(got, []int{8, 16}) {
		t.Errorf("List = %v, %v, want [8 16]", got, err)
	}
	if _, err := List("8,x", strconv.Atoi); err == nil {
		t.Error("List of a bad item succeeded")
	}
	if words := Words(" a,,b "); !slices.Equal(words, []string{"a", "b"}) {
		t.Errorf("Words = %q, want [a b]", words)
	}
	if code, err := Failed(errors.New("no")); code != 2 || err == nil {
		t.Errorf("Failed(error) = %d, %v, want 2 and the error", code, err)
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	rows := [][]string{{"name", "n"}, Cells("a", 1234)}
	var padded, plain strings.Builder
	Table(&padded, rows, "lr")
	PlainTable(&plain, rows, "lr")
	if want := "| name |    n |\n| ---- | ---: |\n| a    | 1234 |\n"; padded.String() != want {
		t.Errorf("Table = %q, want %q", padded.String(), want)
	}
	if want := "| name | n |\n|---|--:|\n| a | 1234 |\n"; plain.String() != want {
		t.Errorf("PlainTable = %q, want %q", plain.String(), want)
	}
}

func TestJoin(t *testing.T) {
	t.Parallel()
	if got := Join([]int{2, 16, 256}, ", ", strconv.Itoa); got != "2, 16, 256" {
		t.Errorf("Join = %q, want \"2, 16, 256\"", got)
	}
	if got := Join(nil, ",", strconv.Itoa); got != "" {
		t.Errorf("Join(nil) = %q, want \"\"", got)
	}
}
