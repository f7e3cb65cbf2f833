package pgstore

import "github.com/docketq/docket/queue/postgres"

// DocsLine is the document store's migration line, for checks of its files.
func DocsLine() postgres.MigrationLine { return docsLine }
