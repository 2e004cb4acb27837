// Package proxmox is the provider's only speaker of the Proxmox VE wire
// format. It wraps go-proxmox v0.10.0 with a transport the provider controls:
//
//   - TLS verified against the system roots plus an optional CA bundle,
//     unless InsecureSkipVerify;
//   - at most MaxConcurrentRequests requests in flight per client (pveproxy
//     has few workers; a slot is held until the response body is closed),
//     each attempt bounded by Timeout and a whole logical request (login,
//     attempts, backoff, replay) by an http.Client timeout of 6*Timeout+10s;
//     HTTPS_PROXY/NO_PROXY from the environment are honoured;
//   - GET retried (3 attempts, short backoff) on network errors and
//     429/502/503/504/595/596; writes are never retried by the transport
//     (go-proxmox's WithRetry is not used: it retries writes too);
//   - password sessions managed here rather than by go-proxmox: see
//     ticketAuth for the renewal behaviour and why a write replayed after a
//     401 is safe;
//   - Retire makes every new request fail with ErrClientRetired, checked in
//     the transport so every go-proxmox call path is covered;
//   - go-proxmox gets a logger that drops everything: at debug level it prints
//     request and response bodies, passwords included.
//   - with Config.Metrics, each attempt on the wire is counted and timed under
//     its route template (RouteTemplate: PVE's path grammar, no name or id),
//     and a task started through the client is timed until a status read
//     first sees it finished.
//
// Cache hands clients out per ProxmoxConnection and retires replaced ones.
package proxmox
