package driver

import (
	"encoding/json"
	"fmt"
)

// MaxPartialResultBytes caps a job's partial result (Task.ProgressPartial):
// it is written with the job's progress, a few times a second at most, and
// travels in every event and read of the job, so it is meant to be small.
const MaxPartialResultBytes = 16 << 10

// ValidatePartialResult returns an error wrapping ErrInvalid unless raw is
// a JSON document of at most MaxPartialResultBytes. Drivers check it in
// JobProgress; Task.ProgressPartial checks it before anything is written.
func ValidatePartialResult(raw json.RawMessage) error {
	if len(raw) > MaxPartialResultBytes {
		return fmt.Errorf("%w: partial result of %d bytes, over the %d-byte limit (MaxPartialResultBytes)",
			ErrInvalid, len(raw), MaxPartialResultBytes)
	}
	if !json.Valid(raw) {
		return fmt.Errorf("%w: partial result is not valid JSON", ErrInvalid)
	}
	return nil
}
