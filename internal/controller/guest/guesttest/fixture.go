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
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/crossplane/crossplane-runtime/v2/pkg/event"

	"github.com/kubemox/provider-proxmox/apis"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/controller/guest"
)

// FakeKube is a fake API client knowing the Kubernetes and provider kinds,
// with a status subresource for each of withStatus.
func FakeKube(t *testing.T, withStatus ...client.Object) client.Client {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithStatusSubresource(withStatus...).Build()
}

// Deps is what a verb test's connector shares with every guest kind: kube,
// a VMID allocator of its own, events into record, and a second's steady
// listing age. Usage is not set: verb tests call the verbs, not Connect.
func Deps(kube client.Client, record event.Recorder) guest.Deps {
	return guest.Deps{
		Kube: kube, Clients: pve.NewCache(), VMIDs: pve.NewVMIDAllocator(0), Record: record,
		SteadyAge: time.Second, Observed: guest.NewStamps(),
	}
}
