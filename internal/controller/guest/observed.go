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

package guest

import "github.com/crossplane/crossplane-runtime/v2/pkg/errors"

// ErrNotObserved is what Update or Delete get when no Observe ran before
// them on the same external client.
var ErrNotObserved = errors.New("no observation of this guest in this reconcile: Observe must run first")

// Observed hands what a reconcile's Observe learnt (a kind's observation
// type T) to the Update or Delete the managed reconciler calls after it.
//
// crossplane-runtime connects one external client per reconcile and calls
// Observe on it before any other verb, and its verbs return no payload: the
// hand-off therefore lives on that client. Observed makes it one slot that
// only Observe fills (Begin) and the other verbs only read (Last), with an
// error rather than a nil observation when a verb runs without Observe.
type Observed[T any] struct {
	last *T
}

// Begin starts this reconcile's observation, forgetting any earlier one.
// Observe fills in what it returns.
func (o *Observed[T]) Begin() *T {
	o.last = new(T)
	return o.last
}

// Last returns the observation the last Observe made, ErrNotObserved when
// none ran.
func (o *Observed[T]) Last() (*T, error) {
	if o.last == nil {
		return nil, ErrNotObserved
	}
	return o.last, nil
}
