package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxResponseBytes bounds the body read from the server.
const maxResponseBytes = 256 << 20

// APIError is an error answer from the server. It wraps one of the
// package's sentinel errors, chosen by interpretResponse.
type APIError struct {
	StatusCode int           // HTTP status
	Message    string        // the server's message, or the start of its body
	Type       string        // the error's type, if the server gave one
	Code       string        // the error's code, if the server gave one
	RetryAfter time.Duration // the server's Retry-After (retry-after-ms or Retry-After), if any
	hasRetry   bool          // whether the server gave one (it may be 0)
	err        error
}

func (e *APIError) Error() string {
	msg := fmt.Sprintf("%v: HTTP %d", e.err, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// Unwrap returns the sentinel error that classifies e.
func (e *APIError) Unwrap() error { return e.err }

// post sends body to the endpoint and decodes a successful answer into out,
// retrying rate limits and transient failures.
func (c *OpenAI) post(ctx context.Context, body []byte, out any) error {
	for attempt := 0; ; attempt++ {
		err := c.once(ctx, body, out)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (last error: %w)", context.Cause(ctx), err)
		}
		if !errors.Is(err, ErrRateLimited) && !errors.Is(err, ErrUnavailable) || attempt >= c.cfg.MaxRetries {
			if attempt > 0 {
				return fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return err
		}
		wait := c.retryWait(attempt, err)
		if c.onWait != nil {
			c.onWait(wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last error: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// retryWait is the wait before retry attempt+1: the server's Retry-After if
// it gave one, else exponential backoff with jitter; capped by MaxRetryWait.
func (c *OpenAI) retryWait(attempt int, err error) time.Duration {
	var apiErr *APIError
	if errors.As(err, &apiErr) && apiErr.hasRetry {
		return min(apiErr.RetryAfter, c.cfg.MaxRetryWait)
	}
	d := c.cfg.RetryBackoff << min(attempt, 20)
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	return min(d, c.cfg.MaxRetryWait)
}

// once sends one request.
func (c *OpenAI) once(ctx context.Context, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidRequest, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return fmt.Errorf("%w: read response: %w", ErrUnavailable, err)
	}
	if len(data) > maxResponseBytes {
		return fmt.Errorf("%w: response larger than %d bytes", ErrBadResponse, maxResponseBytes)
	}
	if err := interpretResponse(resp, data, time.Now()); err != nil {
		return err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: decode: %w", ErrBadResponse, err)
	}
	return nil
}

// interpretResponse is the one place that maps an HTTP answer to the
// package's errors: nil for 2xx, otherwise an *APIError.
func interpretResponse(resp *http.Response, body []byte, now time.Time) error {
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return nil
	}
	e := &APIError{StatusCode: code}
	e.RetryAfter, e.hasRetry = retryAfter(resp.Header, now)
	e.Message, e.Type, e.Code = errorDetails(body)
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		e.err = ErrUnauthorized
	case code == http.StatusTooManyRequests && e.Code == "insufficient_quota":
		e.err = ErrQuotaExceeded
	case code == http.StatusTooManyRequests:
		e.err = ErrRateLimited
	case code == http.StatusRequestTimeout || code >= 500:
		e.err = ErrUnavailable
	case code >= 400:
		e.err = ErrInvalidRequest
	default:
		e.err = ErrBadResponse
	}
	return e
}

// errorDetails reads an error body in the shapes servers use:
// {"error": {"message", "type", "code"}} (OpenAI), {"error": "..."}
// (Ollama), {"message", "type", "code"} (vLLM); anything else is quoted.
func errorDetails(body []byte) (message, typ, code string) {
	type details struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	var v struct {
		details
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &v) != nil {
		return snippet(body), "", ""
	}
	d := v.details
	var s string
	if json.Unmarshal(v.Error, &s) == nil {
		d.Message = s
	} else if len(v.Error) > 0 {
		_ = json.Unmarshal(v.Error, &d)
	}
	if d.Message == "" {
		d.Message = snippet(body)
	}
	return d.Message, d.Type, rawString(d.Code)
}

// rawString renders a JSON string or number as text; null as "".
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// snippet is the start of a body, for error messages.
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}

// retryAfter reads how long the server asks to wait: retry-after-ms, or
// Retry-After in seconds or as a date; ok is false if it gave neither.
func retryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(min(secs, 1<<20)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
