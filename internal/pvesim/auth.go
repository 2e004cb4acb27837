package pvesim

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// authStore holds users, API tokens and the key tickets are signed with.
type authStore struct {
	mu       sync.RWMutex
	users    map[string]string // userid -> password
	tokens   map[string]string // "user@realm!id" -> secret
	key      []byte
	lifetime time.Duration
	// ticketFP remembers which password fingerprint a ticket descends from, for counters.
	ticketFP map[string]string
}

func newAuthStore(lifetime time.Duration) *authStore {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &authStore{users: map[string]string{}, tokens: map[string]string{}, key: key, lifetime: lifetime, ticketFP: map[string]string{}}
}

// fingerprint names a secret without revealing it: hex of sha256(secret)[:8].
func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:8])
}

func (a *authStore) sign(data string) string {
	m := hmac.New(sha256.New, a.key)
	_, _ = io.WriteString(m, data)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// issueTicket returns a ticket "PVE:user@realm:HEXTIME::sig" and its CSRF token.
func (a *authStore) issueTicket(user, fp string, now time.Time) (string, string) {
	hexTime := fmt.Sprintf("%08X", now.Unix())
	plain := "PVE:" + user + ":" + hexTime
	ticket := plain + "::" + a.sign(plain)
	csrf := hexTime + ":" + a.sign(hexTime+":"+user)
	a.mu.Lock()
	a.ticketFP[ticket] = fp
	a.mu.Unlock()
	return ticket, csrf
}

// verifyTicket checks signature and age; it never re-checks the password, as PVE.
func (a *authStore) verifyTicket(ticket string, now time.Time) (string, string, bool) {
	plain, sig, ok := strings.Cut(ticket, "::")
	if !ok || !hmac.Equal([]byte(a.sign(plain)), []byte(sig)) {
		return "", "", false
	}
	parts := strings.Split(plain, ":")
	if len(parts) != 3 || parts[0] != "PVE" {
		return "", "", false
	}
	ts, err := strconv.ParseInt(parts[2], 16, 64)
	if err != nil {
		return "", "", false
	}
	age := now.Sub(time.Unix(ts, 0))
	if age < -5*time.Minute || age > a.lifetime {
		return "", "", false
	}
	a.mu.RLock()
	fp := a.ticketFP[ticket]
	a.mu.RUnlock()
	return parts[1], fp, true
}

func (a *authStore) verifyCSRF(user, token string, now time.Time) bool {
	hexTime, sig, ok := strings.Cut(token, ":")
	if !ok || !hmac.Equal([]byte(a.sign(hexTime+":"+user)), []byte(sig)) {
		return false
	}
	ts, err := strconv.ParseInt(hexTime, 16, 64)
	if err != nil {
		return false
	}
	age := now.Sub(time.Unix(ts, 0))
	return age >= -5*time.Minute && age <= a.lifetime
}

// secrets names one of the store's id -> secret maps; the maps are replaced on restore,
// so they are picked under the lock rather than passed in.
type secrets func(*authStore) map[string]string

func userSecrets(a *authStore) map[string]string  { return a.users }
func tokenSecrets(a *authStore) map[string]string { return a.tokens }

// matches compares a secret in constant time with the stored one.
func (a *authStore) matches(which secrets, id, secret string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	want, ok := which(a)[id]
	return ok && subtle.ConstantTimeCompare([]byte(want), []byte(secret)) == 1
}

func (a *authStore) exists(which secrets, id string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	_, ok := which(a)[id]
	return ok
}

func (a *authStore) put(which secrets, id, secret string) {
	a.mu.Lock()
	which(a)[id] = secret
	a.mu.Unlock()
}

func (a *authStore) remove(which secrets, id string) {
	a.mu.Lock()
	delete(which(a), id)
	a.mu.Unlock()
}

func (a *authStore) checkPassword(user, password string) bool {
	return a.matches(userSecrets, user, password)
}

func (a *authStore) checkToken(tokenID, secret string) bool {
	return a.matches(tokenSecrets, tokenID, secret)
}

func (a *authStore) userExists(user string) bool { return a.exists(userSecrets, user) }

// AddUser adds a password user such as "root@pam", or changes its password.
func (s *Server) AddUser(userid, password string) {
	s.auth.put(userSecrets, userid, password)
	s.markDirty()
}

// SetUserPassword changes a password; tickets issued earlier stay valid, as in PVE.
func (s *Server) SetUserPassword(userid, password string) { s.AddUser(userid, password) }

// RemoveUser deletes a user; its tickets stop working.
func (s *Server) RemoveUser(userid string) {
	s.auth.remove(userSecrets, userid)
	s.markDirty()
}

// AddToken adds an API token "user@realm!id"; adding it again rotates the secret.
func (s *Server) AddToken(tokenID, secret string) {
	s.auth.put(tokenSecrets, tokenID, secret)
	s.markDirty()
}

// RemoveToken revokes an API token.
func (s *Server) RemoveToken(tokenID string) {
	s.auth.remove(tokenSecrets, tokenID)
	s.markDirty()
}

func errUnauthorized(msg string) *apiError { return errf(http.StatusUnauthorized, "%s", msg) }

// authenticate implements pveproxy's auth_handler: API token header, else ticket cookie
// (or header) plus a CSRF token on anything but GET.
func (s *Server) authenticate(hr *http.Request, method string, rt *route, relPath string) (credential, error) {
	now := time.Now()
	if tok, ok := apiTokenHeader(hr); ok {
		cred, err := s.verifyAPIToken(tok)
		if err != nil {
			return credential{}, err
		}
		if rt != nil && rt.spec.NoToken {
			return credential{}, errf(http.StatusForbidden, "URI '%s' not available with API token, need proper ticket.", relPath)
		}
		return cred, nil
	}
	if rt != nil && rt.spec.NoAuth {
		return credential{}, nil
	}
	ticket := ticketFromRequest(hr)
	if ticket == "" {
		return credential{}, errUnauthorized("No ticket")
	}
	user, fp, ok := s.auth.verifyTicket(ticket, now)
	if !ok || !s.auth.userExists(user) {
		return credential{}, errUnauthorized("permission denied - invalid PVE ticket")
	}
	if method != http.MethodGet && !s.auth.verifyCSRF(user, hr.Header.Get("CSRFPreventionToken"), now) {
		return credential{}, errUnauthorized("Permission denied - invalid csrf token")
	}
	return credential{User: user, Fingerprint: fp}, nil
}

// presentedSecret is what RejectedBySecret counts a rejected request under:
// the fingerprint of the token secret it carried, "ticket", or "none".
func presentedSecret(hr *http.Request) string {
	if tok, ok := apiTokenHeader(hr); ok {
		if bang := strings.Index(tok, "!"); bang > 0 {
			if sep := strings.IndexAny(tok[bang:], "=:"); sep >= 0 {
				return fingerprint(tok[bang+sep+1:])
			}
		}
		return "none"
	}
	if ticketFromRequest(hr) != "" {
		return "ticket"
	}
	return "none"
}

// isUnauthorized reports a 401 answer.
func isUnauthorized(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == http.StatusUnauthorized
}

func apiTokenHeader(hr *http.Request) (string, bool) {
	h := hr.Header.Get("Authorization")
	if v, ok := strings.CutPrefix(h, "PVEAPIToken="); ok {
		return v, true
	}
	if v, ok := strings.CutPrefix(h, "PVEAPIToken "); ok {
		return v, true
	}
	return "", false
}

// verifyAPIToken checks "user@realm!id=secret" (PVE also accepts ':' before the secret).
func (s *Server) verifyAPIToken(v string) (credential, error) {
	bang := strings.Index(v, "!")
	if bang <= 0 {
		return credential{}, errUnauthorized("authentication failure")
	}
	sep := strings.IndexAny(v[bang:], "=:")
	if sep < 0 {
		return credential{}, errUnauthorized("authentication failure")
	}
	tokenID, secret := v[:bang+sep], v[bang+sep+1:]
	if !s.auth.checkToken(tokenID, secret) {
		return credential{}, errUnauthorized("authentication failure")
	}
	return credential{User: v[:bang], TokenID: tokenID, Fingerprint: fingerprint(secret)}, nil
}

func ticketFromRequest(hr *http.Request) string {
	if v, ok := strings.CutPrefix(hr.Header.Get("Authorization"), "PVEAuthCookie="); ok {
		return v
	}
	for _, line := range hr.Header.Values("Cookie") {
		for _, part := range strings.Split(line, ";") {
			name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
			if ok && name == "PVEAuthCookie" {
				if u, err := url.PathUnescape(value); err == nil {
					return u
				}
				return value
			}
		}
	}
	return ""
}

// handleCreateTicket is POST /access/ticket: a login with a password, or a renewal when
// the password is a still-valid ticket of the same user.
func handleCreateTicket(s *Server, r *request) (any, error) {
	user := r.str("username")
	if realm := r.str("realm"); realm != "" && !strings.Contains(user, "@") {
		user += "@" + realm
	}
	now := time.Now()
	password := r.str("password")
	var fp string
	if strings.HasPrefix(password, "PVE:") {
		tUser, tFP, ok := s.auth.verifyTicket(password, now)
		if !ok || tUser != user || !s.auth.userExists(user) {
			return nil, errUnauthorized("authentication failure")
		}
		fp = tFP
	} else {
		if !s.auth.checkPassword(user, password) {
			return nil, errUnauthorized("authentication failure")
		}
		fp = fingerprint(password)
	}
	ticket, csrf := s.auth.issueTicket(user, fp, now)
	return map[string]any{
		"username":            user,
		"ticket":              ticket,
		"CSRFPreventionToken": csrf,
		"cap":                 fullCapabilities(),
	}, nil
}

// fullCapabilities is the "cap" object of a root login; go-proxmox needs numeric values.
func fullCapabilities() map[string]map[string]int {
	privs := func(names ...string) map[string]int {
		m := make(map[string]int, len(names))
		for _, n := range names {
			m[n] = 1
		}
		return m
	}
	return map[string]map[string]int{
		"vms":     privs("VM.Allocate", "VM.Audit", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit", "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network", "VM.Config.Options", "VM.Console", "VM.Migrate", "VM.PowerMgmt", "VM.Snapshot", "VM.Snapshot.Rollback", "Permissions.Modify"),
		"storage": privs("Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.AllocateTemplate", "Datastore.Audit", "Permissions.Modify"),
		"nodes":   privs("Sys.Audit", "Sys.Console", "Sys.Modify", "Sys.PowerMgmt", "Sys.Syslog", "Sys.AccessNetwork", "Permissions.Modify"),
		"dc":      privs("Sys.Audit", "Sys.Modify", "SDN.Allocate", "SDN.Audit"),
		"access":  privs("Group.Allocate", "User.Modify", "Permissions.Modify"),
	}
}

func discardLogger() *log.Logger { return log.New(io.Discard, "", 0) }
