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

// Package pveraw sends raw requests to a Proxmox VE API (a real one or the
// simulator) for tests that check the wire itself: the status line, PVE's
// JSON envelope, headers. The simulator's tests and the conformance suite
// (test/pveconformance) share it; production code speaks PVE's wire only
// through internal/clients/proxmox.
package pveraw

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Response is one raw answer: its status, and its body decoded where it is
// PVE's JSON envelope.
type Response struct {
	Status int
	// StatusLine is the code and reason ("500 VM is locked (clone)"); PVE
	// puts its message in the reason phrase.
	StatusLine string
	Header     http.Header
	Body       map[string]json.RawMessage
	Text       string
}

// Message is the envelope's "message".
func (r Response) Message() string {
	var m string
	_ = json.Unmarshal(r.Body["message"], &m)
	return m
}

// Errors is the envelope's per-parameter "errors".
func (r Response) Errors() map[string]string {
	m := map[string]string{}
	_ = json.Unmarshal(r.Body["errors"], &m)
	return m
}

// Data decodes the envelope's "data" into v.
func (r Response) Data(v any) error {
	if err := json.Unmarshal(r.Body["data"], v); err != nil {
		return fmt.Errorf("decode data of %q: %w", r.Text, err)
	}
	return nil
}

// UPID is the UPID a task-starting answer carries in data.
func (r Response) UPID() string {
	var s string
	_ = json.Unmarshal(r.Body["data"], &s)
	return s
}

// Params builds parameters from key, value pairs.
func Params(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// Form sends params as PVE's clients do: in the query for GET and DELETE,
// else as a form body.
func Form(ctx context.Context, c *http.Client, method, target string, params url.Values, headers map[string]string) (Response, error) {
	if method == http.MethodGet || method == http.MethodDelete {
		if len(params) > 0 {
			target += "?" + params.Encode()
		}
		return Send(ctx, c, method, target, "", "", headers)
	}
	if params == nil {
		return Send(ctx, c, method, target, "", "", headers)
	}
	return Send(ctx, c, method, target, "application/x-www-form-urlencoded", params.Encode(), headers)
}

// Send sends body (none when empty) with contentType (none when empty) and
// exactly the headers given (none: anonymous) to target, a full URL.
func Send(ctx context.Context, c *http.Client, method, target, contentType, body string, headers map[string]string) (Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, target, err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, target, err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read the answer: %w", method, target, err)
	}
	out := Response{Status: res.StatusCode, StatusLine: res.Status, Header: res.Header, Text: string(b), Body: map[string]json.RawMessage{}}
	_ = json.Unmarshal(b, &out.Body)
	return out, nil
}
