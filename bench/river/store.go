package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// database is one scenario's fresh, migrated database.
type database struct {
	pool       *pgxpool.Pool
	connString string
	version    string
	close      func() error
}

// openDatabase creates database river_bench_<random> on the server
// connString names, migrates it and connects a pool to it.
func openDatabase(ctx context.Context, connString string) (*database, error) {
	name := "river_bench_" + randomHex(6)
	var version string
	err := admin(ctx, connString, func(conn *pgx.Conn) error {
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
			return err
		}
		_, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create scratch database (the user needs CREATEDB): %w", err)
	}
	drop := func() error {
		return admin(context.WithoutCancel(ctx), connString, func(conn *pgx.Conn) error {
			_, err := conn.Exec(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			return err
		})
	}
	dbConn, err := withDatabase(connString, name)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	pool, err := pgxpool.New(ctx, dbConn)
	if err != nil {
		return nil, errors.Join(err, drop())
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err == nil {
		_, err = migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		pool.Close()
		return nil, errors.Join(fmt.Errorf("migrate: %w", err), drop())
	}
	return &database{
		pool: pool, connString: dbConn, version: strings.Fields(version + " ?")[0],
		close: func() error { pool.Close(); return drop() },
	}, nil
}

func admin(ctx context.Context, connString string, fn func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return fn(conn)
}

func withDatabase(connString, dbname string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("parse database url: %w", err)
		}
		u.Path, u.RawPath = "/"+dbname, ""
		return u.String(), nil
	}
	return connString + " dbname=" + dbname, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// result is a scenario's figures in order, encoded as docket bench encodes
// them.
type result struct {
	scenario string
	figures  []field
	settings []field
}

type field struct {
	key   string
	value any
}

func (r *result) add(k string, v any) { r.figures = append(r.figures, field{k, v}) }
func (r *result) set(k string, v any) { r.settings = append(r.settings, field{k, v}) }

func (r *result) writeJSON(w io.Writer) error {
	var b bytes.Buffer
	b.WriteString(`{"scenario":` + strconv.Quote(r.scenario))
	for _, f := range r.figures {
		writeField(&b, f)
	}
	b.WriteString(`,"settings":{`)
	for i, f := range r.settings {
		if i == 0 {
			b.WriteString(strconv.Quote(f.key) + ":" + encode(f.value))
			continue
		}
		writeField(&b, f)
	}
	b.WriteString("}}\n")
	_, err := w.Write(b.Bytes())
	return err
}

func writeField(b *bytes.Buffer, f field) {
	b.WriteString("," + strconv.Quote(f.key) + ":" + encode(f.value))
}

func encode(v any) string {
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "null"
		}
		v = math.Round(f*1000) / 1000
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

func (r *result) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "river %s\t\n", r.scenario)
	for _, f := range r.figures {
		fmt.Fprintf(tw, "  %s\t%s\n", f.key, encode(f.value))
	}
	settings := make([]string, len(r.settings))
	for i, s := range r.settings {
		settings[i] = s.key + "=" + fmt.Sprint(s.value)
	}
	fmt.Fprintf(tw, "  settings\t%s\n\n", strings.Join(settings, " "))
	return tw.Flush()
}
