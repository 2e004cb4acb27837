package proxmox

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

func benchSim(b *testing.B) *pvesim.Server {
	b.Helper()
	srv, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	srv.AddUser(simUser, simPassword)
	srv.AddToken(simTokenID, simSecret)
	for i := range 50 {
		if err := srv.AddGuest(pvesim.GuestSeed{Node: "pve", VMID: 100 + i}); err != nil {
			b.Fatal(err)
		}
	}
	return srv
}

func benchClient(b *testing.B, srv *pvesim.Server, token bool, mods ...func(*Config)) *Client {
	b.Helper()
	cfg := Config{Endpoint: srv.APIURL(), Username: simUser, Password: simPassword, CAPEM: srv.CAPEM()}
	if token {
		cfg = Config{Endpoint: srv.APIURL(), TokenID: simTokenID, Secret: simSecret, CAPEM: srv.CAPEM()}
	}
	for _, mod := range mods {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Retire)
	return c
}

// BenchmarkGET measures one GET /version through the whole transport
// (limit 4, TLS, session) with parallel callers.
func BenchmarkGET(b *testing.B) {
	srv := benchSim(b)
	for _, auth := range []struct {
		name  string
		token bool
	}{{"password", false}, {"token", true}} {
		b.Run(auth.name, func(b *testing.B) {
			c := benchClient(b, srv, auth.token)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.API().Get(b.Context(), "/version", nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkClusterResources compares a read of 50 guests with the shared,
// memoised read many managed resources of one connection use.
func BenchmarkClusterResources(b *testing.B) {
	srv := benchSim(b)
	c := benchClient(b, srv, true)
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.ClusterResources(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached-1s", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.CachedClusterResources(b.Context(), time.Second); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkRequestMetrics compares GET /version through the whole transport
// (token auth, parallel callers) without and with metrics, and measures
// what the metrics add to each request on their own: templating the route
// and observing the request. Run with
//
//	go test ./internal/clients/proxmox/ -run '^$' -bench RequestMetrics -count 5
func BenchmarkRequestMetrics(b *testing.B) {
	srv := benchSim(b)
	m, err := metrics.NewProxmox(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*Config)
	}{
		{"GET/without-metrics", func(*Config) {}},
		{"GET/with-metrics", func(cfg *Config) { cfg.Metrics = m.Connection("bench") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := benchClient(b, srv, true, tc.mod)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.API().Get(b.Context(), "/version", nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	b.Run("observe-only", func(b *testing.B) {
		conn := m.Connection("bench")
		for b.Loop() {
			conn.ObserveRequest("GET", RouteTemplate("/api2/json/nodes/pve/qemu/100/config"), 200, time.Millisecond)
		}
	})
}
