package pvesim

import (
	"bytes"
	"net"
	"net/http"
	"strings"
)

// reasonHeader carries an error's reason phrase from writeError to the connection, which
// moves it into the status line and drops the header: net/http can only send the standard
// phrase ("500 Internal Server Error"), while pveproxy sends the message's first line
// ("500 Configuration file 'nodes/pve/qemu-server/100.conf' does not exist") and clients
// (go-proxmox among them) read it from there.
const reasonHeader = "X-Pvesim-Reason"

// setReason asks for msg's first line as the reason phrase of the response.
func setReason(w http.ResponseWriter, msg string) {
	line, _, _ := strings.Cut(strings.TrimSuffix(msg, "\n"), "\n")
	if line = strings.TrimSpace(line); line != "" {
		w.Header().Set(reasonHeader, line)
	}
}

// reasonListener hands out connections that put reason phrases into status lines.
type reasonListener struct{ net.Listener }

func (l reasonListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &reasonConn{Conn: c}, nil
}

// reasonConn rewrites a response head that carries reasonHeader. net/http flushes each
// response's head (status line and headers, well under its 4 KiB buffer) at the start of
// one Write, after the previous response was flushed whole, so a head never spans writes.
type reasonConn struct{ net.Conn }

func (c *reasonConn) Write(p []byte) (int, error) {
	out, ok := withReasonPhrase(p)
	if !ok {
		return c.Conn.Write(p)
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

var (
	httpVersionPrefix = []byte("HTTP/1.1 ")
	headEnd           = []byte("\r\n\r\n")
	reasonLine        = []byte("\r\n" + reasonHeader + ": ")
)

// withReasonPhrase returns p with the reason header's value as the status line's phrase
// and the header removed; false when p starts no response head carrying it.
func withReasonPhrase(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, httpVersionPrefix) {
		return nil, false
	}
	end := bytes.Index(p, headEnd)
	if end < 0 {
		return nil, false
	}
	at := bytes.Index(p[:end], reasonLine)
	firstEOL := bytes.Index(p, []byte("\r\n"))
	if at < 0 || firstEOL < len(httpVersionPrefix)+3 {
		return nil, false
	}
	valueStart := at + len(reasonLine)
	valueEnd := valueStart + bytes.Index(p[valueStart:], []byte("\r\n"))
	code := p[len(httpVersionPrefix) : len(httpVersionPrefix)+3]
	out := make([]byte, 0, len(p))
	out = append(out, httpVersionPrefix...)
	out = append(out, code...)
	out = append(out, ' ')
	out = append(out, p[valueStart:valueEnd]...)
	out = append(out, p[firstEOL:at]...)
	out = append(out, p[valueEnd:]...)
	return out, true
}
