//go:build !unix

package sqlite

import "os"

// lockFile does not lock on systems without flock: the second-process
// check is Unix only.
func lockFile(string) (*os.File, error) { return nil, nil }

func unlockFile(*os.File) error { return nil }
