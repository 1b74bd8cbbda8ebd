package faults

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nodesScript starts, stops and kills the tests' own RabbitMQ nodes; its
// header says which ports and directories node N uses.
var nodesScript = filepath.Join("..", "..", "scripts", "rabbitmq-nodes.sh")

// nodeConfig is what a test adds to the script's configuration of a node.
type nodeConfig struct {
	// Conf holds extra rabbitmq.conf lines.
	Conf string
	// AdvancedConfig is the node's advanced.config, Erlang terms.
	AdvancedConfig string
}

// node is one RabbitMQ node of the script, as its describe command tells.
type node struct {
	Index             int
	Name              string // rabbit-fN@localhost
	AMQPURL           string
	ManagementURL     string
	ManagementTLSPort int // free for a TLS management listener the test configures
	Dir               string
	Log               string
	config            nodeConfig
}

// runNodes runs the script with args and returns what it printed on
// stdout; its progress lines go to the test log and the time it took to the
// phase table.
func runNodes(t *testing.T, config nodeConfig, args ...string) string {
	t.Helper()
	cmd := exec.Command(nodesScript, args...)
	cmd.Env = append(os.Environ(),
		"RABBITMQ_NODES_CONF="+config.Conf,
		"RABBITMQ_NODES_ADVANCED_CONFIG="+config.AdvancedConfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	started := time.Now()
	err := cmd.Run()
	took := time.Since(started)
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" {
			t.Log(line)
		}
	}
	if err != nil {
		t.Fatalf("%s %s: %v", nodesScript, strings.Join(args, " "), err)
	}
	if args[0] != "describe" {
		report.addPhase(phase{Name: t.Name() + ": " + strings.Join(args, " "), Took: took})
	}
	return stdout.String()
}

// startNodes starts fresh nodes (whatever an earlier run left is deleted),
// joined into one cluster when there are several, and stops them when the
// test ends. Their directories stay when the test failed, for their logs.
func startNodes(t *testing.T, config nodeConfig, indexes ...int) []*node {
	t.Helper()
	args := make([]string, len(indexes))
	for i, index := range indexes {
		args[i] = strconv.Itoa(index)
	}
	runNodes(t, config, append([]string{"delete"}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			noteNodeErrors(t, indexes)
			runNodes(t, config, append([]string{"stop"}, args...)...)
			t.Logf("nodes stopped; their logs stay in %s", filepath.Dir(describeNode(t, indexes[0]).Dir))
			return
		}
		runNodes(t, config, append([]string{"delete"}, args...)...)
	})
	command := "start"
	if len(indexes) > 1 {
		command = "cluster"
	}
	runNodes(t, config, append([]string{command}, args...)...)
	nodes := make([]*node, len(indexes))
	for i, index := range indexes {
		nodes[i] = describeNode(t, index)
		nodes[i].config = config
	}
	report.noteBroker(t, nodes[0].ManagementURL)
	return nodes
}

func describeNode(t *testing.T, index int) *node {
	t.Helper()
	n := &node{Index: index}
	scanner := bufio.NewScanner(strings.NewReader(runNodes(t, nodeConfig{}, "describe", strconv.Itoa(index))))
	for scanner.Scan() {
		key, value, _ := strings.Cut(scanner.Text(), "=")
		switch key {
		case "node":
			n.Name = value
		case "amqp_url":
			n.AMQPURL = value
		case "management_url":
			n.ManagementURL = value
		case "management_tls_port":
			port, err := strconv.Atoi(value)
			if err != nil {
				t.Fatalf("describe %d: management_tls_port %q: %v", index, value, err)
			}
			n.ManagementTLSPort = port
		case "dir":
			n.Dir = value
		case "log":
			n.Log = value
		}
	}
	if n.Name == "" || n.AMQPURL == "" || n.ManagementURL == "" {
		t.Fatalf("%s describe %d said too little: %+v", nodesScript, index, n)
	}
	return n
}

// start starts the node again with its data, after stop or kill.
func (n *node) start(t *testing.T) {
	t.Helper()
	runNodes(t, n.config, "start", strconv.Itoa(n.Index))
}

// stop stops the node gracefully.
func (n *node) stop(t *testing.T) {
	t.Helper()
	runNodes(t, n.config, "stop", strconv.Itoa(n.Index))
}

// kill ends the node's OS process with SIGKILL, as a crash would.
func (n *node) kill(t *testing.T) {
	t.Helper()
	runNodes(t, n.config, "kill", strconv.Itoa(n.Index))
}
