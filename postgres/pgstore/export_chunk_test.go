package pgstore

// SQL of the chunk and search statements, for EXPLAIN tests.
var (
	ChunkDeleteSQL = chunkDeleteSQL
	ChunkListSQL   = chunkListSQL
	ChunkSearchSQL = chunkSearchSQL
	SearchQuerySQL = searchQuerySQL
	ScopeSQL       = scopeSQL
)
