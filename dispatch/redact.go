package dispatch

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/docketq/docket/queue"
)

// redacted is the stand-in for a secret part of an endpoint's URL in an
// error.
const redacted = "[redacted]"

// minSecretLen is the shortest path segment or query value scrubbed
// from error text on its own; shorter ones ("v1", "1") name nothing
// secret, and scrubbing them would garble the message.
const minSecretLen = 6

// redactor keeps an endpoint's URL out of the errors its jobs store: the
// jobs' tenants read them, and an endpoint's path and query may carry
// secrets (a token, a capability path). Errors name the endpoint by its
// scheme and host only.
type redactor struct {
	origin  string   // scheme://host[:port]
	secrets []string // texts that must not appear, longest first
}

func newRedactor(raw string) (*redactor, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	r := &redactor{origin: u.Scheme + "://" + u.Host}
	add := func(s string) {
		if len(s) >= minSecretLen {
			r.secrets = append(r.secrets, s)
		}
	}
	add(raw)
	add(u.Redacted())
	if u.User != nil {
		add(u.User.String())
		add(u.User.Username())
	}
	for _, p := range []string{u.EscapedPath(), u.Path} {
		if strings.Trim(p, "/") == "" {
			continue
		}
		add(p)
		for seg := range strings.SplitSeq(p, "/") {
			add(seg)
		}
	}
	add(u.RawQuery)
	add(u.Fragment)
	add(u.EscapedFragment())
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
			add(url.QueryEscape(v))
		}
	}
	// Longest first, so a whole URL is replaced before its parts.
	for i := 1; i < len(r.secrets); i++ {
		for j := i; j > 0 && len(r.secrets[j]) > len(r.secrets[j-1]); j-- {
			r.secrets[j], r.secrets[j-1] = r.secrets[j-1], r.secrets[j]
		}
	}
	return r, nil
}

// scrub returns s without the URL's secret parts.
func (r *redactor) scrub(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// transportError is a failed call without the *url.Error's URL: net/http
// names the request's whole URL (path and query) in it.
func (r *redactor) transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return &callError{op: ue.Op + " " + r.origin, err: ue.Err}
	}
	return err
}

// clean returns err, or when its text holds a secret part of the URL an
// error with the same classification (permanent or not, what it wraps)
// whose text does not.
func (r *redactor) clean(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	safe := r.scrub(msg)
	if safe == msg {
		return err
	}
	out := error(&scrubbedError{msg: safe, err: err})
	if perm := (*queue.PermanentError)(nil); errors.As(err, &perm) {
		out = queue.Permanent(out)
	}
	return out
}

// callError is a failed call: the operation, the endpoint's origin and
// the cause.
type callError struct {
	op  string
	err error
}

func (e *callError) Error() string { return fmt.Sprintf("%s: %v", e.op, e.err) }
func (e *callError) Unwrap() error { return e.err }

// scrubbedError is an error whose text was scrubbed of the URL's secret
// parts; errors.Is and errors.As still see what it wraps.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
