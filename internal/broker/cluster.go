package broker

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync"
)

// learnedCluster is the name of the cluster that the management API
// serves, read once: what ties an AMQP connection's counts, and the
// one-at-a-time quorum deletions, to that cluster.
type learnedCluster struct {
	mu   sync.Mutex
	name string
}

// clusterName is the cluster_name of GET /api/overview, which any user
// the management API admits may read. Not remembered when the read fails.
func (c *Client) clusterName(ctx context.Context) (string, error) {
	c.cluster.mu.Lock()
	known := c.cluster.name
	c.cluster.mu.Unlock()
	if known != "" {
		return known, nil
	}
	var overview struct {
		ClusterName string `json:"cluster_name"`
	}
	query := url.Values{"columns": {"cluster_name"}, "disable_stats": {"true"}}
	if err := c.call(ctx, http.MethodGet, apiPath("overview"), query, nil, &overview); err != nil {
		return "", fmt.Errorf("reading the broker's cluster name: %w", err)
	}
	if overview.ClusterName == "" {
		return "", fmt.Errorf("reading the broker's cluster name: the management API gave none")
	}
	c.cluster.mu.Lock()
	c.cluster.name = overview.ClusterName
	c.cluster.mu.Unlock()
	return overview.ClusterName, nil
}
