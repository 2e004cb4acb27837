package pvesim

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkEncodeResources measures a /cluster/resources rebuild after a state change
// with 1,000 guests (the cached answer is dropped on every iteration).
func BenchmarkEncodeResources(b *testing.B) {
	s, err := Start(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 1000; i++ {
		_ = s.AddGuest(GuestSeed{Kind: "qemu", Node: "pve", VMID: 100 + i, Running: i%2 == 0, Config: map[string]string{
			"name": fmt.Sprintf("vm%d", i), "memory": "2048", "cores": "2", "sockets": "1", "scsi0": fmt.Sprintf("local-lvm:vm-%d-disk-0,size=8G", 100+i), "tags": "bench", "description": "x"}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.mu.Lock()
		s.markDirty()
		s.cachedResources("vm", time.Now()).release()
		s.mu.Unlock()
	}
}
