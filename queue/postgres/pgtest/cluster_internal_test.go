package pgtest

import "testing"

func TestWithDatabase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:p@h:5432/db?sslmode=disable", "postgres://u:p@h:5432/t_1?sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/t_1"},
		{"postgres://u@/db?host=/tmp/x", "postgres://u@/t_1?host=/tmp/x"},
		{"postgres://h", "postgres://h/t_1"},
		{"host=/tmp/x user=u dbname=db", "host=/tmp/x user=u dbname=db dbname=t_1"},
	} {
		if got := withDatabase(tc.in, "t_1"); got != tc.want {
			t.Errorf("withDatabase(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
