/*
Copyright 2026 The provider-proxmox Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package guesttest

import (
	"testing"

	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Token is the API token Simulator's client authenticates with.
const (
	TokenID     = "root@pam!kubemox"
	TokenSecret = "s3cret"
)

// Simulator starts an in-process simulator on nodes (with opts) and returns
// it with a client of it; both go when the test ends.
func Simulator(t *testing.T, opts pvesim.Options, nodes ...string) (*pvesim.Server, *pve.Client) {
	t.Helper()
	opts.Nodes = nodes
	sim, err := pvesim.Start(opts)
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(sim.Close)
	sim.AddToken(TokenID, TokenSecret)
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), TokenID: TokenID, Secret: TokenSecret, CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	t.Cleanup(cl.Retire)
	return sim, cl
}

// RootPassword is the password RootClient logs in with.
const RootPassword = "root-s3cret"

// RootClient is a client of sim logging in as root@pam with its password
// (not a token): the one credential Proxmox VE lets import a disk from a
// filesystem path.
func RootClient(t *testing.T, sim *pvesim.Server) *pve.Client {
	t.Helper()
	sim.AddUser(pve.RootUser, RootPassword)
	cl, err := pve.New(pve.Config{Endpoint: sim.URL(), Username: pve.RootUser, Password: RootPassword, CAPEM: sim.CAPEM()})
	if err != nil {
		t.Fatalf("root@pam client: %v", err)
	}
	t.Cleanup(cl.Retire)
	return cl
}

// Seed adds the guest s to the simulator with overrides applied to its
// config ("" removes a key): a table row's variation on a kind's baseline.
func Seed(t *testing.T, sim *pvesim.Server, s pvesim.GuestSeed, overrides map[string]string) {
	t.Helper()
	for k, v := range overrides {
		if v == "" {
			delete(s.Config, k)
			continue
		}
		s.Config[k] = v
	}
	if err := sim.AddGuest(s); err != nil {
		t.Fatalf("seed %d: %v", s.VMID, err)
	}
}
