package analyze

import "context"

// checkEvery is how many steps (bytes, runes or words read) a pass takes
// between two looks at its context.
const checkEvery = 1 << 16

// stopper tells the passes when their context is done. A nil stopper never
// stops.
type stopper struct {
	ctx  context.Context
	left int   // steps before the next look
	err  error // the context's error, once seen
}

// newStopper returns a stopper for ctx; a context already done stops the
// passes at their first step.
func newStopper(ctx context.Context) *stopper {
	return &stopper{ctx: ctx, left: checkEvery, err: ctx.Err()}
}

// stop counts a step and reports whether the context is done, looking at it
// every checkEvery steps.
func (s *stopper) stop() bool {
	switch {
	case s == nil:
		return false
	case s.err != nil:
		return true
	}
	if s.left--; s.left > 0 {
		return false
	}
	s.left = checkEvery
	s.err = s.ctx.Err()
	return s.err != nil
}
