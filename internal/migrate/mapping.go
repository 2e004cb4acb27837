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
	"os"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// Mapping says which namespace a cluster-scoped kubemox object lands in:
// the first label rule whose selector matches, else its kind's entry,
// else Default. kubemox's namespaced kinds stay where they are, and a
// set's VMs go with their set.
type Mapping struct {
	Default string            `json:"default,omitempty"`
	Kinds   map[string]string `json:"kinds,omitempty"`
	Labels  []LabelRule       `json:"labels,omitempty"`
}

// LabelRule maps objects whose labels match Selector.
type LabelRule struct {
	Selector  metav1.LabelSelector `json:"selector"`
	Namespace string               `json:"namespace"`
}

// LoadMapping reads a mapping file; an empty path maps everything to def.
func LoadMapping(path, def string) (*Mapping, error) {
	m := &Mapping{}
	if path != "" {
		raw, err := os.ReadFile(path) //nolint:gosec // the user names the file to read
		if err != nil {
			return nil, errors.Wrap(err, "cannot read the namespace mapping file")
		}
		if err := yaml.UnmarshalStrict(raw, m); err != nil {
			return nil, errors.Wrapf(err, "cannot parse the namespace mapping file %s", path)
		}
	}
	if m.Default == "" {
		m.Default = def
	}
	for kind := range m.Kinds {
		if _, ok := KindNamed(kind); !ok {
			return nil, errors.Errorf("namespace mapping names kind %q, which kubemox does not have", kind)
		}
	}
	return m, nil
}

// NamespaceFor is the namespace an object of kind with these labels lands
// in.
func (m *Mapping) NamespaceFor(kind string, objLabels map[string]string) (string, error) {
	for _, r := range m.Labels {
		sel, err := metav1.LabelSelectorAsSelector(&r.Selector)
		if err != nil {
			return "", errors.Wrap(err, "invalid label selector in the namespace mapping")
		}
		if sel.Matches(labels.Set(objLabels)) {
			return r.Namespace, nil
		}
	}
	if ns, ok := m.Kinds[kind]; ok {
		return ns, nil
	}
	return m.Default, nil
}
