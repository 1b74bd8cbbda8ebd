package publishers

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/provider"
)

const (
	// publishersEnv must be set, besides TF_ACC, for TestAccPublishers to
	// run: `make publishers` sets it once scripts/publishers-setup.sh has
	// installed every runtime and client.
	publishersEnv = "RABBITMQ_PUBLISHERS"
	// The set the publishers publish through, and its route's queue.
	setName      = "publishers-test"
	arrivedQueue = "publishers-test-arrived"
	routeKey     = "published"
)

// The set's key format, as its configuration below declares it.
const (
	setLevels       = 3
	setRadix        = 4
	setResolutionMs = 250
)

const setConfig = `
resource "rabbitmq_delay_queue_set" "publishers" {
  name       = "` + setName + `"
  levels     = 3
  radix      = 4
  resolution = "250ms"

  # The test has checked its own messages by then; a failed run leaves none behind.
  force_destroy = true

  route {
    destination = "` + arrivedQueue + `"
    key         = "` + routeKey + `"
  }
}
`

// publisher is one program of the publishing guide: how to run it, and the
// delay it publishes its message with.
type publisher struct {
	name    string
	command []string
	delay   time.Duration
}

// publishers are the guide's four programs, built or compiled into dir
// where they need it, each with a delay of its own (1999ms is rounded up
// to 2s, 8 ticks).
func publishers(t *testing.T, dir string) []publisher {
	t.Helper()
	run := func(name string, args ...string) {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	goBinary := filepath.Join(dir, "publisher")
	run("go", "build", "-o", goBinary, "./go")
	classpath := os.Getenv("PUBLISHERS_JAVA_CLASSPATH")
	run("javac", "-d", dir, "-cp", classpath, "java/DelayRoutingKey.java", "java/Publish.java")
	python := os.Getenv("PUBLISHERS_PYTHON")
	if python == "" {
		python = "python3"
	}
	return []publisher{
		{"go", []string{goBinary}, 2750 * time.Millisecond},
		{"python", []string{python, "python/publish.py"}, time.Second},
		{"node", []string{"node", "node/publish.js"}, 1999 * time.Millisecond},
		{"java", []string{"java", "-cp", dir + string(os.PathListSeparator) + classpath, "Publish"}, 3 * time.Second},
	}
}

// TestAccPublishers runs each publisher of the publishing guide against a set
// terraform applies, and checks that every message arrived through it once,
// none before its delay.
func TestAccPublishers(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" || os.Getenv(publishersEnv) == "" {
		t.Skipf("runs the Go, Python, Node.js and Java publishers against the local broker; run it with make publishers (%s=1 %s=1)",
			resource.EnvTfAcc, publishersEnv)
	}
	ch, amqpURL := emptyArrivalQueue(t, arrivedQueue)
	programs := publishers(t, t.TempDir())

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: setConfig,
			Check: func(*terraform.State) error {
				return publishAndReceive(t, ch, amqpURL, programs)
			},
		}},
	})
}

// defaultVHostURL is raw, or the local broker's URL, with the vhost "/"
// written as the AMQP URI spec has it, "%2F": the Java client reads an
// empty path ("…:5672/") as the vhost "", where Go's and Python's clients
// read "/".
func defaultVHostURL(raw string) string {
	if raw == "" {
		raw = "amqp://guest:guest@127.0.0.1:5672/"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Path != "" && u.Path != "/") {
		return raw
	}
	u.Path, u.RawPath = "//", "/%2F"
	return u.String()
}

// publishAndReceive runs each publisher, then consumes the route's queue
// until every message has arrived, and fails on a message that came before
// its delay, twice, or not at all.
func publishAndReceive(t *testing.T, ch *amqp.Channel, amqpURL string, programs []publisher) error {
	t.Helper()
	deliveries, err := ch.Consume(arrivedQueue, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	published := map[string]time.Time{} // by body: when its publisher started
	delays := map[string]time.Duration{}
	var longest time.Duration
	for _, p := range programs {
		body := fmt.Sprintf("%s-%d", p.name, time.Now().UnixNano())
		cmd := exec.Command(p.command[0], p.command[1:]...)
		cmd.Env = append(os.Environ(), "RABBITMQ_AMQP_URL="+amqpURL, "DELAY_EXCHANGE="+setName+".ingest",
			"DELAY_LEVELS="+strconv.Itoa(setLevels), "DELAY_RADIX="+strconv.Itoa(setRadix),
			"DELAY_RESOLUTION_MS="+strconv.Itoa(setResolutionMs), "DELAY_KEY="+routeKey,
			"DELAY_MS="+strconv.FormatInt(p.delay.Milliseconds(), 10), "DELAY_BODY="+body)
		published[body], delays[body] = time.Now(), p.delay
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("the %s publisher: %v\n%s", p.name, err, out)
		}
		longest = max(longest, p.delay)
	}
	// A quorum queue's expiry clock counts whole milliseconds, so a message
	// may leave up to 1 ms before its delay on this clock.
	const expiryClock = time.Millisecond
	deadline := time.After(longest + time.Minute)
	arrived := map[string]bool{}
	for len(arrived) < len(programs) {
		select {
		case d, open := <-deliveries:
			if !open {
				return fmt.Errorf("the channel closed after %d of %d messages", len(arrived), len(programs))
			}
			at, body := time.Now(), string(d.Body)
			switch start, ok := published[body]; {
			case !ok:
				t.Errorf("a message nobody published here arrived: %q (routing key %s)", body, d.RoutingKey)
			case arrived[body]:
				t.Errorf("%s arrived twice", body)
			case at.Sub(start) < delays[body]-expiryClock:
				t.Errorf("%s arrived early: %s after its publisher started, for a delay of %s", body, at.Sub(start), delays[body])
			}
			if _, ok := published[body]; ok {
				arrived[body] = true
			}
			if err := d.Ack(false); err != nil {
				return err
			}
		case <-deadline:
			for body := range published {
				if !arrived[body] {
					t.Errorf("%s never arrived (lost, or parked in %s.unroutable)", body, setName)
				}
			}
			return fmt.Errorf("%d of %d messages arrived", len(arrived), len(programs))
		}
	}
	if !t.Failed() {
		t.Logf("every publisher's message arrived once, none early: %d messages", len(arrived))
	}
	return nil
}

// providerFactories serves this tree's provider to the acceptance tests.
var providerFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"rabbitmq": providerserver.NewProtocol6WithError(provider.New("test")()),
}

// emptyArrivalQueue declares queue, empty, on the broker of
// RABBITMQ_AMQP_URL, deleted when t ends, and returns a channel open on it
// and the URL the publishers are given.
func emptyArrivalQueue(t *testing.T, queue string) (*amqp.Channel, string) {
	t.Helper()
	amqpURL := defaultVHostURL(os.Getenv("RABBITMQ_AMQP_URL"))
	conn, err := amqp.Dial(amqpURL)
	if err != nil {
		t.Fatalf("connect to the broker (RABBITMQ_AMQP_URL): %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(queue, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = ch.QueueDelete(queue, false, false, false) })
	if _, err := ch.QueuePurge(queue, false); err != nil {
		t.Fatal(err)
	}
	return ch, amqpURL
}
