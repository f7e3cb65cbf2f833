package postgres

import (
	"strconv"
	"strings"
	"testing"
)

// The claim's statements live in sql/ as plain text; what the Go code
// assumes of them is checked here: the columns claim.sql returns are the
// ones scanJob reads, in its order, and claim_more.sql probes
// moreProbeTenants tenants.
func TestClaimSQL_Files(t *testing.T) {
	t.Parallel()
	flat := func(s string) string { // without comments, one space between words
		var code strings.Builder
		for line := range strings.Lines(s) {
			line, _, _ = strings.Cut(line, "--")
			code.WriteString(line + " ")
		}
		return strings.Join(strings.Fields(code.String()), " ")
	}
	claim := flat(claimSQL)
	for _, want := range []string{"RETURNING " + jobCols("j.") + " ), tally AS", "SELECT " + jobColumns + " FROM claimed, floors"} {
		if !strings.Contains(claim, want) {
			t.Errorf("claim.sql lacks %q: the columns scanJob reads (jobColumnNames)", want)
		}
	}
	if want := "LIMIT " + strconv.Itoa(moreProbeTenants) + " ) tq"; !strings.Contains(flat(moreSQL), want) {
		t.Errorf("claim_more.sql lacks %q (moreProbeTenants)", want)
	}
	for name, sql := range map[string]string{"claim": claimSQL, "claim_rewake": rewakeSQL, "claim_floor": floorSQL, "claim_more": moreSQL} {
		if strings.Contains(flat(sql), ";") {
			t.Errorf("sql/%s.sql: want one statement, without a ';' (the driver sends it as is)", name)
		}
	}
}
