package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/smcscope/smcscope/probe"
)

// httpBody is what smclab http-serve answers GET /smc with: the bytes a
// test looks for in the HTTP response that smcdump --export-tcp makes of
// the SMC-R connection.
const httpBody = "hello over SMC-R\n"

// httpServe is smclab http-serve: Go's HTTP server on an AF_SMC listener,
// the application whose traffic the lab's capture shows as SMC-R and
// smcdump --export-tcp gives back to Wireshark's HTTP dissector. With
// -once it ends after the first response.
func httpServe(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("http-serve", flag.ContinueOnError)
	port := fs.Int("port", 5080, "`PORT` to listen on")
	once := fs.Bool("once", false, "end after the first response")
	wait := fs.Duration("wait", 120*time.Second, "give up when no request came within `DURATION`")
	tcp := fs.Bool("tcp", false, "TCP instead of AF_SMC (tests)")
	if err := fs.Parse(args); err != nil {
		return usageError(err.Error())
	}
	ln, err := probe.Listen(proto(*tcp), netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(*port)), 16)
	if err != nil {
		return err
	}
	defer ln.Close()
	done := make(chan struct{}, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/smc" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(rw, httpBody)
		select {
		case done <- struct{}{}:
		default:
		}
	})}
	fmt.Fprintf(w, "http-serve: listening on %s (%s)\n", ln.Addr(), proto(*tcp))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if !*once {
		return <-errc
	}
	select {
	case <-done:
		// The response is written; let the client read it and close.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return srv.Shutdown(ctx)
	case err := <-errc:
		return err
	case <-time.After(*wait):
		return errors.New("http-serve: no request")
	}
}

// httpGet is smclab http-get ADDR:PORT PATH: one GET of PATH over an
// AF_SMC connection to ADDR:PORT, printing the status and the body.
func httpGet(args []string, w io.Writer) error {
	tcp := len(args) > 0 && args[0] == "-tcp"
	if tcp {
		args = args[1:]
	}
	if len(args) != 2 || !strings.HasPrefix(args[1], "/") {
		return usageError("http-get: need ADDR:PORT and /PATH")
	}
	ap, err := netip.ParseAddrPort(args[0])
	if err != nil {
		return fmt.Errorf("http-get: %s: want ADDR:PORT", args[0])
	}
	u := url.URL{Scheme: "http", Host: ap.String(), Path: args[1]}
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return probe.Dial(ctx, proto(tcp), ap, 30*time.Second)
		},
	}}
	resp, err := c.Get(u.String())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "http-get: %s %q\n", resp.Status, body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("http-get: %s", resp.Status)
	}
	return nil
}

func proto(tcp bool) probe.Proto {
	if tcp {
		return probe.ProtoTCP
	}
	return probe.ProtoSMC
}
