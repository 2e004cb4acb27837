package proxmox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// IsCloudInitKey reads the table: its rows, and an indexed row for every
// index.
func TestIsCloudInitKey(t *testing.T) {
	cases := map[string]struct {
		reason string
		key    string
		want   bool
	}{
		"Row":        {reason: "ciuser is a row.", key: "ciuser", want: true},
		"WriteOnly":  {reason: "cipassword is a row though never compared.", key: "cipassword", want: true},
		"Indexed":    {reason: "ipconfig7 is the ipconfig[n] row's.", key: "ipconfig7", want: true},
		"Bare":       {reason: "ipconfig without an index is no key of PVE's.", key: "ipconfig", want: false},
		"GuestKey":   {reason: "cores is the guest's own key.", key: "cores", want: false},
		"OtherIndex": {reason: "net0 is indexed but no cloud-init key.", key: "net0", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsCloudInitKey(tc.key); got != tc.want {
				t.Errorf("%s\nIsCloudInitKey(%q) = %v, want %v", tc.reason, tc.key, got, tc.want)
			}
		})
	}
}

// The cloud-init codecs compare as PVE stores the values.
func TestCloudInitSame(t *testing.T) {
	cases := map[string]struct {
		reason     string
		key        string
		want, have string
		same       bool
	}{
		"SSHKeysDecoded":  {reason: "PVE stores sshkeys URL-encoded; the lines compare decoded.", key: "sshkeys", want: "ssh-ed25519%20AAAA%20me%40x", have: "ssh-ed25519 AAAA me@x\n", same: true},
		"SSHKeysDiffer":   {reason: "Another key is a change.", key: "sshkeys", want: "ssh-ed25519%20AAAA", have: "ssh-ed25519%20BBBB", same: false},
		"IPConfigOrder":   {reason: "ipconfigN's options compare as a set.", key: "ipconfig0", want: "ip=dhcp,ip6=auto", have: "ip6=auto,ip=dhcp", same: true},
		"IPConfigChanged": {reason: "Another address is a change.", key: "ipconfig1", want: "ip=dhcp", have: "ip=192.0.2.10/24", same: false},
		"NameserverList":  {reason: "nameserver compares as a set of addresses.", key: "nameserver", want: "192.0.2.53 192.0.2.54", have: "192.0.2.54 192.0.2.53", same: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := QEMUCloudInitFields.Same(tc.key, tc.want, tc.have, true); got != tc.same {
				t.Errorf("%s\nSame(%q, %q, %q) = %v, want %v", tc.reason, tc.key, tc.want, tc.have, got, tc.same)
			}
		})
	}
}

// sshkeys encodes a list of keys as PVE wants it and decodes back to it.
func TestSSHKeysRoundTrip(t *testing.T) {
	keys := []string{"ssh-ed25519 AAAA me@x", "ssh-rsa BB+B you@y"}
	enc, ok := QEMUCloudInitFields.Encode("sshkeys", keys)
	if !ok {
		t.Fatal("Encode left sshkeys unset")
	}
	if want := "ssh-ed25519%20AAAA%20me%40x%0Assh-rsa%20BB%2BB%20you%40y"; enc != want {
		t.Errorf("Encode(sshkeys) = %q, want %q (PVE rejects '+' for a space)", enc, want)
	}
	if diff := cmp.Diff(keys, QEMUCloudInitFields.Decode("sshkeys", enc)); diff != "" {
		t.Errorf("Decode(Encode(sshkeys)): -want, +got:\n%s", diff)
	}
}
