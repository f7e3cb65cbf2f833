package postgres_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/docketq/docket/queue/driver"
)

// TestQueueCheck_SameAsRegex: the CHECK of docket_jobs.queue that migration
// 018 installed (a regular expression without bounded repetition, for the
// cost of every insert and update) accepts exactly the names the original
// regular expression accepted, and 016's ltrim form, and
// driver.ValidateQueueName, over edge cases and random names. The
// condition is read from the catalog, so the test checks what is installed.
func TestQueueCheck_SameAsRegex(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var def string
	err := f.d.Pool().QueryRow(f.ctx, `SELECT pg_get_constraintdef(oid) FROM pg_constraint
		WHERE conrelid = 'docket_jobs'::regclass AND conname = 'docket_jobs_queue_check'`).Scan(&def)
	if err != nil {
		t.Fatal(err)
	}
	cond, ok := strings.CutPrefix(def, "CHECK ")
	if !ok || strings.Contains(cond, "{") || strings.Contains(cond, "ltrim") {
		t.Fatalf("docket_jobs_queue_check is %q, want migration 018's CHECK: no bounded repetition, no ltrim", def)
	}
	names := []string{
		"", "a", "0", "default", "a_", "a.b-c_d", "_a", ".a", "-a", "A", "aB", "a b", " a", "a ",
		"ab\n", "\na", "é", "aé", "a\u00a0", "ａ", strings.Repeat("a", 62), strings.Repeat("a", 63),
		strings.Repeat("a", 64), strings.Repeat("é", 31), "0" + strings.Repeat("-", 62), "a/b", "a:b",
	}
	const alphabet = "az09_.-AZ /é\t\nÿ"
	r := rand.New(rand.NewPCG(1, 2))
	runes := []rune(alphabet)
	for i := range 3000 {
		valid := i%2 == 0 // half of them drawn from the allowed characters only
		n := r.IntN(70)
		if r.IntN(4) == 0 {
			n = 60 + r.IntN(8) // around the length limit
		}
		var b strings.Builder
		for range n {
			if !valid && r.IntN(3) == 0 {
				b.WriteRune(runes[r.IntN(len(runes))])
			} else {
				b.WriteByte("abcxyz0189_.-"[r.IntN(13)])
			}
		}
		names = append(names, b.String())
	}
	rows, err := f.d.Pool().Query(f.ctx, `SELECT queue, queue ~ '^[a-z0-9][a-z0-9_.-]{0,62}$',
		coalesce(octet_length(queue) BETWEEN 1 AND 63
		         AND ltrim(queue, 'abcdefghijklmnopqrstuvwxyz0123456789_.-') = ''
		         AND ltrim(queue, '_.-') = queue, false),
		coalesce(`+cond+`, false)
		FROM unnest($1::text[]) AS n(queue)`, names)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var accepted, checked int
	for rows.Next() {
		var (
			name                string
			regex, trim, actual bool
		)
		if err := rows.Scan(&name, &regex, &trim, &actual); err != nil {
			t.Fatal(err)
		}
		checked++
		if actual {
			accepted++
		}
		if actual != regex || actual != trim || actual != (driver.ValidateQueueName(name) == nil) {
			t.Errorf("queue %q: check %t, original regular expression %t, 016's check %t, ValidateQueueName %v",
				name, actual, regex, trim, driver.ValidateQueueName(name))
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if checked != len(names) || accepted < 500 || accepted > checked-500 {
		t.Fatalf("checked %d of %d names, %d accepted: want both outcomes well represented", checked, len(names), accepted)
	}
	t.Logf("%d names, %d accepted", checked, accepted)
}
