// Package migration reads a migration line: the numbered SQL files of one
// schema owner (the engine, or a document store), as the drivers' runners
// apply them and record them in docket_migrations (line, version).
//
// # Lines and the single sequence before them
//
// Until the document stores had lines of their own, each driver had one
// sequence (PostgreSQL 001-015, SQLite 0001-0010) that mixed the engine's
// tables with the documents'. Its files were split, unchanged in effect,
// between the two lines; [Line.Legacy] names, for each migration of a
// line, the version of the old sequence it came from. A database migrated
// by the old sequence (recorded under line "legacy") is mapped onto each
// line the first time that line migrates: every migration whose old
// version was applied is recorded as applied, and nothing runs again.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// LegacyLine is the line under which the versions of the single sequence
// that came before the lines are kept.
const LegacyLine = "legacy"

// Line is a sequence of migrations of its own.
type Line struct {
	// Name is the line's name in docket_migrations.line ("engine",
	// "docs").
	Name string
	// FS holds the line's files, NNN_name.sql, numbered from 001 without
	// gaps.
	FS fs.FS
	// Dir is the directory of FS that holds them ("migrations").
	Dir string
	// RepeatableDir is the directory of FS that holds the line's
	// repeatable set (see Repeatable), "" for a line without one.
	RepeatableDir string
	// Legacy[i] is the version of the single sequence from which migration
	// i+1 came, 0 for one added after it; nil for a line that never was in
	// it. Non-decreasing up to the first 0.
	Legacy []int
}

// Migration is one file of a line.
type Migration struct {
	Version int
	Name    string // without number and extension
	SQL     string
	Legacy  int // the version of the single sequence it came from; 0: none
}

// Migrations returns the line's migrations in order. It fails on a file
// not named NNN_name.sql, a gap in the numbers, or a Legacy of the wrong
// length.
func (l Line) Migrations() ([]Migration, error) {
	paths, err := fs.Glob(l.FS, path.Join(l.Dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	migs := make([]Migration, 0, len(paths))
	for _, p := range paths {
		base := strings.TrimSuffix(path.Base(p), ".sql")
		num, name, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || len(num) != 3 || name == "" {
			return nil, fmt.Errorf("migration %s of line %s: want NNN_name.sql", p, l.Name)
		}
		b, err := fs.ReadFile(l.FS, p)
		if err != nil {
			return nil, err
		}
		migs = append(migs, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].Version < migs[j].Version })
	for i := range migs {
		if migs[i].Version != i+1 {
			return nil, fmt.Errorf("line %s: migration %d where %d was due", l.Name, migs[i].Version, i+1)
		}
	}
	if l.Legacy != nil {
		if len(l.Legacy) != len(migs) {
			return nil, fmt.Errorf("line %s: %d legacy versions for %d migrations", l.Name, len(l.Legacy), len(migs))
		}
		for i := range migs {
			migs[i].Legacy = l.Legacy[i]
		}
	}
	return migs, nil
}

// FromLegacy returns the migrations of migs that a database migrated by the
// single sequence up to version legacy has applied already: a prefix of
// migs.
func FromLegacy(migs []Migration, legacy int) []Migration {
	n := 0
	for n < len(migs) && migs[n].Legacy != 0 && migs[n].Legacy <= legacy {
		n++
	}
	return migs[:n]
}
