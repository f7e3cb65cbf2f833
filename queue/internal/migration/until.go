package migration

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"testing/fstest"
)

// Until returns the line as it was at version: its migrations up to
// version and the repeatable files that run after one of them, so that a
// test can build a database of that version, fill it, and migrate it to
// the current one.
func (l Line) Until(version int) (Line, error) {
	files := fstest.MapFS{}
	versionOf := regexp.MustCompile(`^(\d{3})_`)
	err := fs.WalkDir(l.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(l.FS, p)
		if err != nil {
			return err
		}
		var v int
		switch dir := path.Dir(p); {
		case dir == l.Dir:
			m := versionOf.FindStringSubmatch(path.Base(p))
			if m == nil {
				return nil
			}
			v, _ = strconv.Atoi(m[1])
		case l.RepeatableDir != "" && dir == l.RepeatableDir:
			m := afterHeader.FindSubmatch(b)
			if m == nil {
				return fmt.Errorf("repeatable %s: no %q header", p, "-- after: NNN")
			}
			v, _ = strconv.Atoi(string(m[1]))
		}
		if v <= version {
			files[p] = &fstest.MapFile{Data: b}
		}
		return nil
	})
	if err != nil {
		return Line{}, fmt.Errorf("line %s until %03d: %w", l.Name, version, err)
	}
	l.FS = files
	if len(l.Legacy) > version {
		l.Legacy = l.Legacy[:version]
	}
	return l, nil
}
