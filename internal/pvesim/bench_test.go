package pvesim_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// BenchmarkMixedLoad drives 1,000 guests (750 VMs, 250 containers, half running) with a
// provider-like mix from 16 goroutines over HTTPS with token auth, and prints requests/s
// and latency percentiles per request kind. Run it on one core:
//
//	GOMAXPROCS=1 go test -run X -bench MixedLoad -benchtime 20000x ./internal/pvesim/
const (
	benchGuests  = 1000
	benchWorkers = 16
)

type benchKind struct {
	name   string
	weight int
}

// The mix a reconciling provider produces: mostly reads, some writes, few listings.
var benchKinds = []benchKind{
	{name: "config-get", weight: 30}, {name: "status-current", weight: 25}, {name: "cluster-resources", weight: 5},
	{name: "config-put", weight: 15}, {name: "pending-get", weight: 10}, {name: "nextid", weight: 5},
	{name: "task-status", weight: 10},
}

type benchEnv struct {
	sim    *pvesim.Server
	client *http.Client
	auth   string
	upids  []string
}

// benchCase varies concurrency and whether the /cluster/resources listing is in the mix,
// so queueing and the listing's share of the latency can be told apart.
type benchCase struct {
	name     string
	workers  int
	listings bool
}

func BenchmarkMixedLoad(b *testing.B) {
	for _, c := range []benchCase{
		{name: "workers=16", workers: benchWorkers, listings: true},
		{name: "workers=16-no-listing", workers: benchWorkers, listings: false},
		{name: "workers=1", workers: 1, listings: true},
	} {
		b.Run(c.name, func(b *testing.B) { runMixedLoad(b, c) })
	}
}

func runMixedLoad(b *testing.B, c benchCase) {
	env := newBenchEnv(b)
	schedule := weightedSchedule(c.listings)
	lat := make([][]time.Duration, len(benchKinds))
	var mu sync.Mutex
	var next atomic.Int64
	var failures atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < c.workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([][]time.Duration, len(benchKinds))
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					break
				}
				k := schedule[int(i)%len(schedule)]
				t0 := time.Now()
				if err := env.do(k, int(i)*7+w); err != nil {
					failures.Add(1)
					if failures.Load() == 1 {
						b.Logf("first failure (%s): %v", benchKinds[k].name, err)
					}
				}
				local[k] = append(local[k], time.Since(t0))
			}
			mu.Lock()
			for k := range local {
				lat[k] = append(lat[k], local[k]...)
			}
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failures.Load(); f > 0 {
		b.Fatalf("%d of %d requests failed", f, b.N)
	}
	reportLatencies(b, c, lat, elapsed)
}

func reportLatencies(b *testing.B, c benchCase, lat [][]time.Duration, elapsed time.Duration) {
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	if b.N < 1000 {
		return
	}
	fmt.Printf("pvesim mixed load %s: %d requests, %d guests, GOMAXPROCS=%d, took %s: %.0f req/s\n",
		c.name, b.N, benchGuests, runtime.GOMAXPROCS(0), elapsed.Round(time.Millisecond), float64(b.N)/elapsed.Seconds())
	for k, kind := range benchKinds {
		d := lat[k]
		if len(d) == 0 {
			continue
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		p50, p99 := d[len(d)/2], d[len(d)*99/100]
		fmt.Printf("  %-18s n=%6d  %8.0f req/s  p50=%7.3fms  p99=%7.3fms  max=%7.3fms\n", kind.name, len(d),
			float64(len(d))/elapsed.Seconds(), ms(p50), ms(p99), ms(d[len(d)-1]))
		b.ReportMetric(ms(p99), "p99-ms-"+kind.name)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// weightedSchedule spreads the kinds over a 100-slot cycle by weight.
func weightedSchedule(listings bool) []int {
	var out []int
	for k, kind := range benchKinds {
		if kind.name == "cluster-resources" && !listings {
			continue
		}
		for i := 0; i < kind.weight; i++ {
			out = append(out, k)
		}
	}
	// Interleave with a stride coprime to the cycle length so kinds do not come in runs.
	mixed := make([]int, len(out))
	for i := range out {
		mixed[i] = out[(i*37)%len(out)]
	}
	return mixed
}

func newBenchEnv(b *testing.B) *benchEnv {
	b.Helper()
	sim, err := pvesim.Start(pvesim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(sim.Close)
	sim.AddToken(testTokenID, testSecret)
	for i := 0; i < benchGuests; i++ {
		if err := sim.AddGuest(benchSeed(100 + i)); err != nil {
			b.Fatalf("seed %d: %v", 100+i, err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(sim.CAPEM())
	env := &benchEnv{sim: sim, auth: "PVEAPIToken=" + testTokenID + "=" + testSecret, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers * 2, TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}}
	// Tasks to poll: start a few stopped containers.
	for id := 101; len(env.upids) < 50; id += 4 {
		var upid string
		if err := env.call(http.MethodPost, fmt.Sprintf("/nodes/pve/%s/%d/status/start", benchKindOf(id), id), "", &upid); err != nil {
			b.Fatalf("start %d: %v", id, err)
		}
		env.upids = append(env.upids, upid)
	}
	return env
}

func benchKindOf(vmid int) string {
	if vmid%4 == 3 {
		return "lxc"
	}
	return "qemu"
}

func benchSeed(vmid int) pvesim.GuestSeed {
	running := vmid%2 == 0
	if benchKindOf(vmid) == "lxc" {
		return pvesim.GuestSeed{Kind: "lxc", Node: "pve", VMID: vmid, Running: running, Config: map[string]string{
			"hostname": fmt.Sprintf("ct%d", vmid), "memory": "512", "swap": "512", "cores": "1", "ostype": "debian",
			"rootfs": fmt.Sprintf("local-lvm:subvol-%d-disk-0,size=4G", vmid), "net0": "name=eth0,bridge=vmbr0,ip=dhcp",
		}}
	}
	return pvesim.GuestSeed{Kind: "qemu", Node: "pve", VMID: vmid, Running: running, Config: map[string]string{
		"name": fmt.Sprintf("vm%d", vmid), "memory": "2048", "cores": "2", "sockets": "1", "scsihw": "virtio-scsi-single",
		"scsi0": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", vmid), "net0": "virtio,bridge=vmbr0", "agent": "1",
		"ostype": "l26", "tags": "bench",
	}}
}

func (e *benchEnv) do(k, n int) error {
	vmid := 100 + n%benchGuests
	guest := fmt.Sprintf("/nodes/pve/%s/%d", benchKindOf(vmid), vmid)
	switch benchKinds[k].name {
	case "config-get":
		return e.call(http.MethodGet, guest+"/config", "", nil)
	case "status-current":
		return e.call(http.MethodGet, guest+"/status/current", "", nil)
	case "cluster-resources":
		return e.call(http.MethodGet, "/cluster/resources?type=vm", "", nil)
	case "config-put":
		return e.call(http.MethodPut, guest+"/config", url.Values{"description": {fmt.Sprintf("bench %d", n)}}.Encode(), nil)
	case "pending-get":
		return e.call(http.MethodGet, guest+"/pending", "", nil)
	case "nextid":
		return e.call(http.MethodGet, "/cluster/nextid", "", nil)
	case "task-status":
		upid := e.upids[n%len(e.upids)]
		return e.call(http.MethodGet, "/nodes/pve/tasks/"+url.PathEscape(upid)+"/status", "", nil)
	}
	return fmt.Errorf("unknown kind %d", k)
}

func (e *benchEnv) call(method, path, form string, out any) error {
	var body io.Reader
	if form != "" {
		body = strings.NewReader(form)
	}
	req, err := http.NewRequest(method, e.sim.APIURL()+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", e.auth)
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := e.client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && out == nil {
		// Discarding through a pooled buffer keeps the harness's own allocations (a
		// growing copy of every 300 KB listing) out of the simulator's latency figures.
		_, err := io.Copy(io.Discard, res.Body)
		return err
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return err
	}
	return json.Unmarshal(env.Data, out)
}
