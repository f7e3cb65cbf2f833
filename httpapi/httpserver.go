package httpapi

import (
	"log/slog"
	"net/http"
	"time"
)

// Defaults of ServerConfig fields left zero.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// ServerConfig configures NewHTTPServer.
type ServerConfig struct {
	// ReadHeaderTimeout is how long a request's headers may take to
	// arrive. Default DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that sends no next
	// request within it. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// BodyTimeout is how long a request body may take to arrive unless
	// its handler sets a read deadline of its own. Default
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// Logger receives the server's connection errors. Nil: the log
	// package's default logger.
	Logger *slog.Logger
}

// NewHTTPServer returns an http.Server for h with timeouts that suit a
// listener open to clients: headers must arrive within ReadHeaderTimeout,
// idle connections close after IdleTimeout, and every request that
// announces a body gets a read deadline before h runs (guardBodies).
// There is no whole-request read or write timeout, because uploads and
// event streams are long (the upload handler enforces a minimum transfer
// rate itself).
func NewHTTPServer(h http.Handler, cfg ServerConfig) *http.Server {
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	srv := &http.Server{
		Handler:           guardBodies(h, cfg.BodyTimeout),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
	if cfg.Logger != nil {
		srv.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	}
	return srv
}

// guardBodies keeps a request body from holding its connection, whatever
// handler serves it: Go's server reads up to 256 KiB of an unread body
// before it answers, and would wait for it forever. A request whose method
// takes no body is answered at once and its connection closed; others get
// timeout to send their body, a deadline the handler may move (the API's
// routes do: bodyDeadline).
func guardBodies(h http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ContentLength == 0:
		case !takesBody(r.Method):
			closeUnread(w)
		default:
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		h.ServeHTTP(w, r)
	})
}

// takesBody says whether a request of method may carry a body a handler
// reads.
func takesBody(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete, http.MethodOptions, http.MethodTrace:
		return false
	}
	return true
}

// closeUnread makes the server answer without reading the request's body
// and close the connection after the answer.
func closeUnread(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
}
