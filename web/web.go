// Package web is Docket's dashboard: one static page, embedded in the
// binary, that talks to the JSON API with the tenant's key. It uploads
// documents, shows every job's stage, percent and queue position live (from
// GET /v1/events, read with fetch so the key travels in a header, never in
// a URL), lists documents with their fields and searches them.
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
