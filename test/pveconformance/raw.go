package pveconformance

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/kubemox/provider-proxmox/internal/pveraw"
)

// Response is one raw answer (the shape the simulator's own tests use too).
type Response = pveraw.Response

// Params builds parameters from key, value pairs.
func Params(kv ...string) url.Values { return pveraw.Params(kv...) }

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
	res, err := pveraw.Form(ctx, tg.HTTPClient(), method, tg.apiURL+path, params, headers)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return res, nil
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
