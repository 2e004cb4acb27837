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

package storagedownloadurl

import (
	"context"
	"testing"
	"time"

	"github.com/kubemox/provider-proxmox/internal/controller/guest/guesttest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// A 403 from Proxmox VE reaches the StorageDownloadURL's condition naming the privilege
// and path PVE found missing.
func TestForbiddenNamesThePrivilege(t *testing.T) {
	f := newFixture(t, pvesim.Options{})
	conn := &connector{kube: guesttest.FakeKube(t), usage: guesttest.NoUsage{}, clients: guesttest.DefaultConnection(f.cl), record: f.log, retryBase: time.Minute}
	cr := isoDownload("denied")
	ext, err := conn.Connect(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	guesttest.Forbid(t, f.sim, "/storage/local", "Datastore.AllocateTemplate")
	_, err = ext.Create(context.Background(), cr)
	guesttest.WantExplained(t, err, "/storage/local", "Datastore.AllocateTemplate")
}
