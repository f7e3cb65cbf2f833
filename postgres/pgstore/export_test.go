package pgstore

import "github.com/docketq/docket/postgres"

// DocsLine is the document store's migration line, for checks of its files.
func DocsLine() postgres.MigrationLine { return docsLine }
