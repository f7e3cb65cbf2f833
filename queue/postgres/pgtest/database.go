package pgtest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// NewDatabase creates a fresh database, a copy of the template, and returns
// its connection string. The database is dropped (with its connections) in
// t.Cleanup.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	return c.newDatabase(t, c.template)
}

// NewEmptyDatabase creates an empty database (a copy of template0, without
// what the Template hook made) and returns its connection string. The
// database is dropped in t.Cleanup.
func (c *Cluster) NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return c.newDatabase(t, "template0")
}

func (c *Cluster) newDatabase(t testing.TB, template string) string {
	t.Helper()
	name := c.prefix + "t_" + strconv.FormatInt(c.n.Add(1), 10)
	err := c.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+quote(name)+" TEMPLATE "+quote(template))
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := c.dropDatabase(name); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return c.ConnString(name)
}

// createTemplate creates the template database, runs the Template hook on
// it and then closes it to connections, so that copies never find it busy.
func (c *Cluster) createTemplate() error {
	err := c.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+quote(c.template))
		return err
	})
	if err != nil {
		return fmt.Errorf("pgtest: create template database: %w", err)
	}
	if c.opts.Template != nil {
		start := time.Now()
		if err := c.opts.Template(c.ConnString(c.template)); err != nil {
			return fmt.Errorf("pgtest: template hook: %w", err)
		}
		c.opts.Logf("pgtest: template hook took %v", time.Since(start))
	}
	err = c.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "ALTER DATABASE "+quote(c.template)+" WITH ALLOW_CONNECTIONS false")
		return err
	})
	if err != nil {
		return fmt.Errorf("pgtest: close template database: %w", err)
	}
	return nil
}

func (c *Cluster) dropDatabase(name string) error {
	err := c.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+quote(name)+" WITH (FORCE)")
		return err
	})
	if err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// admin runs fn on a new connection to the maintenance database.
func (c *Cluster) admin(fn func(context.Context, *pgx.Conn) error) error {
	ctx, cancel := withTimeout(c.opts.Timeout)
	defer cancel()
	db := "postgres"
	if c.srv == nil {
		db = "" // the external URL's own database
	}
	connString := c.external
	if db != "" {
		connString = c.ConnString(db)
	}
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return fn(ctx, conn)
}

func quote(ident string) string { return pgx.Identifier{ident}.Sanitize() }
