package queue

import "encoding/json"

// SetResult records the JSON document stored as the job's Result when the
// handler returns nil. The last call wins; nil stores none. Bytes that are
// not a JSON document fail the attempt for good (the handler's nil is then
// an error), rather than reach the store.
func (t *Task) SetResult(result json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.result = result
}

func (t *Task) resultSet() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// AwaitEnd declares that another holder of this attempt's lease may end
// the attempt: a process outside the worker, such as an HTTP endpoint that
// reports its job's completion through an API, writing with the lease
// (Executor.JobFinish). When the store then says the lease is gone, the
// handler's context is still cancelled with ErrLeaseLost, but the loss is
// reported (Hooks.LeaseLost, events) only if the handler returns without
// calling EndedBy: the handler finds out how the attempt ended.
func (t *Task) AwaitEnd() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.awaitEnd = true
}

// EndedBy tells the worker that the attempt was ended through its lease
// by another holder (see AwaitEnd) with outcome and, for a failure, its
// error message: the worker stores nothing more for the attempt and
// reports outcome to hooks and subscribers as if it had stored it. Return
// nil after calling it.
func (t *Task) EndedBy(outcome Outcome, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endedBy, t.endedMessage = outcome, message
}

// holdLossReport reports whether the handler called AwaitEnd, and if so
// records that the loss's report waits for the handler's return
// (lossReportHeld). A loss that came before AwaitEnd was reported at once.
func (t *Task) holdLossReport() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lossHeld = t.awaitEnd
	return t.lossHeld
}

// lossReportHeld reports whether holdLossReport held the loss's report
// back, for the handler's return to make.
func (t *Task) lossReportHeld() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lossHeld
}

// ended returns how the attempt ended without the worker: completed in
// the handler's transaction (CompleteTx) or by another holder of the lease
// (EndedBy). An empty outcome: it did not.
func (t *Task) ended() (Outcome, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.completedInTx {
		return OutcomeCompleted, ""
	}
	return t.endedBy, t.endedMessage
}
