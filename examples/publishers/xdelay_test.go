package publishers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	amqp "github.com/rabbitmq/amqp091-go"
)

// The delayed exchange the x-delay publishers publish to, its consumers'
// queue and its parking queue.
const (
	xDelayName    = "publishers-xdelay"
	xDelayArrived = "publishers-xdelay-arrived"
	xDelayParking = xDelayName + ".unroutable"
)

const xDelayConfig = `
resource "rabbitmq_delayed_exchange" "publishers" {
  name          = "` + xDelayName + `"
  delays_ms     = [1000, 2500]
  delivery_type = "direct"

  # The test has checked its own messages by then; a failed run leaves none behind.
  force_destroy = true
}
`

// xDelayMessage is one run of an x-delay publisher: the header it sends
// (X_DELAY, X_DELAY_TYPE; no X_DELAY, no header) and whether the message
// is to be delivered after delay or parked.
type xDelayMessage struct {
	publisher string
	command   []string
	xDelay    string
	kind      string
	delay     time.Duration
	parked    bool
}

// xDelayMessages are the Go and Python publishers' messages: an int and a
// long of a listed delay are delivered, a string, an unlisted delay and no
// header are parked.
func xDelayMessages(t *testing.T, dir string) []xDelayMessage {
	t.Helper()
	goBinary := filepath.Join(dir, "go-xdelay")
	if out, err := exec.Command("go", "build", "-o", goBinary, "./go-xdelay").CombinedOutput(); err != nil {
		t.Fatalf("go build ./go-xdelay: %v\n%s", err, out)
	}
	python := os.Getenv("PUBLISHERS_PYTHON")
	if python == "" {
		python = "python3"
	}
	goCommand, pythonCommand := []string{goBinary}, []string{python, "python/publish_x_delay.py"}
	return []xDelayMessage{
		{publisher: "go", command: goCommand, xDelay: "1000", kind: "int", delay: time.Second},
		{publisher: "go", command: goCommand, xDelay: "2500", kind: "long", delay: 2500 * time.Millisecond},
		{publisher: "go", command: goCommand, xDelay: "1000", kind: "string", parked: true},
		{publisher: "go", command: goCommand, xDelay: "1500", kind: "int", parked: true},
		{publisher: "go", command: goCommand, parked: true},
		{publisher: "python", command: pythonCommand, xDelay: "2500", kind: "int", delay: 2500 * time.Millisecond},
		{publisher: "python", command: pythonCommand, xDelay: "1000", kind: "string", parked: true},
		{publisher: "python", command: pythonCommand, xDelay: "2000", kind: "int", parked: true},
	}
}

// TestAccPublishersXDelay runs the Go and Python x-delay publishers against a
// delayed exchange terraform applies: each message with a listed delay
// arrives at the delivery exchange's queue once, never early; each string,
// unlisted or missing x-delay is parked, once, and none is lost.
func TestAccPublishersXDelay(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" || os.Getenv(publishersEnv) == "" {
		t.Skipf("runs the x-delay publishers against the local broker; run it with make publishers (%s=1 %s=1)",
			resource.EnvTfAcc, publishersEnv)
	}
	ch, amqpURL := emptyArrivalQueue(t, xDelayArrived)
	messages := xDelayMessages(t, t.TempDir())

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		Steps: []resource.TestStep{{
			Config: xDelayConfig,
			Check: func(*terraform.State) error {
				// Bound as a consumer of the plugin's exchange binds its queue.
				if err := ch.QueueBind(xDelayArrived, routeKey, xDelayName+".delivery", false, nil); err != nil {
					return err
				}
				return publishXDelayAndReceive(t, ch, amqpURL, messages)
			},
		}},
	})
}

// publishXDelayAndReceive runs each publisher, then consumes the delivery
// exchange's queue and the parking queue until every message has arrived,
// and fails on a message that came early, twice, to the wrong queue, or not
// at all.
func publishXDelayAndReceive(t *testing.T, ch *amqp.Channel, amqpURL string, messages []xDelayMessage) error {
	t.Helper()
	delivered, err := ch.Consume(xDelayArrived, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	parked, err := ch.Consume(xDelayParking, "", false, false, false, false, nil)
	if err != nil {
		return err
	}
	sent := map[string]xDelayMessage{}
	published := map[string]time.Time{} // by body: when its publisher started
	for i, m := range messages {
		body := fmt.Sprintf("%s-%s-%s-%d-%d", m.publisher, m.kind, m.xDelay, i, time.Now().UnixNano())
		cmd := exec.Command(m.command[0], m.command[1:]...)
		cmd.Env = append(os.Environ(), "RABBITMQ_AMQP_URL="+amqpURL, "DELAY_EXCHANGE="+xDelayName, "DELAY_KEY="+routeKey,
			"X_DELAY="+m.xDelay, "X_DELAY_TYPE="+m.kind, "DELAY_BODY="+body)
		sent[body], published[body] = m, time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("the %s publisher: %v\n%s", m.publisher, err, out)
		}
	}
	// A quorum queue's expiry clock counts whole milliseconds (publishAndReceive).
	const expiryClock = time.Millisecond
	deadline := time.After(time.Minute)
	arrived := map[string]bool{}
	for len(arrived) < len(messages) {
		var d amqp.Delivery
		var open, wasParked bool
		select {
		case d, open = <-delivered:
		case d, open = <-parked:
			wasParked = true
		case <-deadline:
			for body := range sent {
				if !arrived[body] {
					t.Errorf("%s never arrived (lost)", body)
				}
			}
			return fmt.Errorf("%d of %d messages arrived", len(arrived), len(messages))
		}
		if !open {
			return fmt.Errorf("the channel closed after %d of %d messages", len(arrived), len(messages))
		}
		at, body := time.Now(), string(d.Body)
		m, ok := sent[body]
		switch {
		case !ok:
			t.Errorf("a message nobody published here arrived: %q", body)
		case arrived[body]:
			t.Errorf("%s arrived twice", body)
		case m.parked != wasParked:
			t.Errorf("%s (x-delay %q as %s) was parked: %v, want %v", body, m.xDelay, m.kind, wasParked, m.parked)
		case !m.parked && at.Sub(published[body]) < m.delay-expiryClock:
			t.Errorf("%s arrived early: %s after its publisher started, for an x-delay of %s", body, at.Sub(published[body]), m.delay)
		case !m.parked && d.RoutingKey != routeKey:
			t.Errorf("%s arrived with routing key %q, want %q", body, d.RoutingKey, routeKey)
		}
		if ok {
			arrived[body] = true
		}
		if err := d.Ack(false); err != nil {
			return err
		}
	}
	if !t.Failed() {
		t.Logf("every x-delay publisher's message arrived once, where it should, none early: %d messages", len(arrived))
	}
	return nil
}
