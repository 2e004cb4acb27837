package pvesim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/crossplane/crossplane-runtime/v2/pkg/errors"
)

// apiError is an error that the router turns into PVE's error envelope.
type apiError struct {
	Status  int
	Message string
	Errors  map[string]string
}

func (e *apiError) Error() string { return e.Message }

// errf builds a PVE error with the given HTTP status.
func errf(status int, format string, args ...any) *apiError {
	return &apiError{Status: status, Message: fmt.Sprintf(format, args...)}
}

// errInternal is PVE's usual answer to a failed call: a 500 with the die() text.
func errInternal(format string, args ...any) *apiError {
	return errf(http.StatusInternalServerError, format, args...)
}

// errParams is PVE's "Parameter verification failed." with the per-parameter messages.
func errParams(errs map[string]string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Message: "Parameter verification failed.", Errors: errs}
}

// errParam is errParams for a single parameter.
func errParam(name, msg string) *apiError {
	return errParams(map[string]string{name: msg})
}

// envelope is the body of every /api2/json answer.
type envelope struct {
	Data    any               `json:"data"`
	Message string            `json:"message,omitempty"`
	Errors  map[string]string `json:"errors,omitempty"`
	Total   *int              `json:"total,omitempty"`
}

// withTotal is an answer carrying PVE's "total" beside its data: a handler's
// $rpcenv->set_result_attrib('total', $n), which pve-http-server's JSON formatter writes
// next to data.
type withTotal struct {
	data  any
	total int
}

// The header values every answer carries, shared rather than allocated per response:
// net/http only reads them, and Header.Set and Add replace or copy, never write into them.
var (
	hdrServer       = []string{"pve-api-daemon/3.0"}
	hdrContentType  = []string{"application/json;charset=UTF-8"}
	hdrCacheControl = []string{"max-age=0"}
	hdrPragma       = []string{"no-cache"}
	hdrExpires      = []string{"Thu, 01 Jan 1970 00:00:00 GMT"}
)

func setPVEHeaders(w http.ResponseWriter) {
	h := w.Header()
	h["Server"] = hdrServer
	h["Content-Type"] = hdrContentType
	h["Cache-Control"] = hdrCacheControl
	h["Pragma"] = hdrPragma
	h["Expires"] = hdrExpires
}

func writeData(w http.ResponseWriter, data any) {
	if enc, ok := data.(*encodedData); ok {
		writeEncoded(w, enc.buf)
		return
	}
	if wt, ok := data.(withTotal); ok {
		writeEnvelope(w, http.StatusOK, envelope{Data: wt.data, Total: &wt.total})
		return
	}
	writeEnvelope(w, http.StatusOK, envelope{Data: data})
}

// writeEncoded wraps pre-encoded data in the envelope without decoding it again.
func writeEncoded(w http.ResponseWriter, data []byte) {
	setPVEHeaders(w)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)+len(`{"data":}`)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"data":`)
	_, _ = w.Write(data) //nolint:gosec // G705: a JSON answer (Content-Type application/json), never rendered as HTML
	_, _ = io.WriteString(w, "}")
}

// writeError renders err as PVE does: the message ends with a newline in the body.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = errInternal("%s", err.Error())
	}
	msg := ensureNewline(ae.Message)
	setReason(w, msg)
	writeEnvelope(w, ae.Status, envelope{Data: nil, Message: msg, Errors: ae.Errors})
}

func writeEnvelope(w http.ResponseWriter, status int, env envelope) {
	setPVEHeaders(w)
	body, err := json.Marshal(env)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"data":null,"message":"unable to encode response\n"}`)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// boolNum renders a boolean as PVE's JSON encoder does: 0 or 1.
func boolNum(b bool) int {
	if b {
		return 1
	}
	return 0
}

// perlText is an error as Perl stringifies what the worker died with: a plain die is its
// message; a PVE::Exception raised with a code (raise_param_exc's 400, raise_perm_exc's
// 403) starts with that code and lists each parameter's message on a line of its own.
// errInternal stands for a plain die, so a 500 carries no code.
func perlText(err error) string {
	var ae *apiError
	if !errors.As(err, &ae) {
		return ensureNewline(err.Error())
	}
	msg := ae.Message
	if ae.Status != http.StatusInternalServerError {
		msg = strconv.Itoa(ae.Status) + " " + msg
	}
	msg = ensureNewline(msg)
	for _, k := range sortedKeys(ae.Errors) {
		msg += k + ": " + ae.Errors[k] + "\n"
	}
	return msg
}

func ensureNewline(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// workerErrorLine is the one line fork_worker makes of a worker's error: chomped, every
// newline a space. It is both the "TASK ERROR: " log line and the task's exit status.
func workerErrorLine(err error) string {
	return strings.ReplaceAll(strings.TrimSuffix(perlText(err), "\n"), "\n", " ")
}

// workerError is a worker's die "$prefix $err": the prefix, then the inner error as Perl
// stringifies it (an exception keeps its code and parameter lines).
type workerError struct {
	prefix string
	inner  error
}

func (e *workerError) Error() string { return e.prefix + " " + perlText(e.inner) }

// dieWith wraps a worker's error as qemu-server's workers do ("unable to create VM 100 -",
// "clone failed:"); nil stays nil.
func dieWith(prefix string, err error) error {
	if err == nil {
		return nil
	}
	return &workerError{prefix: prefix, inner: err}
}
