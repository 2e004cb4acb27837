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

package migrate

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	corev1 "k8s.io/api/core/v1"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// progressName is the ConfigMap apply records its finished steps in.
const progressName = "kubemox-migrate"

// The steps of apply, in order, as the progress ConfigMap records them.
const (
	stepFinalizers = "finalizers-removed"
	stepCRDs       = "kubemox-crds-deleted"
	stepServed     = "kinds-served"
	stepApplied    = "export-applied"
	stepReady      = "ready"
	stepManaged    = "managed"
)

// progress is the record of finished steps, in a ConfigMap so that an
// interrupted apply continues where it stopped.
type progress struct {
	kube client.Client
	key  client.ObjectKey
	done map[string]string
}

func loadProgress(ctx context.Context, kube client.Client, namespace string) (*progress, error) {
	p := &progress{kube: kube, key: client.ObjectKey{Namespace: namespace, Name: progressName}, done: map[string]string{}}
	cm := &corev1.ConfigMap{}
	err := kube.Get(ctx, p.key, cm)
	if kerrors.IsNotFound(err) {
		return p, nil
	}
	if err != nil {
		return nil, errors.Wrapf(err, "cannot read the progress ConfigMap %s", p.key)
	}
	for k, v := range cm.Data {
		p.done[k] = v
	}
	return p, nil
}

func (p *progress) isDone(step string) bool { _, ok := p.done[step]; return ok }

// record marks step done, creating the ConfigMap on the first step.
func (p *progress) record(ctx context.Context, c *calls, step string) error {
	return c.do(fmt.Sprintf("record step %s in ConfigMap %s", step, p.key), func() error {
		p.done[step] = time.Now().UTC().Format(time.RFC3339)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.key.Namespace, Name: p.key.Name}}
		err := p.kube.Get(ctx, p.key, cm)
		if kerrors.IsNotFound(err) {
			cm.Data = p.done
			return errors.Wrap(p.kube.Create(ctx, cm), "cannot create the progress ConfigMap")
		}
		if err != nil {
			return errors.Wrap(err, "cannot read the progress ConfigMap")
		}
		cm.Data = p.done
		return errors.Wrap(p.kube.Update(ctx, cm), "cannot update the progress ConfigMap")
	})
}

// calls runs every write apply makes, printing it first; with dryRun it
// only prints it.
type calls struct {
	out    io.Writer
	dryRun bool
}

func (c *calls) do(what string, f func() error) error {
	if c.dryRun {
		fmt.Fprintf(c.out, "would %s\n", what)
		return nil
	}
	fmt.Fprintf(c.out, "%s\n", what)
	return f()
}
