package migration

import (
	"strings"
	"testing"
	"testing/fstest"
)

func repLine(files map[string]string) Line {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body)}
	}
	return Line{Name: "engine", FS: fsys, Dir: "migrations", RepeatableDir: "repeatable"}
}

func TestLine_Repeatables(t *testing.T) {
	t.Parallel()
	l := repLine(map[string]string{
		"migrations/001_a.sql": "CREATE TABLE a (x int);",
		"migrations/002_b.sql": "CREATE TABLE b (x int);",
		"repeatable/f.sql":     "-- after: 002\nCREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;",
		"repeatable/g.sql":     "-- after: 001\nCREATE OR REPLACE VIEW g AS SELECT * FROM a;",
	})
	reps, err := l.Repeatables()
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Name != "g" || reps[0].After != 1 || reps[1].Name != "f" || reps[1].After != 2 {
		t.Fatalf("repeatables %+v, want g after 001, then f after 002", reps)
	}
	if reps[0].Checksum == reps[1].Checksum || len(reps[0].Checksum) != 64 {
		t.Errorf("checksums %q, %q", reps[0].Checksum, reps[1].Checksum)
	}
	for name, body := range map[string]string{
		"no header":       "CREATE VIEW v AS SELECT 1;",
		"beyond the line": "-- after: 003\nCREATE VIEW v AS SELECT 1;",
	} {
		bad := repLine(map[string]string{"migrations/001_a.sql": "", "migrations/002_b.sql": "", "repeatable/v.sql": body})
		if _, err := bad.Repeatables(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Plan runs each migration not applied, each repeatable file whose text
// changed right after the migration it needs (or first, when that one is
// applied already), and nothing else.
func TestPlan(t *testing.T) {
	t.Parallel()
	migs := []Migration{{Version: 1, Name: "a"}, {Version: 2, Name: "b"}, {Version: 3, Name: "c"}}
	reps := []Repeatable{{Name: "early", After: 0, Checksum: "e"}, {Name: "f", After: 1, Checksum: "f2"}, {Name: "g", After: 3, Checksum: "g"}}
	names := func(steps []Step) string {
		var out []string
		for _, s := range steps {
			if s.Migration != nil {
				out = append(out, s.Migration.Name)
			} else {
				out = append(out, "r:"+s.Repeatable.Name)
			}
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name      string
		applied   map[int]bool
		checksums map[string]string
		want      string
	}{
		{"fresh", nil, nil, "r:early a r:f b c r:g"},
		{"up to date", map[int]bool{1: true, 2: true, 3: true}, map[string]string{"early": "e", "f": "f2", "g": "g"}, ""},
		{"one file changed", map[int]bool{1: true, 2: true, 3: true}, map[string]string{"early": "e", "f": "f1", "g": "g"}, "r:f"},
		{"behind, a file changed", map[int]bool{1: true}, map[string]string{"early": "e", "f": "f1", "g": "g0"}, "r:f b c r:g"},
		{"behind, nothing changed", map[int]bool{1: true, 2: true}, map[string]string{"early": "e", "f": "f2", "g": "g"}, "c"},
	} {
		if got := names(Plan(migs, tc.applied, reps, tc.checksums)); got != tc.want {
			t.Errorf("%s: plan %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestLine_CheckDefinitions(t *testing.T) {
	t.Parallel()
	good := repLine(map[string]string{
		"migrations/001_a.sql": "-- function f: defined in repeatable/f.sql\nCREATE TABLE a (x int);\nDROP FUNCTION IF EXISTS old();",
		"repeatable/f.sql":     "-- after: 001\n-- CREATE FUNCTION in prose is no definition\nCREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;\nCREATE OR REPLACE TRIGGER f AFTER INSERT ON a FOR EACH ROW EXECUTE FUNCTION f();",
	})
	if err := good.CheckDefinitions(); err != nil {
		t.Errorf("good line: %v", err)
	}
	for name, files := range map[string]map[string]string{
		"function in a migration": {"migrations/001_a.sql": "CREATE TABLE a (x int);\n  create or replace function f() returns int language sql as $$ select 1 $$;"},
		"view in a migration":     {"migrations/001_a.sql": "CREATE VIEW v AS SELECT 1;"},
		"trigger in a migration":  {"migrations/001_a.sql": "CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; END;"},
		"defined twice": {"migrations/001_a.sql": "", "repeatable/f.sql": "-- after: 001\nCREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$;",
			"repeatable/g.sql": "-- after: 001\nCREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 2 $$;"},
	} {
		if err := repLine(files).CheckDefinitions(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
