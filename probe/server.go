package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"
)

// ServerConfig bounds what one smcping server accepts.
type ServerConfig struct {
	// Addr is the listen address; the zero Addr means 0.0.0.0.
	Addr netip.Addr
	// Port carries SMC (AF_SMC), or plain TCP when TCPOnly is set.
	Port uint16
	// TCPPort carries the plain TCP baseline; 0 disables it.
	TCPPort uint16
	// TCPOnly makes the server a plain TCP peer, not SMC-capable at all, so
	// SMC clients fall back with PEERNOSMC (lab scenario fallback-nosmc).
	TCPOnly bool
	// SMCProto is how the SMC listener is opened (ProtoSMC or ProtoIPPROTO).
	SMCProto Proto
	// MaxMessage is the largest message accepted; larger ones close the connection.
	MaxMessage int
	// MaxConns is the number of connections served at once; more are closed on accept.
	MaxConns int
	// IdleTimeout closes a connection that sends nothing (or does not read
	// our reply) for this long.
	IdleTimeout time.Duration
	// Log receives one line per connection; nil discards.
	Log *slog.Logger
	// Inspector, when set, logs the kernel's mode of each accepted SMC connection.
	Inspector Inspector
}

// Server defaults, also the flag defaults of smcping -s.
const (
	DefaultPort        = 5000
	DefaultMaxMessage  = 1 << 20
	DefaultMaxConns    = 64
	DefaultIdleTimeout = 60 * time.Second
)

// Server is an echo server speaking the smcping protocol (see package doc).
type Server struct {
	cfg   ServerConfig
	lns   []net.Listener
	slots chan struct{}
	wg    sync.WaitGroup
}

// NewServer fills defaults into cfg; call Listen, then Serve.
func NewServer(cfg ServerConfig) *Server {
	if !cfg.Addr.IsValid() {
		cfg.Addr = netip.IPv4Unspecified()
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	cfg.MaxMessage = min(cfg.MaxMessage, MaxMessage)
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxConns)}
}

// Listen opens the listeners, so that a missing AF_SMC or a busy port is
// reported before anything is served.
func (s *Server) Listen() error {
	main := s.cfg.SMCProto
	if s.cfg.TCPOnly {
		main = ProtoTCP
	}
	ln, err := listen(main, netip.AddrPortFrom(s.cfg.Addr, s.cfg.Port), 128, s.cfg.IdleTimeout)
	if err != nil {
		return err
	}
	s.lns = append(s.lns, ln)
	if s.cfg.TCPPort != 0 {
		ln, err := listen(ProtoTCP, netip.AddrPortFrom(s.cfg.Addr, s.cfg.TCPPort), 128, s.cfg.IdleTimeout)
		if err != nil {
			s.Close()
			return fmt.Errorf("TCP baseline listener: %w", err)
		}
		s.lns = append(s.lns, ln)
	}
	return nil
}

// Addrs returns the listening addresses: the main one first, then the TCP baseline.
func (s *Server) Addrs() []netip.AddrPort {
	out := make([]netip.AddrPort, 0, len(s.lns))
	for _, ln := range s.lns {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			out = append(out, a.AddrPort())
		}
	}
	return out
}

// Close closes the listeners; Serve returns once open connections end.
func (s *Server) Close() {
	for _, ln := range s.lns {
		ln.Close()
	}
}

// Serve accepts on every listener until ctx ends, then closes the
// listeners and waits for the connections it serves.
func (s *Server) Serve(ctx context.Context) error {
	if len(s.lns) == 0 {
		return errors.New("serve: no listener (call Listen first)")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, len(s.lns))
	for i, ln := range s.lns {
		p := ProtoTCP
		if i == 0 && !s.cfg.TCPOnly {
			p = s.cfg.SMCProto
		}
		go func() { errc <- s.acceptLoop(ctx, ln, p) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.Close()
	conns := make(chan struct{})
	go func() { s.wg.Wait(); close(conns) }()
	<-conns
	return err
}

func (s *Server) acceptLoop(ctx context.Context, ln net.Listener, p Proto) error {
	for {
		c, err := accept(ln, p)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("accept on %v: %w", ln.Addr(), err)
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.cfg.Log.Warn("connection limit reached, closing", "remote", c.RemoteAddr().String(), "max_conns", s.cfg.MaxConns)
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer func() { <-s.slots }()
			stop := context.AfterFunc(ctx, func() { interrupt(c) })
			defer stop()
			s.logAccept(c, p)
			n, err := s.handle(c)
			c.Close()
			if err != nil && ctx.Err() == nil {
				s.cfg.Log.Warn("connection ended", "remote", c.RemoteAddr().String(), "proto", p.String(), "messages", n, "err", err)
				return
			}
			s.cfg.Log.Info("connection closed", "remote", c.RemoteAddr().String(), "proto", p.String(), "messages", n)
		}()
	}
}

func (s *Server) logAccept(c net.Conn, p Proto) {
	args := []any{"remote", c.RemoteAddr().String(), "local", c.LocalAddr().String(), "proto", p.String()}
	if p.IsSMC() && s.cfg.Inspector != nil {
		pr := Prove(s.cfg.Inspector, socketID(c))
		args = append(args, "mode", pr.String())
		if pr.Token != 0 {
			args = append(args, "token", fmt.Sprintf("%#x", pr.Token))
		}
	}
	s.cfg.Log.Info("connection accepted", args...)
}

// handle echoes messages until EOF. It reads as much as the socket has,
// so a ping costs one read and one write (sockperf's server does the
// same), and allocates only when a message is larger than any before on
// this connection.
func (s *Server) handle(c net.Conn) (int, error) {
	buf := make([]byte, min(64<<10, s.cfg.MaxMessage))
	// On a blocking socket (fdConn) this is a per-call timeout: an idle
	// timeout for the whole connection, set once.
	if err := c.SetDeadline(time.Now().Add(s.cfg.IdleTimeout)); err != nil {
		return 0, err
	}
	have := 0 // bytes of buf holding data not yet handled
	fill := func(need int) error {
		for have < need {
			n, err := c.Read(buf[have:])
			have += n
			if err != nil {
				return err
			}
		}
		return nil
	}
	for n := 0; ; n++ {
		if err := fill(HeaderLen); err != nil {
			if errors.Is(err, io.EOF) && have == 0 {
				return n, nil
			}
			return n, fmt.Errorf("read header: %w", err)
		}
		size, noReply := parseHeader(buf)
		if err := checkSize(size, s.cfg.MaxMessage); err != nil {
			return n, err
		}
		if size > len(buf) {
			buf = append(buf, make([]byte, size-len(buf))...)
		}
		if err := fill(size); err != nil {
			return n, fmt.Errorf("read %d-byte message: %w", size, err)
		}
		if !noReply {
			if _, err := c.Write(buf[:size]); err != nil {
				return n, fmt.Errorf("reply: %w", err)
			}
		}
		have = copy(buf, buf[size:have])
	}
}
