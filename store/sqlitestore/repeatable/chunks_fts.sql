-- after: 006

-- Chunks are inserted and deleted, never updated (ChunkReplace).
DROP TRIGGER IF EXISTS docket_chunks_fts_insert;
CREATE TRIGGER docket_chunks_fts_insert AFTER INSERT ON docket_chunks BEGIN
	INSERT INTO docket_chunks_fts (rowid, text, compounds)
	VALUES (new.id, docket_terms(new.tenant_id, new.text), docket_terms(new.tenant_id, new.compounds));
END;

DROP TRIGGER IF EXISTS docket_chunks_fts_delete;
CREATE TRIGGER docket_chunks_fts_delete AFTER DELETE ON docket_chunks BEGIN
	DELETE FROM docket_chunks_fts WHERE rowid = old.id;
END;

DROP TRIGGER IF EXISTS docket_chunks_fts_update;
CREATE TRIGGER docket_chunks_fts_update AFTER UPDATE OF tenant_id, text, compounds ON docket_chunks BEGIN
	DELETE FROM docket_chunks_fts WHERE rowid = old.id;
	INSERT INTO docket_chunks_fts (rowid, text, compounds)
	VALUES (new.id, docket_terms(new.tenant_id, new.text), docket_terms(new.tenant_id, new.compounds));
END;
