package storetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/docketq/docket"
	"github.com/docketq/docket/internal/storepair"
	"github.com/docketq/docket/queue/sqlite"
)

// TestRunDocs_SelfCheck shows that the suite can fail: each check runs
// against a real SQLite store, where it must pass, and against the same
// store behind a wrapper with one deliberate bug, where it must fail.
func TestRunDocs_SelfCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		bug    string
		checks []string
	}{
		{"list ignores status", []string{"DocumentList/StatusFilter"}},
		{"search leaks tenants", []string{"Isolation/ChunkSearch"}},
		{"get leaks tenants", []string{"Isolation/DocumentGet", "Isolation/DocumentInsert"}},
		{"commit on error", []string{"InTenant/RollsBackOnError", "CompleteInTx/Rollback"}},
		{"peek takes", []string{"RateLimit/PeekDoesNotTake"}},
		{"take always allowed", []string{"RateLimit/TakeUntilRefused", "RateLimit/Concurrent", "Isolation/RateLimit"}},
		{"idempotency duplicates", []string{"Idempotency/Duplicate"}},
		{"chunks unordered", []string{"Chunk/ReplaceList"}},
		{"vectors lossy", []string{"ChunkSearch/VectorsBitExact"}},
		{"status ignores job", []string{"DocumentStatus/PendingProcessingCompleted", "DocumentStatus/Failed"}},
		{"recorded status wins", []string{"DocumentStatus/JobOverridesRecorded"}},
		{"update drops weight", []string{"Tenant/Weight"}},
	} {
		for _, name := range c.checks {
			t.Run(c.bug+"/"+name, func(t *testing.T) {
				t.Parallel()
				check := findDocCheck(name)
				if check == nil {
					t.Fatalf("no check %s", name)
				}
				if msgs := runRecorded(t, check, nil); len(msgs) != 0 {
					t.Fatalf("%s fails on the real store: %s", name, strings.Join(msgs, "; "))
				}
				if msgs := runRecorded(t, check, brokenBy(c.bug)); len(msgs) == 0 {
					t.Fatalf("%s passes on a store where %s", name, c.bug)
				} else {
					t.Logf("%s on a store where %s: %s", name, c.bug, msgs[0])
				}
			})
		}
	}
}

// runRecorded runs check on a fresh SQLite store, wrapped by wrap when it
// is not nil, and returns the failures it recorded.
func runRecorded(t *testing.T, check func(*docFixture), wrap func(docket.Store) docket.Store) []string {
	t.Helper()
	dRaw, err := sqlite.Open(t.Context(), storepair.SQLitePath(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	d := storepair.NewSQLite(dRaw)
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var store docket.Store = d
	if wrap != nil {
		store = wrap(d)
	}
	rec := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(newDocFixture(rec, store, d))
	}()
	<-done
	return rec.failures()
}

// recorder is a testing.TB that records failures instead of reporting
// them; FailNow ends the check's goroutine, as it does for a real test.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, msg)
}

func (r *recorder) failures() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.msgs)
}

func (r *recorder) Helper()                           {}
func (r *recorder) Error(args ...any)                 { r.record(fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }
func (r *recorder) Fail()                             { r.record("Fail") }
func (r *recorder) Failed() bool                      { return len(r.failures()) > 0 }
func (r *recorder) FailNow()                          { r.record("FailNow"); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Error(args...); runtime.Goexit() }
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) SkipNow()                          { r.record("SkipNow"); runtime.Goexit() }
func (r *recorder) Skip(args ...any)                  { r.record("Skip: " + fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) Skipf(format string, args ...any) {
	r.record("Skip: " + fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// brokenStore is a real store with one of several deliberate bugs.
type brokenStore struct {
	docket.Store
	bug      string
	recorded sync.Map // document id -> the status DocumentUpdate recorded
}

func brokenBy(bug string) func(docket.Store) docket.Store {
	return func(s docket.Store) docket.Store { return &brokenStore{Store: s, bug: bug} }
}

func (s *brokenStore) InTenant(ctx context.Context, tenant string, fn func(docket.Tx) error) error {
	if s.bug == "commit on error" {
		var fnErr error
		err := s.Store.InTenant(ctx, tenant, func(tx docket.Tx) error {
			fnErr = fn(&brokenTx{Tx: tx, s: s})
			return nil
		})
		return errors.Join(err, fnErr)
	}
	return s.Store.InTenant(ctx, tenant, func(tx docket.Tx) error { return fn(&brokenTx{Tx: tx, s: s}) })
}

// TenantUpdate, with "update drops weight", writes the rest of the update
// but not the weight: the tenant keeps its plan's.
func (s *brokenStore) TenantUpdate(ctx context.Context, p *docket.TenantUpdateParams) (*docket.Tenant, error) {
	if s.bug == "update drops weight" && p.Weight != nil {
		q := *p
		q.Weight = nil
		if q == (docket.TenantUpdateParams{ID: p.ID}) {
			return s.TenantGet(ctx, p.ID)
		}
		return s.Store.TenantUpdate(ctx, &q)
	}
	return s.Store.TenantUpdate(ctx, p)
}

func (s *brokenStore) ReadTenant(ctx context.Context, tenant string, fn func(docket.Tx) error) error {
	return s.Store.ReadTenant(ctx, tenant, func(tx docket.Tx) error { return fn(&brokenTx{Tx: tx, s: s}) })
}

// otherTenants calls fn in a read transaction of every other tenant.
func (s *brokenStore) otherTenants(ctx context.Context, tenant string, fn func(docket.Tx) error) error {
	ts, err := s.TenantList(ctx, nil)
	if err != nil {
		return err
	}
	for _, tn := range ts {
		if tn.ID != tenant {
			if err := s.Store.ReadTenant(ctx, tn.ID, fn); err != nil {
				return err
			}
		}
	}
	return nil
}
