package pveconformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
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

// Params builds parameters from key, value pairs.
func Params(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// Raw sends one request authenticated as the target's user (the token if
// there is one), parameters in the query (GET, DELETE) or a form body.
func (tg *Target) Raw(ctx context.Context, method, path string, params url.Values) (Response, error) {
	auth, err := tg.authHeaders(ctx)
	if err != nil {
		return Response{}, err
	}
	return tg.RawAs(ctx, method, path, params, auth)
}

// RawAs sends one request with exactly the headers given (none: anonymous).
func (tg *Target) RawAs(ctx context.Context, method, path string, params url.Values, headers map[string]string) (Response, error) {
	target := tg.apiURL + path
	var body io.Reader
	if method == http.MethodGet || method == http.MethodDelete {
		if len(params) > 0 {
			target += "?" + params.Encode()
		}
	} else if params != nil {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return Response{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := tg.HTTPClient().Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	out := Response{Status: res.StatusCode, StatusLine: res.Status, Header: res.Header, Text: string(b), Body: map[string]json.RawMessage{}}
	_ = json.Unmarshal(b, &out.Body)
	return out, nil
}

// authHeaders are the token header, or a ticket cookie and CSRF token from a
// password login (renewed after an hour; PVE's last two).
func (tg *Target) authHeaders(ctx context.Context) (map[string]string, error) {
	if tg.cfg.TokenID != "" {
		return map[string]string{"Authorization": "PVEAPIToken=" + tg.cfg.TokenID + "=" + tg.cfg.TokenSecret}, nil
	}
	s := tg.session
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ticket == "" || time.Since(s.obtained) > time.Hour {
		res, err := tg.RawAs(ctx, http.MethodPost, "/access/ticket", Params("username", tg.cfg.Username, "password", tg.cfg.Password), nil)
		if err != nil {
			return nil, err
		}
		var d struct {
			Ticket string `json:"ticket"`
			CSRF   string `json:"CSRFPreventionToken"`
		}
		if res.Status != http.StatusOK || res.Data(&d) != nil || d.Ticket == "" {
			return nil, fmt.Errorf("log in as %s: %s", tg.cfg.Username, res.StatusLine)
		}
		s.ticket, s.csrf, s.obtained = d.Ticket, d.CSRF, time.Now()
	}
	return map[string]string{"Cookie": "PVEAuthCookie=" + url.QueryEscape(s.ticket), "CSRFPreventionToken": s.csrf}, nil
}

// TaskStatus is a finished or running task as /tasks/{upid}/status has it.
type TaskStatus struct {
	Status     string `json:"status"`
	ExitStatus string `json:"exitstatus"`
}

// WaitTask polls a task until it stops and returns its exit status ("OK",
// "WARNINGS: n" or the error).
func (tg *Target) WaitTask(ctx context.Context, node, upid string) (string, error) {
	path := "/nodes/" + url.PathEscape(node) + "/tasks/" + url.PathEscape(upid) + "/status"
	for {
		res, err := tg.Raw(ctx, http.MethodGet, path, nil)
		if err != nil {
			return "", err
		}
		var st TaskStatus
		if res.Status != http.StatusOK || res.Data(&st) != nil {
			return "", fmt.Errorf("task %s: %s %s", upid, res.StatusLine, res.Text)
		}
		if st.Status == "stopped" {
			return st.ExitStatus, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("task %s still running: %w", upid, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// UPID is the UPID a task-starting answer carries in data.
func (r Response) UPID() string {
	var s string
	_ = json.Unmarshal(r.Body["data"], &s)
	return s
}
