package sqlitestore

import (
	"database/sql/driver"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	sqlite3 "modernc.org/sqlite"
)

// Every word in the full-text index is its tenant's own: each run of word
// characters (compoundWord) of a chunk's text and compounds is indexed
// behind its tenant's prefix (tenantPrefix), and a search's phrases are
// written the same way (ftsMatch). A search then reads the doclists of
// its tenant's words only, both to match and for the BM25 weight of each
// phrase (FTS5 counts a phrase's rows over the whole index): its cost is
// that of its tenant's chunks, whatever other tenants store. The join on
// tenant_id in the search stays the wall between tenants; the prefix only
// keeps others' rows out of what the index reads.
//
// The prefix is digits, which the porter stemmer counts as consonants and
// never removes, and the tokenizer neither folds nor splits: a word stems
// as it would alone (but for words under 3 bytes, which the stemmer
// leaves alone, and words that reach its 64-byte limit with the prefix).

// tenantPrefixLen is the length of a tenant's prefix in digits. A fixed
// length keeps prefix and word apart ("12" + "3x" is not "123" + "x").
const tenantPrefixLen = 16

// tenantPrefix is the tenant's prefix: its id's FNV-1a hash in decimal,
// tenantPrefixLen digits. Two tenants with the same prefix share their
// words' doclists, which costs time, never isolation.
func tenantPrefix(tenant string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(tenant))
	var b [tenantPrefixLen]byte
	for i, n := len(b)-1, h.Sum64(); i >= 0; i, n = i-1, n/10 {
		b[i] = byte('0' + n%10)
	}
	return string(b[:])
}

// tenantTerms returns text with the tenant's prefix before each run of
// word characters: what the full-text index holds of the text.
func tenantTerms(tenant, text string) string {
	prefix := tenantPrefix(tenant)
	var b strings.Builder
	b.Grow(len(text) + len(text)/4)
	inWord := false
	for _, r := range text {
		w := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r >= utf8.RuneSelf && compoundWord(r)
		if w && !inWord {
			b.WriteString(prefix)
		}
		inWord = w
		b.WriteRune(r)
	}
	return b.String()
}

// termsFunc is the SQL function docket_terms(tenant_id, text)
// (tenantTerms), with which the full-text index's triggers index a chunk
// (migrations/006_search_tenant.sql). Every new connection has it
// (modernc.org/sqlite registers it with the driver).
func termsFunc(_ *sqlite3.FunctionContext, args []driver.Value) (driver.Value, error) {
	tenant, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("docket_terms: tenant %T is not text", args[0])
	}
	switch v := args[1].(type) {
	case string:
		return tenantTerms(tenant, v), nil
	case []byte:
		return tenantTerms(tenant, string(v)), nil
	case nil:
		return "", nil
	default:
		return nil, fmt.Errorf("docket_terms: %T is not text", v)
	}
}

func init() {
	sqlite3.MustRegisterDeterministicScalarFunction("docket_terms", 2, termsFunc)
}
