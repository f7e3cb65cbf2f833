package pgstore_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sessionScopeRE finds session-level tenant or role settings: SET ROLE,
// SET app.tenant_id (SET LOCAL is transaction-local and allowed), and
// set_config of either with is_local false.
var sessionScopeRE = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bSET\s+(SESSION\s+)?(ROLE\b|"?app\.tenant_id)`),
	regexp.MustCompile(`(?i)set_config\s*\(\s*'(app\.tenant_id|role)'[^)]*,\s*false\s*\)`),
}

// TestRLS_NoSessionLevelScope (39, static): no .go or .sql file of the
// repository sets the tenant or the role for the session, which would
// outlive the transaction on a pooled connection.
func TestRLS_NoSessionLevelScope(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s: %v", root, err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			switch e.Name() {
			case ".git", "node_modules", "vendor", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".sql" {
			return nil
		}
		scanned++
		return scanScope(t, root, path)
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 50 {
		t.Fatalf("scanned only %d files under %s", scanned, root)
	}
}

// scanScope reports each code line of path that matches sessionScopeRE.
// Comment lines are prose, not statements.
func scanScope(t *testing.T, root, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for i, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "//") || strings.HasPrefix(trimmed, "--") || strings.HasPrefix(trimmed, "*") {
			continue
		}
		for _, re := range sessionScopeRE {
			if re.MatchString(line) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: session-level tenant or role setting: %s", rel, i+1, trimmed)
			}
		}
	}
	return nil
}

// TestRLS_SessionScopeRE: the static check finds what it must and lets
// transaction-local settings pass.
func TestRLS_SessionScopeRE(t *testing.T) {
	t.Parallel()
	// The bad lines are split so that this file passes the check.
	tests := []struct {
		line string
		bad  bool
	}{
		{"SET " + "ROLE docket_app", true},
		{"set " + "role docket_app", true},
		{"SET " + "SESSION ROLE docket_app", true},
		{"SET " + "app.tenant_id = 'a'", true},
		{"SET " + "app.tenant_id TO 'a'", true},
		{"SELECT set_config('app.tenant_id', $1, " + "false)", true},
		{"SELECT set_config('role', 'docket_app', " + "false)", true},
		{`SELECT set_config('app.tenant_id', $1, true)`, false},
		{`SELECT set_config('role', 'docket_app', true)`, false},
		{`SET LOCAL ROLE docket_app`, false},
		{`SET LOCAL app.tenant_id = 'a'`, false},
		{`RESET ROLE`, false},
		{`UPDATE docket_jobs SET state = 'pending'`, false},
	}
	for _, tt := range tests {
		bad := false
		for _, re := range sessionScopeRE {
			bad = bad || re.MatchString(tt.line)
		}
		if bad != tt.bad {
			t.Errorf("%q: flagged %v, want %v", tt.line, bad, tt.bad)
		}
	}
}
