package httpapi

import (
	"net/http"
	"strconv"
	"time"
)

// adminDuration reads a positive Go duration ("90s", "30m") from the query.
func adminDuration(r *http.Request, name string, def time.Duration) (time.Duration, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errorf(http.StatusBadRequest, "%s %q: want a positive duration such as 90s or 30m", name, s)
	}
	return d, nil
}

// adminInt parses an integer query value within [lo, hi]; empty is def.
func adminInt(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errorf(http.StatusBadRequest, "%s %q: want an integer from %d to %d", name, s, lo, hi)
	}
	return n, nil
}
