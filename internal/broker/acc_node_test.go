package broker_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/delayqueue/terraform-provider-rabbitmq/internal/broker"
)

// TestAccNode checks the node's versions and that its OS process id is the
// broker's: the Erlang VM, beam.smp, on this machine.
func TestAccNode(t *testing.T) {
	client := accClient(t)
	node, err := client.Node(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if node.Name == "" || node.RabbitMQVersion == "" || node.ErlangVersion == "" {
		t.Errorf("Node() = %+v, want a name and versions", node)
	}
	// A fresh node keeps its metadata in Khepri from 4.2 on (4.3 here); in
	// Mnesia before (3.10 has only Mnesia; 4.0 and 4.1 have Khepri off).
	wantStore := "Khepri"
	if strings.HasPrefix(node.RabbitMQVersion, "3.") || strings.HasPrefix(node.RabbitMQVersion, "4.0.") ||
		strings.HasPrefix(node.RabbitMQVersion, "4.1.") {
		wantStore = "Mnesia"
	}
	if node.MetadataStore != wantStore {
		t.Errorf("Node().MetadataStore = %q on RabbitMQ %s, want %q", node.MetadataStore, node.RabbitMQVersion, wantStore)
	}
	command, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", node.OSPID))
	if err != nil || !strings.HasPrefix(string(command), "beam") {
		t.Errorf("Node().OSPID = %d runs %q (%v), want the broker's beam.smp", node.OSPID, command, err)
	}
}

// TestAccClusterNodes: a lone node's cluster is that node, with its
// process. (The cluster benchmark lists three: make bench-cluster.)
func TestAccClusterNodes(t *testing.T) {
	client := accClient(t)
	node, err := client.Node(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := client.ClusterNodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if want := []broker.ClusterNode{{Name: node.Name, OSPID: node.OSPID}}; !slices.Equal(nodes, want) {
		t.Errorf("ClusterNodes() = %+v, want %+v", nodes, want)
	}
}
