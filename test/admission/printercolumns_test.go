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

package admission

import (
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
)

// TestCustomCertificateExpiresColumn reads `kubectl get cc`'s table from
// the API server for a certificate that expires in a year. kubectl prints
// a column of type date as the time since it, and "<invalid>" for a time
// still to come, so EXPIRES must be a string column showing notAfter.
func TestCustomCertificateExpiresColumn(t *testing.T) {
	c := newClient(t)
	ctx := testContext(t)
	cc := &v1alpha1.CustomCertificate{}
	cc.SetNamespace("default")
	cc.SetName("expires-column")
	cc.Spec.NodeName = "pve1"
	cc.Spec.TLSSecretRef = &v1alpha1.SecretName{Name: "pve1-tls"}
	if err := c.Create(ctx, cc); err != nil {
		t.Fatalf("cannot create the CustomCertificate: %v", err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, cc) })
	notAfter := metav1.NewTime(time.Now().Add(365 * 24 * time.Hour).Truncate(time.Second))
	cc.Status.NotAfter = &notAfter
	if err := c.Status().Update(ctx, cc); err != nil {
		t.Fatalf("cannot write status.notAfter: %v", err)
	}

	table := getTable(t, "/apis/proxmox.alperen.cloud/v1alpha1/namespaces/default/customcertificates/expires-column")
	col := -1
	for i, d := range table.ColumnDefinitions {
		if d.Name == "EXPIRES" {
			col = i
			if d.Type != "string" {
				t.Errorf("EXPIRES column type: got %q, want string (kubectl prints a future date as <invalid>)", d.Type)
			}
		}
	}
	if col < 0 || len(table.Rows) != 1 {
		t.Fatalf("no EXPIRES column or not one row: %+v", table)
	}
	if got, want := table.Rows[0].Cells[col], notAfter.UTC().Format(time.RFC3339); got != want {
		t.Errorf("EXPIRES cell: got %v, want %v", got, want)
	}
}

// getTable GETs path as kubectl get does, asking for a Table.
func getTable(t *testing.T, path string) metav1.Table {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatalf("cannot build a clientset: %v", err)
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath(path).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(testContext(t))
	if err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		t.Fatalf("cannot decode the table: %v", err)
	}
	return table
}
