-- Enqueue a Docket job whenever the application inserts an invoice.
--
-- The job is enqueued in the same transaction as the row: if the insert
-- rolls back, so does the job, and a committed invoice always has its job.
-- Apply after `docket migrate` (it needs docket_enqueue, migration 002):
--
--     psql "$DATABASE_URL" -f examples/sql/enqueue_on_insert.sql
--
-- A worker with a handler for the kind "invoice.render" then runs one job
-- per invoice, FIFO within each customer (the tenant), at most the tenant's
-- limit at once, round-robin across customers. The unique key makes the
-- trigger safe to fire again for the same invoice (an UPDATE that re-inserts,
-- a replayed migration): the second call returns the existing job.

CREATE TABLE IF NOT EXISTS invoices (
    id          bigserial PRIMARY KEY,
    customer_id text      NOT NULL,
    amount      numeric   NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    job_id      bigint    -- the Docket job that renders it
);

CREATE OR REPLACE FUNCTION invoices_enqueue_render() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.job_id := docket_enqueue(
        queue        => 'default',
        kind         => 'invoice.render',
        tenant_id    => NEW.customer_id,
        args         => jsonb_build_object('invoice_id', NEW.id, 'amount', NEW.amount),
        max_attempts => 5,
        unique_key   => 'invoice-' || NEW.id
    );
    RETURN NEW;
END
$$;

DROP TRIGGER IF EXISTS invoices_enqueue_render ON invoices;
CREATE TRIGGER invoices_enqueue_render
    BEFORE INSERT ON invoices
    FOR EACH ROW EXECUTE FUNCTION invoices_enqueue_render();
