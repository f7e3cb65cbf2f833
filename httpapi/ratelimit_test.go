package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRateLimit_Upload: a tenant with 2 uploads per hour gets 429 with
// Retry-After on the third; refused uploads give their slot back; another
// tenant is not limited.
func TestRateLimit_Upload(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 2)
		if secs := exhaustRateLimit(t, e, a); secs <= 0 {
			t.Fatalf("Retry-After %d", secs)
		}
		b := e.newTenant(t, "globex", 2)
		e.uploadOK(t, b.key, "tenant B is not limited by A")
	})
}

// TestRateLimit_LastSlotRace: uploads that pass the check before the body
// for the same last slot at once are settled by the commit that takes it:
// exactly the tenant's limit is accepted, the rest get 429 with
// Retry-After, and no refused upload leaves a blob behind.
func TestRateLimit_LastSlotRace(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		const limit, uploaders = 2, 8
		a := e.newTenant(t, "acme", limit)
		var accepted, refused atomic.Int32
		var wg sync.WaitGroup
		for i := range uploaders {
			wg.Go(func() {
				r := e.upload(t, a.key, fmt.Sprint("f", i, ".txt"), []byte(strings.Repeat("x", 200<<10)))
				switch r.status {
				case http.StatusAccepted:
					accepted.Add(1)
				case http.StatusTooManyRequests:
					if r.header.Get("Retry-After") == "" {
						t.Error("429 without Retry-After")
					}
					refused.Add(1)
				default:
					t.Errorf("status %d", r.status)
				}
			})
		}
		wg.Wait()
		if accepted.Load() != limit || refused.Load() != uploaders-limit {
			t.Errorf("%d accepted, %d refused; want %d and %d", accepted.Load(), refused.Load(), limit, uploaders-limit)
		}
		if n := e.blobCount(t); n != limit {
			t.Errorf("%d blobs, want %d", n, limit)
		}
	})
}

// TestRateLimit_WindowReopens: the window reopens when the store's clock
// passes the oldest slot. SQLite only: the test moves the store's clock,
// and PostgreSQL's clock is the database's.
func TestRateLimit_WindowReopens(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	e := newTenantEnvClock(t, now, nil)
	a := e.newTenant(t, "acme", 2)
	secs := exhaustRateLimit(t, e, a)
	offset.Store(int64(time.Duration(secs) * time.Second))
	e.uploadOK(t, a.key, "the next slot opened")
}

// exhaustRateLimit uses up the 2 uploads of tenant a (after two refused
// uploads that give their slot back), checks the 429 of the third and
// returns its Retry-After in seconds.
func exhaustRateLimit(t *testing.T, e *tenantEnv, a apiTenant) int {
	t.Helper()
	e.upload(t, a.key, "empty.txt", nil).want(t, http.StatusBadRequest) // refunded
	e.upload(t, a.key, "x.png", []byte("\x89PNG\r\n\x1a\n")).want(t, http.StatusUnsupportedMediaType)
	e.uploadOK(t, a.key, "one")
	var rl rateLimitView
	e.do(t, http.MethodGet, "/v1/rate-limit", a.key, nil).want(t, http.StatusOK).decode(t, &rl)
	if rl != (rateLimitView{Limit: 2, Remaining: 1, WindowSeconds: 3600}) {
		t.Errorf("rate limit %+v", rl)
	}
	e.uploadOK(t, a.key, "two")
	r := e.upload(t, a.key, "three.txt", []byte("three")).want(t, http.StatusTooManyRequests)
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs <= 0 || secs > 3600 {
		t.Fatalf("Retry-After %q, want 1-3600", r.header.Get("Retry-After"))
	}
	var p struct {
		RetryAfter int `json:"retry_after_seconds"`
		Status     int `json:"status"`
	}
	r.decode(t, &p)
	if p.RetryAfter != secs || p.Status != http.StatusTooManyRequests || r.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("problem %s", r.body)
	}
	e.do(t, http.MethodGet, "/v1/rate-limit", a.key, nil).want(t, http.StatusOK).decode(t, &rl)
	if rl.Remaining != 0 || rl.RetryAfterSeconds <= 0 || rl.RetryAfterSeconds > 3600 {
		t.Errorf("rate limit %+v", rl)
	}
	return secs
}

// rawRequest sends head (a request without its body) on a new connection
// and returns the status line of the first response and whether the server
// then closed the connection (within 2 s) without waiting for the body.
func rawRequest(t *testing.T, base, head string) (status string, closed bool) {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	_, err = br.ReadByte()
	return res.Status, err != nil && !isTimeout(err)
}

// TestUpload_ExpectContinueRefused: a client that asked for 100-continue
// and is refused by its headers gets the refusal, never "100 Continue", and
// sends no body; the server closes the connection at once rather than wait
// for a body that will not come.
func TestUpload_ExpectContinueRefused(t *testing.T) {
	t.Parallel()
	e := newTenantEnv(t, func(c *Config) { c.MaxUploadBytes = 1 << 20 })
	a := e.newTenant(t, "acme", 1)
	e.uploadOK(t, a.key, "uses the only slot")
	head := func(key string, length int) string {
		return fmt.Sprintf("POST /v1/documents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", key, length)
	}
	cases := []struct {
		name, head string
		want       int
		closed     bool
	}{
		{"no key", strings.Replace(head("x", 100), "Authorization: Bearer x\r\n", "", 1), http.StatusUnauthorized, true},
		{"bad key", head("dk_bogus", 100), http.StatusUnauthorized, true},
		{"too large", head(a.key, 2<<20), http.StatusRequestEntityTooLarge, true},
		{"rate limited", head(a.key, 100), http.StatusTooManyRequests, true},
		{"not multipart", strings.Replace(head(a.key, 100), "multipart/form-data; boundary=b", "application/pdf", 1), http.StatusUnsupportedMediaType, true},
	}
	for _, c := range cases {
		status, closed := rawRequest(t, e.url, c.head)
		if !strings.HasPrefix(status, strconv.Itoa(c.want)) || c.closed && !closed {
			t.Errorf("%s: %q (closed %v), want %d (closed %v)", c.name, status, closed, c.want, c.closed)
		}
	}
}

func bufioReader(c net.Conn) *bufio.Reader { return bufio.NewReader(c) }

// TestRateLimit_RetryTakesASlot: retrying a document starts its processing
// again, so it takes a slot of the tenant's upload window as an upload
// does: with the window full the retry is refused with 429 and nothing is
// enqueued; a refused retry (409) takes none.
func TestRateLimit_RetryTakesASlot(t *testing.T) {
	t.Parallel()
	forEachStore(t, nil, func(t *testing.T, e *tenantEnv) {
		a := e.newTenant(t, "acme", 2)
		u := e.uploadOK(t, a.key, "cancel me")
		retry := "/v1/documents/" + u.Document.ID + "/retry"
		e.do(t, http.MethodPost, retry, a.key, nil).want(t, http.StatusConflict) // not failed or cancelled yet
		e.do(t, http.MethodPost, "/v1/jobs/"+u.Job.ID+"/cancel", a.key, nil).want(t, http.StatusOK)
		e.do(t, http.MethodPost, retry, a.key, nil).want(t, http.StatusAccepted)
		var rl rateLimitView
		e.do(t, http.MethodGet, "/v1/rate-limit", a.key, nil).want(t, http.StatusOK).decode(t, &rl)
		if rl.Remaining != 0 {
			t.Fatalf("after an upload and a retry the window has %d of 2 slots left, want 0", rl.Remaining)
		}
		var d DocumentView
		e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK).decode(t, &d)
		e.do(t, http.MethodPost, "/v1/jobs/"+d.JobID+"/cancel", a.key, nil).want(t, http.StatusOK)
		r := e.do(t, http.MethodPost, retry, a.key, nil).want(t, http.StatusTooManyRequests)
		if r.header.Get("Retry-After") == "" {
			t.Error("429 without Retry-After")
		}
		var after DocumentView
		e.do(t, http.MethodGet, "/v1/documents/"+u.Document.ID, a.key, nil).want(t, http.StatusOK).decode(t, &after)
		if after.JobID != d.JobID || after.Status != "cancelled" {
			t.Errorf("document after a refused retry: %+v, want job %s cancelled", after, d.JobID)
		}
	})
}
