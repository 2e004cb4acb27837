package pvesim

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fuzz targets for the framework's property-string parser and request decoder. Plain
// `go test` runs the seed corpus; `go test -fuzz FuzzPropertyString ./internal/pvesim/`
// explores further.

var fuzzFormats = []*PropFormat{qemuNetFormat, scsiFormat, ipconfigFormat, agentFormat, memoryFormat,
	lxcNetFormat, lxcRootfsFormat, lxcMountFormat, lxcFeaturesFormat, startupFormat}

func FuzzPropertyString(f *testing.F) {
	for _, seed := range []string{
		"virtio=BC:24:11:2A:3B:4C,bridge=vmbr0,firewall=1",
		"local-lvm:vm-100-disk-0,size=32G,discard=on",
		"ip=10.0.0.5/24,gw=10.0.0.1",
		"ip=dhcp,ip6=auto",
		"name=eth0,bridge=vmbr0,hwaddr=BC:24:11:00:64:00,ip=dhcp,type=veth",
		"local-lvm:8,mountoptions=noatime;nodev,acl=1",
		"volume=local:100/vm-100-disk-0.raw,mp=/data,backup=0",
		`file="quoted,value",size=1G`,
		`"unterminated`,
		"=,==,,,=",
		"e1000=aa:bb:cc:dd:ee:ff,model=virtio",
		"1,freeze-fs-on-backup=1,fstrim_cloned_disks=0",
		"current=2048",
		"order=1,up=30,down=60",
		"nesting=1,keyctl=1,mount=nfs;cifs",
		"\x00,\xff=\xfe",
		`a\"b="c\"d"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, pf := range fuzzFormats {
			m, err := parsePropertyString(pf, s)
			if err != nil {
				continue
			}
			out := formatPropertyString(pf.DefaultKey, m)
			if plainValues(m) {
				again, err := parsePropertyString(pf, out)
				if err != nil {
					t.Fatalf("re-parse of %q (from %q) failed: %v", out, s, err)
				}
				if len(again) != len(m) {
					t.Fatalf("round trip of %q lost keys: %v vs %v", s, m, again)
				}
			}
		}
		vol, opts := driveVolume(s)
		_ = driveValue(vol, opts)
		_, _, _ = splitIndexed(s)
		_, _ = parseSize(s)
		_ = normalizeNet(s, 100, 0)
		_ = normalizeLXCNet(s, 100, 0)
	})
}

// plainValues reports whether a parsed map re-renders unambiguously (no separators or
// quotes in values, no empty values).
func plainValues(m map[string]string) bool {
	for k, v := range m {
		if v == "" || strings.ContainsAny(v, `,="\`) || strings.ContainsAny(k, `,="\`) {
			return false
		}
	}
	return true
}

func FuzzDecodeParams(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "vmid=100", []byte("net0=virtio%3DBC%3A24%3A11%3A2A%3A3B%3A4C%2Cbridge%3Dvmbr0&memory=2048"))
	f.Add("application/json", "", []byte(`{"vmid":100,"memory":"2048","onboot":true,"scsi0":"local-lvm:32,discard=on"}`))
	f.Add("application/json; charset=utf-8", "node=pve", []byte(`{"tags":null,"cores":1e3,"x":[1,2],"y":{"a":1}}`))
	f.Add("application/json", "", []byte(`{"a":"\u0000\ud800","b":-0.0}`))
	f.Add("application/json", "", []byte(`[1,2,3]`))
	f.Add("application/json", "", []byte(`{"a":1}{"b":2}`))
	f.Add("text/plain", "a=%zz", []byte("b=1&b=2&c"))
	f.Add("", ";;;&&&=", []byte("%%%"))
	f.Add("multipart/form-data; boundary=x", "", []byte("--x\r\n\r\n"))
	f.Add("application/x-www-form-urlencoded", "", []byte("sshkeys=ssh-rsa%20AAAA%20me%40host&ipconfig0=ip%3D10.0.0.5%2F24%2Cgw%3D10.0.0.1"))
	specs := []*paramSet{compileParams(append(qemuConfigParams(), pNode(), pVMID())), compileParams(lxcCreateParams())}
	f.Fuzz(func(t *testing.T, contentType, query string, body []byte) {
		params, err := decodeParams(contentType, query, body)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				t.Fatalf("decoder error is not a PVE error: %T %v", err, err)
			}
			return
		}
		if query == "" && strings.HasPrefix(contentType, "application/json") && params["onboot"] != "" && !utf8.ValidString(params["onboot"]) {
			t.Fatalf("JSON value not valid UTF-8: %q", params["onboot"])
		}
		for _, ps := range specs {
			norm, errs := ps.validate(params)
			if errs == nil && len(norm) != len(params) {
				t.Fatalf("validate dropped parameters: %v -> %v", params, norm)
			}
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"32G", "512M", "1T", "4096K", "1.5G", "-1", "1e400", "1e19G", "NaN", "Inf", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := parseSize(s); ok && n < 0 {
			t.Fatalf("parseSize(%q) = %d: a size is never negative", s, n)
		}
	})
}

// A worker's error is always one line: the task log's last line and the exit status.
func FuzzWorkerErrorLine(f *testing.F) {
	f.Add("unable to create VM 100 - volume x does not exist\n", "ide2", "bad\nvalue", 400)
	f.Add("a\nb\n\n", "", "", 500)
	f.Fuzz(func(t *testing.T, msg, param, paramMsg string, status int) {
		var err error = errInternal("%s", msg)
		if param != "" {
			err = &apiError{Status: status, Message: msg, Errors: map[string]string{param: paramMsg}}
		}
		line := workerErrorLine(dieWith("unable to create VM 100 -", err))
		if strings.ContainsAny(line, "\n") || !strings.HasPrefix(line, "unable to create VM 100 - ") {
			t.Fatalf("worker error %q is not one line with its prefix", line)
		}
	})
}

// The reason-phrase rewrite never breaks a response head: a rewritten head keeps its
// status code and loses the internal header line.
func FuzzReasonPhrase(f *testing.F) {
	f.Add("HTTP/1.1 500 Internal Server Error\r\nA: b\r\n" + reasonHeader + ": VM is locked (clone)\r\n\r\n{}")
	f.Add("HTTP/1.1 200 OK\r\n\r\n")
	f.Add("HTTP/1.1 5\r\n" + reasonHeader + ": x\r\n\r\n")
	f.Fuzz(func(t *testing.T, p string) {
		out, ok := withReasonPhrase([]byte(p))
		if !ok {
			return
		}
		line := "\r\n" + reasonHeader + ": "
		if string(out[:12]) != p[:12] || strings.Count(string(out), line) != strings.Count(p, line)-1 {
			t.Fatalf("rewrite of %q gave %q", p, out)
		}
	})
}
