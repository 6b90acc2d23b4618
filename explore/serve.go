package explore

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Listener is where the page is served: the listener, the Host names the
// server accepts besides loopback ones (Handler's allowedHosts), the URL
// to print and, for an address reachable from other machines, a warning.
type Listener struct {
	net.Listener
	Allowed []string
	URL     string
	Warning string
}

// Listen opens host:port (port 0: a free one). A host that is not a
// loopback address makes the page readable from other machines: Warning
// says so, and Allowed admits that Host name (any for 0.0.0.0 or ::).
func Listen(host string, port int) (*Listener, error) {
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("explore: port %d is not a port (0..65535)", port)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("explore: listen on %s port %d: %w", host, port, err)
	}
	l := &Listener{Listener: ln}
	port = ln.Addr().(*net.TCPAddr).Port
	ip := net.ParseIP(strings.Trim(host, "[]"))
	shown := host
	switch {
	case ip != nil && ip.IsUnspecified():
		l.Allowed, shown = []string{"*"}, "127.0.0.1"
	case host != "localhost" && (ip == nil || !ip.IsLoopback()):
		l.Allowed = []string{host}
	}
	if l.Allowed != nil {
		l.Warning = fmt.Sprintf("warning: --host %s: anyone who can reach this machine on port %d can read the page, the models' outputs and the data (vomc explore has no authentication); where you can, serve on 127.0.0.1 and use an SSH tunnel (ssh -L %d:127.0.0.1:%d HOST)", host, port, port, port)
	}
	l.URL = fmt.Sprintf("http://%s/", net.JoinHostPort(strings.Trim(shown, "[]"), strconv.Itoa(port)))
	return l, nil
}
