// Package web is Docket's dashboard: a static page and small ES modules
// (static/app.js, static/js/), embedded in the binary, that talk to the
// JSON API with the tenant's key (kept in sessionStorage, sent in a header,
// never in a URL). Files dropped on it upload with a bar each; every
// document shows its stage, percent, queue position, estimate and early
// results live from one GET /v1/events stream, which resumes with
// Last-Event-ID after a drop or a reload. The cards keep one order, live
// and after a reload: waiting and running documents first, then the ended
// ones, newest upload first within each. A failed document says why and
// marks the stage it failed in, and offers Retry when the API says a retry
// can help; a waiting or running one can be cancelled; an ended one says
// how long its last attempt took. The uploads left in the hour are the
// server's count, read again after each upload and each new job; a 429
// shows the time to the next upload slot; a document of a paused tenant
// says "paused" instead of its position. The operator console (static/admin.html, served
// at /ui/admin.html) reads the admin API with the admin key and follows
// GET /v1/admin/events: queue and database health, tenants and queues
// with pause and resume, stuck and failed jobs with their attempt history,
// requeue and discard; it polls only while that stream is down. The
// browser tests (dashboard_test.go, console_test.go, console_live_test.go)
// drive both in a real Chromium through package webtest.
package web

import (
	"embed"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the dashboard at / and its assets under /ui/.
func Handler() http.Handler {
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		r2 := r.Clone(r.Context())
		switch {
		case r.URL.Path == "/":
			r2.URL.Path = "/static/"
		case len(r.URL.Path) > len("/ui/"):
			r2.URL.Path = "/static/" + r.URL.Path[len("/ui/"):]
		default:
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r2)
	})
}
