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

// Package e2e runs change logs and pauses end to end: a real kube-apiserver
// (testenv), the provider's manager in-process with change logs on, the PVE
// simulator over HTTPS, and a change-log gRPC service of the test's own on a
// unix socket, in place of Crossplane's changelogs sidecar.
package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"

	changelogs "github.com/crossplane/crossplane-runtime/v2/apis/changelogs/proto/v1alpha1"

	"github.com/kubemox/provider-proxmox/internal/provider"
	"github.com/kubemox/provider-proxmox/internal/provider/providertest"
	"github.com/kubemox/provider-proxmox/internal/pvesim"
	"github.com/kubemox/provider-proxmox/internal/testenv"
)

const (
	// wait bounds how long the provider may take to react on a busy
	// 2-core machine.
	wait         = 90 * time.Second
	node         = "lowtower"
	templateName = "debian-12"
	templateID   = 9000
	connName     = "changelogs"
	tokenID      = "root@pam!changelogs"
	credNS       = "changelogs"
	credName     = "proxmox-credentials"
	// tokenSecret and cloudInitPassword must never appear in an entry.
	tokenSecret       = "token-secret-canary-5f1e"
	cloudInitPassword = "ci-password-canary-77ab"
	// stillPaused is how long a paused resource is watched for any work.
	stillPaused = 8 * time.Second
)

var (
	env *testenv.Env
	h   *providertest.Harness
	// service is the change-log service the provider sends to.
	service = &changeLogService{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "changelogs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	socket := filepath.Join(dir, "changelogs.sock")
	stop, err := service.serve(socket)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	o := providertest.Options{
		Provider: provider.Options{PollInterval: 20 * time.Second, MaxReconcileRate: 10, EnableManagementPolicies: true,
			ChangeLogsSocketPath: socket, PollJitterPercentage: 10},
		Sim: pvesim.Options{Nodes: []string{node}},
	}
	code := providertest.Main(m, "changelog e2e", &env, o, setup, nil)
	stop()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// setup seeds the simulator with the token and the template, and creates
// the connection.
func setup(ctx context.Context, p *providertest.Harness) error {
	p.Sim.AddToken(tokenID, tokenSecret)
	if err := p.Sim.AddTemplate(node, templateID, templateName); err != nil {
		return err
	}
	if err := p.CreateTokenConnection(ctx, connName, tokenID, credNS, credName, tokenSecret); err != nil {
		return err
	}
	h = p
	return p.WaitConnectionReady(ctx, connName, wait)
}

func require(t *testing.T) *providertest.Harness {
	t.Helper()
	env.Require(t)
	return h
}

// changeLogService keeps every entry it is sent, as the sidecar would log
// them.
type changeLogService struct {
	changelogs.UnimplementedChangeLogServiceServer

	mu      sync.Mutex
	entries []*changelogs.ChangeLogEntry
}

// SendChangeLog implements changelogs.ChangeLogServiceServer.
func (s *changeLogService) SendChangeLog(_ context.Context, req *changelogs.SendChangeLogRequest) (*changelogs.SendChangeLogResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.entries = append(s.entries, req.GetEntry())
	return &changelogs.SendChangeLogResponse{}, nil
}

// serve listens on the unix socket path; stop ends it.
func (s *changeLogService) serve(path string) (stop func(), err error) {
	l, err := (&net.ListenConfig{}).Listen(context.Background(), "unix", path)
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	changelogs.RegisterChangeLogServiceServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	return srv.Stop, nil
}

// of returns the entries about the object ns/name of kind, in the order
// they came.
func (s *changeLogService) of(kind, ns, name string) []*changelogs.ChangeLogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*changelogs.ChangeLogEntry
	for _, e := range s.entries {
		if e.GetKind() == kind && e.GetName() == name && namespaceOf(e) == ns {
			out = append(out, e)
		}
	}
	return out
}

// in returns the entries about objects in namespace ns.
func (s *changeLogService) in(ns string) []*changelogs.ChangeLogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*changelogs.ChangeLogEntry
	for _, e := range s.entries {
		if namespaceOf(e) == ns {
			out = append(out, e)
		}
	}
	return out
}

// all returns every entry as the sidecar would print it (protojson).
func (s *changeLogService) all(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.entries))
	for _, e := range s.entries {
		b, err := protojson.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// namespaceOf is the namespace in an entry's snapshot of its resource (the
// entry itself names none).
func namespaceOf(e *changelogs.ChangeLogEntry) string {
	md := e.GetSnapshot().GetFields()["metadata"].GetStructValue()
	return md.GetFields()["namespace"].GetStringValue()
}

// ops are the operations of entries.
func ops(entries []*changelogs.ChangeLogEntry) []changelogs.OperationType {
	out := make([]changelogs.OperationType, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.GetOperation())
	}
	return out
}
