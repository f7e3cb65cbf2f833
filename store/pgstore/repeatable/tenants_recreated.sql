-- after: 006

-- A tenant created again with the id of a finished deletion starts clean.
CREATE OR REPLACE FUNCTION docket_tenants_recreated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM docket_tenant_deletions WHERE tenant_id = NEW.id AND finished_at IS NOT NULL;
    RETURN NEW;
END
$$;

CREATE OR REPLACE TRIGGER docket_tenants_recreated AFTER INSERT ON docket_tenants
    FOR EACH ROW EXECUTE FUNCTION docket_tenants_recreated();
