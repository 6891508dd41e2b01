package redistest

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crawlkit/robots/internal/skipnote"
)

// clusterSlots is how many hash slots a Redis Cluster has.
const clusterSlots = 16384

// Cluster is a throwaway Redis Cluster: Masters share the hash slots
// evenly, and Replicas[i], when there are replicas, replicates
// Masters[i]. A node's Stop kills it as a crash would; the cluster then
// promotes its replica once the others see it fail (its node timeout,
// one second).
type Cluster struct {
	Masters, Replicas []*Server
}

// StartCluster starts a cluster of masters nodes, each with replicas
// replica nodes (0 or 1), for t, and stops every node when t ends. It
// returns once every slot is served and every replica is linked, and
// skips t as Start does. The cluster is made with CLUSTER commands alone,
// so that it needs no redis-cli.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	if Installed() != nil {
		skipnote.Require(t, server, installHint)
	}
	if masters < 1 || replicas < 0 || replicas > 1 {
		t.Fatalf("redistest: a cluster of %d masters with %d replicas each", masters, replicas)
	}
	if v, err := exec.Command(server, "--version").Output(); err == nil && !strings.Contains(string(v), "Valkey") && clusterTooOld(string(v)) {
		t.Skipf("redistest: a cluster is made with Redis 7's CLUSTER ADDSLOTSRANGE and --cluster-port; %s", strings.TrimSpace(string(v)))
	}
	c := &Cluster{}
	buses := map[*Server]int{}
	node := func() *Server {
		t.Helper()
		// The bus port is free only when probed: another try takes
		// another, as launch does for the server's own.
		var err error
		for range 3 {
			var bus int
			if bus, err = freePort(); err != nil {
				break
			}
			var s *Server
			s, err = launch(server, "--cluster-enabled", "yes", "--cluster-node-timeout", "1000",
				"--cluster-port", strconv.Itoa(bus), "--dir", t.TempDir())
			if err == nil {
				t.Cleanup(s.Stop)
				buses[s] = bus
				return s
			}
		}
		t.Fatal(err)
		return nil
	}
	for i := range masters {
		m := node()
		from, to := i*clusterSlots/masters, (i+1)*clusterSlots/masters-1
		if _, err := m.Do("CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(from), strconv.Itoa(to)); err != nil {
			t.Fatal(err)
		}
		c.Masters = append(c.Masters, m)
	}
	for range masters * replicas {
		c.Replicas = append(c.Replicas, node())
	}
	nodes := c.Nodes()
	for _, n := range nodes[1:] {
		if _, err := n.Do("CLUSTER", "MEET", "127.0.0.1", strconv.Itoa(nodes[0].port), strconv.Itoa(buses[nodes[0]])); err != nil {
			t.Fatal(err)
		}
	}
	within(t, "every node to know the others", func() bool {
		for _, n := range nodes {
			// A node met but not yet greeted is listed under a name of
			// the moment, flagged handshake.
			if out, err := n.Do("CLUSTER", "NODES"); err != nil || strings.Count(out, "\n") < len(nodes) || strings.Contains(out, "handshake") {
				return false
			}
		}
		return true
	})
	for i, r := range c.Replicas {
		id, err := c.Masters[i].Do("CLUSTER", "MYID")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Do("CLUSTER", "REPLICATE", id); err != nil {
			t.Fatal(err)
		}
	}
	within(t, "the cluster to serve every slot and its replicas to link", func() bool {
		if !c.OK() {
			return false
		}
		for _, r := range c.Replicas {
			if info, err := r.Do("INFO", "replication"); err != nil || !strings.Contains(info, "master_link_status:up") {
				return false
			}
		}
		return true
	})
	return c
}

// Nodes returns every node, the masters first.
func (c *Cluster) Nodes() []*Server {
	return append(append([]*Server(nil), c.Masters...), c.Replicas...)
}

// Addrs returns the address of every node, for a cluster client.
func (c *Cluster) Addrs() []string {
	var addrs []string
	for _, n := range c.Nodes() {
		addrs = append(addrs, n.Addr)
	}
	return addrs
}

// OK reports whether every running node says the cluster serves every
// slot (cluster_state:ok).
func (c *Cluster) OK() bool {
	for _, n := range c.Nodes() {
		if n.PID() == 0 {
			continue
		}
		if info, err := n.Do("CLUSTER", "INFO"); err != nil || !strings.Contains(info, "cluster_state:ok") {
			return false
		}
	}
	return true
}

// within polls ok every 20 ms until it holds, failing t after startCeiling.
func within(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(startCeiling)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("redistest: waited %v for %s", startCeiling, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clusterTooOld reports whether a redis-server --version line names a
// Redis before 7.
func clusterTooOld(version string) bool {
	_, v, ok := strings.Cut(version, " v=")
	if !ok {
		return false
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n < 7
}
