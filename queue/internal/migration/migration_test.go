package migration

import (
	"strings"
	"testing"
	"testing/fstest"
)

func files(names ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for _, n := range names {
		fsys["migrations/"+n] = &fstest.MapFile{Data: []byte("-- " + n)}
	}
	return fsys
}

func TestLine_Migrations(t *testing.T) {
	l := Line{Name: "engine", FS: files("002_b.sql", "001_a.sql", "003_c_d.sql"), Dir: "migrations", Legacy: []int{1, 3, 15}}
	migs, err := l.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{1, "a", "-- 001_a.sql", 1}, {2, "b", "-- 002_b.sql", 3}, {3, "c_d", "-- 003_c_d.sql", 15}}
	if len(migs) != len(want) {
		t.Fatalf("%d migrations, want %d", len(migs), len(want))
	}
	for i := range want {
		if migs[i] != want[i] {
			t.Errorf("migration %d = %+v, want %+v", i, migs[i], want[i])
		}
	}
}

func TestLine_MigrationsRefuses(t *testing.T) {
	cases := []struct {
		name   string
		fsys   fstest.MapFS
		legacy []int
		want   string
	}{
		{"four digits", files("0001_a.sql"), nil, "want NNN_name.sql"},
		{"no name", files("001_.sql"), nil, "want NNN_name.sql"},
		{"no underscore", files("001.sql"), nil, "want NNN_name.sql"},
		{"gap", files("001_a.sql", "003_c.sql"), nil, "migration 3 where 2 was due"},
		{"twice", files("001_a.sql", "001_b.sql"), nil, "migration 1 where 2 was due"},
		{"legacy length", files("001_a.sql", "002_b.sql"), []int{1}, "1 legacy versions for 2 migrations"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Line{Name: "docs", FS: c.fsys, Dir: "migrations", Legacy: c.legacy}.Migrations()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

// FromLegacy: the prefix of a line that a database of the single sequence
// at a version has applied; a migration born after the sequence (Legacy 0)
// and everything after it is never taken as applied.
func TestFromLegacy(t *testing.T) {
	migs := []Migration{{Version: 1, Legacy: 1}, {Version: 2, Legacy: 3}, {Version: 3, Legacy: 3}, {Version: 4, Legacy: 7}, {Version: 5}}
	for _, c := range []struct{ legacy, want int }{{0, 0}, {1, 1}, {2, 1}, {3, 3}, {6, 3}, {7, 4}, {99, 4}} {
		if got := len(FromLegacy(migs, c.legacy)); got != c.want {
			t.Errorf("FromLegacy(v%d) = %d migrations, want %d", c.legacy, got, c.want)
		}
	}
	if got := FromLegacy(nil, 15); len(got) != 0 {
		t.Errorf("FromLegacy of an empty line = %d", len(got))
	}
}
