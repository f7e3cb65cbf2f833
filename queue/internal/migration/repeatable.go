package migration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Repeatable is a file of a line's repeatable set: the one current
// definition of some functions, triggers or views (with their privileges),
// run again whenever its text changes. Versioned migrations hold tables,
// indexes and data changes, and never define code; a reviewer diffs one
// file to see how a function changed.
//
// A repeatable file opens with a header line "-- after: NNN": the version
// of its line whose schema it needs. It runs after that migration and
// before the next (on a new database, or one being brought up from before
// NNN), or, when only its text changed, before any migration the run
// applies. Raise NNN when a new definition needs a newer migration.
type Repeatable struct {
	Name     string // file name without ".sql"
	SQL      string
	After    int    // the line's version it needs applied first; 0: none
	Checksum string // hex SHA-256 of SQL: a change of it runs the file again
}

var afterHeader = regexp.MustCompile(`\A--\s*after:\s*(\d{3})\s*\n`)

// Repeatables returns the line's repeatable set (none without
// RepeatableDir), ordered by After and name. It fails on a file without
// its "-- after: NNN" header or naming a version the line does not have.
func (l Line) Repeatables() ([]Repeatable, error) {
	if l.RepeatableDir == "" {
		return nil, nil
	}
	paths, err := fs.Glob(l.FS, path.Join(l.RepeatableDir, "*.sql"))
	if err != nil {
		return nil, err
	}
	migs, err := l.Migrations()
	if err != nil {
		return nil, err
	}
	reps := make([]Repeatable, 0, len(paths))
	for _, p := range paths {
		b, err := fs.ReadFile(l.FS, p)
		if err != nil {
			return nil, err
		}
		m := afterHeader.FindSubmatch(b)
		if m == nil {
			return nil, fmt.Errorf("repeatable %s of line %s: want a first line \"-- after: NNN\"", p, l.Name)
		}
		after, _ := strconv.Atoi(string(m[1]))
		if after > len(migs) {
			return nil, fmt.Errorf("repeatable %s of line %s: after %03d, but the line ends at %03d", p, l.Name, after, len(migs))
		}
		sum := sha256.Sum256(b)
		reps = append(reps, Repeatable{
			Name: strings.TrimSuffix(path.Base(p), ".sql"), SQL: string(b), After: after,
			Checksum: hex.EncodeToString(sum[:]),
		})
	}
	slices.SortStableFunc(reps, func(a, b Repeatable) int { return a.After - b.After })
	return reps, nil
}

// Step is one thing a migration run does: apply a migration or (re)apply a
// repeatable file. Exactly one of the two is set.
type Step struct {
	Migration  *Migration
	Repeatable *Repeatable
}

// Plan orders a run: the migrations not in applied, each followed by the
// repeatable files that need it, and first the files whose text changed
// (their checksum is not the one in applied Checksums) that need only what
// is applied already. A file runs at most once per run, and only when its
// checksum differs from the one recorded.
func Plan(migs []Migration, applied map[int]bool, reps []Repeatable, checksums map[string]string) []Step {
	var steps []Step
	done := make(map[string]bool, len(reps))
	reapply := func(upTo int) {
		for i := range reps {
			r := &reps[i]
			if r.After <= upTo && !done[r.Name] && checksums[r.Name] != r.Checksum {
				done[r.Name] = true
				steps = append(steps, Step{Repeatable: r})
			}
		}
	}
	current := 0
	for current < len(migs) && applied[migs[current].Version] {
		current++
	}
	reapply(current)
	for i := range migs {
		if applied[migs[i].Version] {
			continue
		}
		steps = append(steps, Step{Migration: &migs[i]})
		reapply(migs[i].Version)
	}
	return steps
}

// definition matches a statement that creates a function, procedure,
// trigger or view; its last group is the object's name.
var definition = regexp.MustCompile(`(?im)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?(?:CONSTRAINT\s+)?` +
	`(FUNCTION|PROCEDURE|TRIGGER|VIEW|MATERIALIZED\s+VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?([\w.]+)`)

// CheckDefinitions reports a line whose code is not in one place: a
// versioned migration that creates a function, procedure, trigger or view,
// or an object created by two repeatable files.
func (l Line) CheckDefinitions() error {
	migs, err := l.Migrations()
	if err != nil {
		return err
	}
	var problems []string
	for _, m := range migs {
		for _, d := range definition.FindAllStringSubmatch(stripComments(m.SQL), -1) {
			problems = append(problems, fmt.Sprintf("migration %03d_%s creates %s %s: define it in %s/ instead",
				m.Version, m.Name, strings.ToLower(d[1]), d[2], l.RepeatableDir))
		}
	}
	reps, err := l.Repeatables()
	if err != nil {
		return err
	}
	definedIn := map[string]string{}
	for _, r := range reps {
		for _, d := range definition.FindAllStringSubmatch(stripComments(r.SQL), -1) {
			key := strings.ToLower(d[1] + " " + d[2])
			if other, ok := definedIn[key]; ok && other != r.Name {
				problems = append(problems, fmt.Sprintf("%s %s is created in both %s and %s", strings.ToLower(d[1]), d[2], other, r.Name))
			}
			definedIn[key] = r.Name
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("line %s:\n  %s", l.Name, strings.Join(problems, "\n  "))
	}
	return nil
}

var lineComment = regexp.MustCompile(`--[^\n]*`)

// stripComments drops SQL line comments, so that prose about a function
// is not taken for its definition.
func stripComments(sql string) string { return lineComment.ReplaceAllString(sql, "") }
