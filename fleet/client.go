package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/config"
)

// Client asks a Prometheus server's HTTP API for instant vectors.
type Client struct {
	// URL is the server's base URL ("http://prometheus:9090").
	URL string
	// HTTP is the client to use; nil: one with Timeout.
	HTTP *http.Client
	// Timeout bounds each query (default 5 s): a slow server makes a
	// refresh say so, it does not hang the dashboard.
	Timeout time.Duration
	// Time, when set, is the evaluation time of every query (the API's
	// time parameter); zero: the server's now. Data backfilled at a fixed
	// time is read as of that time.
	Time time.Time
}

// Sample is one series of an instant vector.
type Sample struct {
	Labels Labels
	Value  float64
}

// Query runs an instant query.
func (c *Client) Query(ctx context.Context, expr string) ([]Sample, error) {
	v := url.Values{"query": {expr}}
	if !c.Time.IsZero() {
		v.Set("time", apiTime(c.Time))
	}
	b, resp, err := c.get(ctx, "/api/v1/query", v)
	if err != nil {
		return nil, err
	}
	a, err := decodeAnswer(b)
	if err != nil {
		return nil, notAnswer(resp, b)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("%s: %s", a.ErrorType, a.Error)
	}
	if a.ResultType != "vector" {
		return nil, fmt.Errorf("%q: a %s, not an instant vector", expr, a.ResultType)
	}
	if a.ValueErr != nil {
		return nil, a.ValueErr
	}
	return a.Result, nil
}

// LabelValues asks the server's index for the values of label name on
// the series that match selector within window before the evaluation
// time (the label values API): no sample is read.
func (c *Client) LabelValues(ctx context.Context, name, selector string, window time.Duration) ([]string, error) {
	end := c.Time
	if end.IsZero() {
		end = time.Now()
	}
	v := url.Values{"match[]": {selector}, "start": {apiTime(end.Add(-window))}, "end": {apiTime(end)}}
	b, resp, err := c.get(ctx, "/api/v1/label/"+url.PathEscape(name)+"/values", v)
	if err != nil {
		return nil, err
	}
	var a struct {
		Status    string   `json:"status"`
		Data      []string `json:"data"`
		ErrorType string   `json:"errorType"`
		Error     string   `json:"error"`
	}
	if err := json.Unmarshal(b, &a); err != nil || a.Status == "" {
		return nil, notAnswer(resp, b)
	}
	if a.Status != "success" {
		return nil, fmt.Errorf("%s: %s", a.ErrorType, a.Error)
	}
	return a.Data, nil
}

// get asks the API at path with parameters v, within the client's
// timeout, and returns the body (at most 256 MiB) and the response.
func (c *Client) get(ctx context.Context, path string, v url.Values) ([]byte, *http.Response, error) {
	to := c.Timeout
	if to <= 0 {
		to = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	u := strings.TrimRight(c.URL, "/") + path + "?" + v.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, shortError(err, to)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	return b, resp, err
}

// notAnswer explains a response b that is no API answer.
func notAnswer(resp *http.Response, b []byte) error {
	switch resp.StatusCode {
	case http.StatusOK:
		return fmt.Errorf("HTTP 200, not a Prometheus answer: %.80q", b)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("HTTP %s: the server refuses these credentials (--http.config.file: basic_auth, bearer_token_file)", resp.Status)
	}
	return fmt.Errorf("HTTP %s", resp.Status)
}

// apiTime is t as the API takes it: Unix seconds, to the millisecond.
func apiTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', -1, 64)
}

// shortError is the cause of a failed request without the request's URL,
// which repeats the server's address and the whole URL-encoded query:
// on a status line only the cause fits, and the address is said once by
// the caller.
func shortError(err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %v", timeout)
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Err // "connect: connection refused": the address is the caller's
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// HTTPClient makes the client that smctop reaches a Prometheus server or
// an exporter with, from an http_config file in Prometheus' own format
// (github.com/prometheus/common/config: tls_config with ca_file, cert_file
// and key_file or insecure_skip_verify, basic_auth with password_file,
// bearer_token_file, authorization, proxy_url), as a scrape or remote-read
// client is set up; configFile "" is the default client. User info in
// rawURL (https://user:pass@host) becomes basic auth when the file sets no
// credentials. It returns rawURL without the user info: the form every
// output shows, so that a password is never printed.
func HTTPClient(rawURL, configFile string) (*http.Client, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", err
	}
	cfg := config.DefaultHTTPClientConfig
	if configFile != "" {
		c, _, err := config.LoadHTTPConfigFile(configFile)
		if err != nil {
			return nil, "", fmt.Errorf("--http.config.file %s: %w", configFile, err)
		}
		cfg = *c
	}
	if u.User != nil {
		if cfg.BasicAuth == nil && cfg.Authorization == nil && cfg.BearerToken == "" && cfg.BearerTokenFile == "" {
			pw, _ := u.User.Password()
			cfg.BasicAuth = &config.BasicAuth{Username: u.User.Username(), Password: config.Secret(pw)}
		}
		u.User = nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, "", fmt.Errorf("--http.config.file %s: %w", configFile, err)
	}
	hc, err := config.NewClientFromConfig(cfg, "smctop")
	if err != nil {
		return nil, "", fmt.Errorf("--http.config.file %s: %w", configFile, err)
	}
	return hc, strings.TrimRight(u.String(), "/"), nil
}

// HTTPClientFile makes a client from an http_config file alone, and says
// whether it sets TLS (a CA, a client certificate, a server name or
// insecure_skip_verify): the fleet view's client for the hosts' exporters.
func HTTPClientFile(file string) (*http.Client, bool, error) {
	cfg, _, err := config.LoadHTTPConfigFile(file)
	if err != nil {
		return nil, false, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, false, err
	}
	hc, err := config.NewClientFromConfig(*cfg, "smctop")
	if err != nil {
		return nil, false, err
	}
	t := cfg.TLSConfig
	return hc, t.CAFile != "" || t.CA != "" || t.CertFile != "" || t.Cert != "" || t.ServerName != "" || t.InsecureSkipVerify, nil
}
