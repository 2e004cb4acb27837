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

package connection_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"

	"github.com/crossplane/crossplane-runtime/v2/pkg/meta"
	"github.com/crossplane/crossplane-runtime/v2/pkg/reconciler/providerconfig"

	"github.com/kubemox/provider-proxmox/apis/v1alpha1"
	pve "github.com/kubemox/provider-proxmox/internal/clients/proxmox"
	"github.com/kubemox/provider-proxmox/internal/metrics"
	"github.com/kubemox/provider-proxmox/internal/metrics/metricstest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
)

// Every endpoint form people type reaches the simulator, and the connection
// reports Ready with the PVE version.
func TestEndpointForms(t *testing.T) {
	hs := requireHarness(t)

	v6, err := pvesim.Start(pvesim.Options{Listen: "[::1]:0"})
	if err != nil {
		t.Fatalf("start an IPv6 simulator: %v", err)
	}
	t.Cleanup(v6.Close)

	forms := map[string]struct {
		sim      *pvesim.Server
		endpoint func(port string) string
	}{
		"host:port":                {hs.Sim, func(p string) string { return "127.0.0.1:" + p }},
		"name:port":                {hs.Sim, func(p string) string { return "localhost:" + p }},
		"https://host:port":        {hs.Sim, func(p string) string { return "https://127.0.0.1:" + p }},
		"https://host:port/api2/j": {hs.Sim, func(p string) string { return "https://127.0.0.1:" + p + "/api2/json" }},
		"[ipv6]:port":              {v6, func(p string) string { return "[::1]:" + p }},
		"https://[ipv6]:port/api":  {v6, func(p string) string { return "https://[::1]:" + p + "/api2/json" }},
	}
	for name, f := range forms {
		t.Run(name, func(t *testing.T) {
			port := portOf(t, f.sim.URL())
			tokenID, secret := "root@pam!forms", "forms-secret-0c1d"
			f.sim.AddToken(tokenID, secret)
			pc := hs.createConnection(t, v1alpha1.ProxmoxConnectionSpec{
				Endpoint: f.endpoint(port), TokenID: tokenID, Secret: secret, CABundle: string(f.sim.CAPEM()),
			})
			got := hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
			if got.Status.Version == "" {
				t.Errorf("status.version is empty for endpoint %q", pc.Spec.Endpoint)
			}
		})
	}

	// The bare host form implies PVE's port 8006, which only one process on
	// the machine can hold.
	t.Run("host", func(t *testing.T) {
		sim, err := pvesim.Start(pvesim.Options{Listen: "127.0.0.1:8006"})
		if err != nil {
			t.Skipf("port 8006 is not free for the default-port form: %v", err)
		}
		t.Cleanup(sim.Close)
		sim.AddUser("root@pam", "bare-host-pw-77ab")
		pc := hs.createConnection(t, v1alpha1.ProxmoxConnectionSpec{
			Endpoint: "127.0.0.1", Username: "root@pam", Password: "bare-host-pw-77ab", CABundle: string(sim.CAPEM()),
		})
		hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	})
}

func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	hostport := strings.TrimPrefix(rawURL, "https://")
	_, port, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatalf("simulator URL %q: %v", rawURL, err)
	}
	return port
}

func TestInlinePassword(t *testing.T) {
	hs := requireHarness(t)
	hs.Sim.AddUser("inline@pve", "inline-pw-5e2f")
	spec := hs.simSpec()
	spec.Username, spec.Password = "inline@pve", "inline-pw-5e2f"
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	if len(got.Status.ObservedSecrets) != 0 {
		t.Errorf("observedSecrets = %v, want none for inline credentials", got.Status.ObservedSecrets)
	}
	if !meta.FinalizerExists(got, "in-use.crossplane.io") {
		t.Errorf("finalizers = %v, want the in-use finalizer", got.GetFinalizers())
	}
	if _, err := hs.Provider.Clients.Get(pc.Name); err != nil {
		t.Errorf("client cache has no client for a Ready connection: %v", err)
	}
}

func TestPasswordFromSecret(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	hs.Sim.AddUser("fromsecret@pve", "secret-pw-91c4")
	s := hs.createSecret(t, ns, "pve-login", map[string]string{"password": "secret-pw-91c4"})

	spec := hs.simSpec()
	spec.Username = "fromsecret@pve"
	spec.PasswordFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-login", Key: "password"}
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	want := []v1alpha1.ObservedSecret{{Name: "pve-login", Namespace: ns, ResourceVersion: s.ResourceVersion}}
	if fmt.Sprint(got.Status.ObservedSecrets) != fmt.Sprint(want) {
		t.Errorf("observedSecrets = %v, want %v", got.Status.ObservedSecrets, want)
	}
}

func TestTokenFromSecret(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	hs.Sim.AddToken("root@pam!fromsecret", "token-secret-3a7b")
	hs.createSecret(t, ns, "pve-token", map[string]string{"token": "token-secret-3a7b"})

	spec := hs.simSpec()
	spec.TokenID = "root@pam!fromsecret"
	spec.SecretFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-token", Key: "token"}
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	if len(got.Status.ObservedSecrets) != 1 || got.Status.ObservedSecrets[0].Namespace != ns {
		t.Errorf("observedSecrets = %v, want the Secret in namespace %s", got.Status.ObservedSecrets, ns)
	}
}

// A connection whose Secret does not exist yet says so, and becomes Ready
// when the Secret is created: the Secret watch triggers the reconcile.
func TestMissingSecretThenCreated(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	hs.Sim.AddToken("root@pam!later", "later-secret-64d0")

	spec := hs.simSpec()
	spec.TokenID = "root@pam!later"
	spec.SecretFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "not-yet", Key: "token"}
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonSecretNotFound)
	msg := got.Status.GetCondition(xpv2.TypeReady).Message
	if !strings.Contains(msg, ns+"/not-yet") {
		t.Errorf("message %q does not name the Secret %s/not-yet", msg, ns)
	}

	s := hs.createSecret(t, ns, "not-yet", map[string]string{"token": "later-secret-64d0"})
	got = hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	if len(got.Status.ObservedSecrets) != 1 || got.Status.ObservedSecrets[0].ResourceVersion != s.ResourceVersion {
		t.Errorf("observedSecrets = %v, want resourceVersion %s", got.Status.ObservedSecrets, s.ResourceVersion)
	}
}

func TestMissingKey(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	hs.Sim.AddToken("root@pam!nokey", "nokey-secret-0f9e")
	hs.createSecret(t, ns, "pve-token", map[string]string{"other": "x"})

	spec := hs.simSpec()
	spec.TokenID = "root@pam!nokey"
	spec.SecretFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-token", Key: "token"}
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonSecretKeyNotFound)
	msg := got.Status.GetCondition(xpv2.TypeReady).Message
	if !strings.Contains(msg, `"token"`) || !strings.Contains(msg, ns+"/pve-token") {
		t.Errorf("message %q does not name key \"token\" of Secret %s/pve-token", msg, ns)
	}
	if _, err := hs.Provider.Clients.Get(pc.Name); !errors.Is(err, pve.ErrNotReady) {
		t.Errorf("client cache Get = %v, want ErrNotReady", err)
	}
	hs.waitReadyGauge(t, pc.Name, 0)

	hs.updateSecret(t, ns, "pve-token", map[string]string{"token": "nokey-secret-0f9e"})
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	hs.waitReadyGauge(t, pc.Name, 1)
}

// Rotating a token: the Secret gets the new secret, PVE only accepts the new
// one. The connection records the Secret's new resourceVersion, is Ready
// again, the old client refuses new requests, and from then on only the new
// secret reaches PVE.
func TestRotation(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	const tokenID, oldSecret, newSecret = "root@pam!rotate", "rotate-old-2b8c", "rotate-new-d41a"
	hs.Sim.AddToken(tokenID, oldSecret)
	hs.createSecret(t, ns, "pve-token", map[string]string{"token": oldSecret})

	spec := hs.simSpec()
	spec.TokenID = tokenID
	spec.SecretFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-token", Key: "token"}
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)
	oldClient, err := hs.Provider.Clients.Get(pc.Name)
	if err != nil {
		t.Fatalf("no client for a Ready connection: %v", err)
	}

	hs.Sim.AddToken(tokenID, newSecret)
	rotated := hs.updateSecret(t, ns, "pve-token", map[string]string{"token": newSecret})
	hs.waitFor(t, pc.Name, "Ready on the rotated Secret", func(pc *v1alpha1.ProxmoxConnection) bool {
		c := pc.Status.GetCondition(xpv2.TypeReady)
		return c.Status == corev1.ConditionTrue && len(pc.Status.ObservedSecrets) == 1 &&
			pc.Status.ObservedSecrets[0].ResourceVersion == rotated.ResourceVersion
	})

	if _, err := oldClient.Verify(context.Background()); !errors.Is(err, pve.ErrClientRetired) {
		t.Errorf("old client Verify after rotation = %v, want ErrClientRetired", err)
	}

	hs.Sim.ResetCounters()
	current, err := hs.Provider.Clients.Get(pc.Name)
	if err != nil {
		t.Fatalf("no client after rotation: %v", err)
	}
	if _, err := current.Verify(context.Background()); err != nil {
		t.Fatalf("current client Verify: %v", err)
	}
	// Let a periodic re-verification happen as well (poll is 5s).
	time.Sleep(6 * time.Second)
	by := hs.Sim.Counters().ByCredentialSecret
	if n := by[pvesim.CredentialFingerprint(oldSecret)]; n != 0 {
		t.Errorf("%d requests used the rotated-away secret after the rotation was reconciled", n)
	}
	if n := by[pvesim.CredentialFingerprint(newSecret)]; n == 0 {
		t.Errorf("no request used the new secret; counters %v", by)
	}
}

func TestWrongPassword(t *testing.T) {
	hs := requireHarness(t)
	hs.Sim.AddUser("wrongpw@pve", "right-pw-7c3e")
	spec := hs.simSpec()
	spec.Username, spec.Password = "wrongpw@pve", "wrong-pw-a9d2"
	pc := hs.createConnection(t, spec)

	got := hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonAuthenticationFailed)
	if msg := got.Status.GetCondition(xpv2.TypeReady).Message; strings.Contains(msg, "wrong-pw-a9d2") {
		t.Errorf("Ready message contains the password: %q", msg)
	}
	// The resources using the connection hear why it has no client: the
	// cache's error carries the connection's own message.
	msg := got.Status.GetCondition(xpv2.TypeReady).Message
	if _, err := hs.Provider.Clients.Get(pc.Name); !errors.Is(err, pve.ErrNotReady) || !strings.Contains(err.Error(), msg) {
		t.Errorf("client cache Get = %v, want ErrNotReady carrying %q", err, msg)
	}
}

func TestUnknownCA(t *testing.T) {
	hs := requireHarness(t)
	hs.Sim.AddToken("root@pam!noca", "noca-secret-51f7")
	pc := hs.createConnection(t, v1alpha1.ProxmoxConnectionSpec{
		Endpoint: hs.Sim.URL(), TokenID: "root@pam!noca", Secret: "noca-secret-51f7",
	})
	hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonTLSVerificationFailed)
}

func TestEndpointUnreachable(t *testing.T) {
	hs := requireHarness(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := portOf(t, "https://"+ln.Addr().String())
	_ = ln.Close()
	spec := hs.simSpec()
	spec.Endpoint = "127.0.0.1:" + closedPort
	spec.TokenID, spec.Secret = "root@pam!nobody", "unreachable-secret-8e21"
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonEndpointUnreachable)
}

// A connection in use is not deleted until its last usage goes.
func TestDeletionBlockedWhileInUse(t *testing.T) {
	hs := requireHarness(t)
	ctx := context.Background()
	ns := hs.namespace(t)
	hs.Sim.AddToken("root@pam!inuse", "inuse-secret-c6b3")
	spec := hs.simSpec()
	spec.TokenID, spec.Secret = "root@pam!inuse", "inuse-secret-c6b3"
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)

	u := &v1alpha1.ProviderConfigUsage{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "vm-usage",
			Labels: map[string]string{
				xpv2.LabelKeyProviderName: pc.Name,
				xpv2.LabelKeyProviderKind: v1alpha1.ProxmoxConnectionKind,
			},
		},
	}
	u.ProviderConfigReference = xpv2.ProviderConfigReference{Kind: v1alpha1.ProxmoxConnectionKind, Name: pc.Name}
	u.ResourceReference = xpv2.TypedReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "VirtualMachine", Name: "vm"}
	if err := hs.Kube.Create(ctx, u); err != nil {
		t.Fatalf("create ProviderConfigUsage: %v", err)
	}
	hs.waitFor(t, pc.Name, "counting 1 user", func(pc *v1alpha1.ProxmoxConnection) bool { return pc.Status.Users == 1 })

	if err := hs.Kube.Delete(ctx, pc); err != nil {
		t.Fatalf("delete ProxmoxConnection: %v", err)
	}
	hs.waitFor(t, pc.Name, "Terminating while in use", func(pc *v1alpha1.ProxmoxConnection) bool {
		c := pc.Status.GetCondition(providerconfig.TypeTerminating)
		return c.Status == corev1.ConditionTrue && c.Reason == providerconfig.ReasonInUse
	})
	// Still there a while later, and its client still serves the resources
	// that are being deleted.
	time.Sleep(2 * time.Second)
	if err := hs.Kube.Get(ctx, types.NamespacedName{Name: pc.Name}, &v1alpha1.ProxmoxConnection{}); err != nil {
		t.Fatalf("connection in use was deleted: %v", err)
	}
	if _, err := hs.Provider.Clients.Get(pc.Name); err != nil {
		t.Errorf("client of a connection being deleted but in use is gone: %v", err)
	}

	if err := hs.Kube.Delete(ctx, u); err != nil {
		t.Fatalf("delete ProviderConfigUsage: %v", err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := hs.Kube.Get(ctx, types.NamespacedName{Name: pc.Name}, &v1alpha1.ProxmoxConnection{})
		if kerrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection not deleted %s after its last usage went (last error %v)", wait, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := hs.Provider.Clients.Get(pc.Name); !errors.Is(err, pve.ErrNotReady) {
		t.Errorf("client cache Get after deletion = %v, want ErrNotReady", err)
	}
}

// The provider watches Secret metadata (secrets.Watch, which keeps no Secret)
// and reads Secrets by name: no list or watch of full Secrets ever reaches
// the API server. TestMain repeats the check after all tests.
func TestNoSecretInformer(t *testing.T) {
	hs := requireHarness(t)
	ns := hs.namespace(t)
	hs.Sim.AddToken("root@pam!noinformer", "noinformer-secret-2d5a")
	// As kubectl apply leaves it: the whole Secret in an annotation.
	applied := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pve-token", Annotations: map[string]string{
			"kubectl.kubernetes.io/last-applied-configuration": `{"stringData":{"token":"noinformer-secret-2d5a"}}`,
		}},
		StringData: map[string]string{"token": "noinformer-secret-2d5a"},
	}
	if err := hs.Kube.Create(context.Background(), applied); err != nil {
		t.Fatalf("create Secret: %v", err)
	}
	spec := hs.simSpec()
	spec.TokenID = "root@pam!noinformer"
	spec.SecretFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-token", Key: "token"}
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)

	if bad := hs.Requests.FullSecretListsOrWatches(); len(bad) > 0 {
		t.Errorf("full Secret lists or watches reached the API server: %v", bad)
	}
	if hs.Requests.MetadataListsOrWatches() == 0 {
		t.Errorf("no metadata-only Secret list or watch was recorded: the request recorder sees nothing")
	}
}

// Nothing the provider logs at debug level, emits as an event or writes to a
// status contains a credential, through a rotation and a failed login.
func TestNoSecretsInLogs(t *testing.T) {
	hs := requireHarness(t)
	ctx := context.Background()
	ns := hs.namespace(t)
	secrets := []string{"logs-old-pw-e7c1", "logs-new-pw-93fa", "logs-bad-pw-0b6d"}
	hs.Sim.AddUser("logs@pve", secrets[0])
	hs.createSecret(t, ns, "pve-login", map[string]string{"password": secrets[0]})
	spec := hs.simSpec()
	spec.Username = "logs@pve"
	spec.PasswordFrom = &v1alpha1.SecretKeySelector{Namespace: ns, Name: "pve-login", Key: "password"}
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)

	// Rotation.
	hs.Sim.SetUserPassword("logs@pve", secrets[1])
	rotated := hs.updateSecret(t, ns, "pve-login", map[string]string{"password": secrets[1]})
	hs.waitFor(t, pc.Name, "Ready after the rotation", func(got *v1alpha1.ProxmoxConnection) bool {
		return got.Status.GetCondition(xpv2.TypeReady).Status == corev1.ConditionTrue &&
			len(got.Status.ObservedSecrets) == 1 && got.Status.ObservedSecrets[0].ResourceVersion == rotated.ResourceVersion
	})

	// A failed login.
	hs.updateSecret(t, ns, "pve-login", map[string]string{"password": secrets[2]})
	hs.waitReady(t, pc.Name, corev1.ConditionFalse, v1alpha1.ReasonAuthenticationFailed)

	var where []string
	logs := hs.Logs.String()
	if logs == "" {
		t.Fatal("the provider logged nothing at debug level; the test would prove nothing")
	}
	events := &corev1.EventList{}
	if err := hs.Kube.List(ctx, events); err != nil {
		t.Fatalf("list events: %v", err)
	}
	eventsJSON, err := json.Marshal(events)
	if err != nil {
		t.Fatalf("encode events: %v", err)
	}
	conns := &v1alpha1.ProxmoxConnectionList{}
	if err := hs.Kube.List(ctx, conns); err != nil {
		t.Fatalf("list connections: %v", err)
	}
	statuses := make([]v1alpha1.ProxmoxConnectionStatus, 0, len(conns.Items))
	for _, c := range conns.Items {
		statuses = append(statuses, c.Status)
	}
	statusJSON, err := json.Marshal(statuses)
	if err != nil {
		t.Fatalf("encode statuses: %v", err)
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			where = append(where, "logs")
		}
		if strings.Contains(string(eventsJSON), s) {
			where = append(where, "events")
		}
		if strings.Contains(string(statusJSON), s) {
			where = append(where, "status")
		}
	}
	if len(where) > 0 {
		t.Errorf("a credential appeared in: %v", where)
	}
}

// A password connection logs in once per ticket lifetime however many
// resources start using it, and sends no request of its own to re-verify
// while the resources' requests succeed (PVE's /version is read once, when
// the client is built).
func TestVerificationCostsNothingUnderTraffic(t *testing.T) {
	hs := requireHarness(t)
	ctx := t.Context()
	ns := hs.namespace(t)
	user := fmt.Sprintf("traffic-%d@pve", time.Now().UnixNano())
	hs.Sim.AddUser(user, "traffic-pw-7d21")
	spec := hs.simSpec()
	spec.Username, spec.Password = user, "traffic-pw-7d21"
	pc := hs.createConnection(t, spec)
	hs.waitReady(t, pc.Name, corev1.ConditionTrue, v1alpha1.ReasonAvailable)

	traffic, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for traffic.Err() == nil {
			if cl, err := hs.Provider.Clients.Get(pc.Name); err == nil {
				_ = cl.API().Get(traffic, "/nodes", nil)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	const users = 10
	for i := range users {
		hs.createUsage(t, ns, pc.Name, fmt.Sprintf("vm-%d", i))
	}
	hs.waitFor(t, pc.Name, fmt.Sprintf("counting %d users", users), func(pc *v1alpha1.ProxmoxConnection) bool { return pc.Status.Users == users })
	time.Sleep(11 * time.Second) // two periodic re-verifications (poll 5 s)
	stop()
	<-done

	s, err := metricstest.Gather(ctrlmetrics.Registry)
	if err != nil {
		t.Fatal(err)
	}
	for route, want := range map[string]float64{"/access/ticket": 1, "/version": 1} {
		got, _ := s.Sum(metrics.RequestsTotal, map[string]string{metrics.LabelConnection: pc.Name, metrics.LabelRoute: route})
		if got != want {
			t.Errorf("%s requests of connection %s = %v, want %v (one when the client was built)", route, pc.Name, got, want)
		}
	}
}

// createUsage makes connection name count one more user, as a managed
// resource's ProviderConfigUsage does; it is deleted when t ends, before
// the connection.
func (hs *harness) createUsage(t *testing.T, ns, connection, resource string) {
	t.Helper()
	u := &v1alpha1.ProviderConfigUsage{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: resource + "-usage",
			Labels: map[string]string{
				xpv2.LabelKeyProviderName: connection,
				xpv2.LabelKeyProviderKind: v1alpha1.ProxmoxConnectionKind,
			},
		},
	}
	u.ProviderConfigReference = xpv2.ProviderConfigReference{Kind: v1alpha1.ProxmoxConnectionKind, Name: connection}
	u.ResourceReference = xpv2.TypedReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "VirtualMachine", Name: resource}
	if err := hs.Kube.Create(context.Background(), u); err != nil {
		t.Fatalf("create ProviderConfigUsage: %v", err)
	}
	t.Cleanup(func() {
		if err := hs.Kube.Delete(context.Background(), u); err != nil && !kerrors.IsNotFound(err) {
			t.Errorf("delete ProviderConfigUsage %s: %v", u.Name, err)
		}
	})
}
