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
