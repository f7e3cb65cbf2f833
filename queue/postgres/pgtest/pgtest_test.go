package pgtest_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/docketq/docket/queue/postgres/pgtest"
)

func TestMain(m *testing.M) {
	pgtest.Main(m, pgtest.Options{
		MaxConnections: 50,
		Template: func(connString string) error {
			ctx := context.Background()
			conn, err := pgx.Connect(ctx, connString)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, "CREATE TABLE marker (n int); INSERT INTO marker VALUES (42)")
			return err
		},
	})
}

func connect(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestNewDatabase_CopiesTemplateAndIsolates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var wg sync.WaitGroup
	names := make([]string, 8)
	for i := range names {
		wg.Go(func() {
			conn := connect(t, pgtest.NewDatabase(t))
			var n int
			if err := conn.QueryRow(ctx, "SELECT n FROM marker").Scan(&n); err != nil || n != 42 {
				t.Errorf("marker = %d, %v; want 42", n, err)
			}
			if _, err := conn.Exec(ctx, fmt.Sprintf("INSERT INTO marker VALUES (%d)", i)); err != nil {
				t.Error(err)
			}
			var count int
			_ = conn.QueryRow(ctx, "SELECT count(*), current_database() FROM marker").Scan(&count, &names[i])
			if count != 2 {
				t.Errorf("database %s has %d rows, want 2 (not isolated)", names[i], count)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("database %s handed out twice", n)
		}
		seen[n] = true
	}
}

func TestNewDatabase_DroppedInCleanup(t *testing.T) {
	t.Parallel()
	var name string
	t.Run("inner", func(t *testing.T) {
		conn := connect(t, pgtest.NewDatabase(t))
		if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	c := pgtest.Default()
	conn := connect(t, c.ConnString("postgres"))
	var exists bool
	err := conn.QueryRow(context.Background(), "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil || exists {
		t.Fatalf("database %s exists after cleanup: %v, %v", name, exists, err)
	}
}

// TestCluster_Lifecycle starts its own durable cluster and restarts it the
// ways chaos tests do.
func TestCluster_Lifecycle(t *testing.T) {
	if os.Getenv(pgtest.EnvDatabaseURL) != "" {
		t.Skip("external server")
	}
	t.Parallel()
	c, err := pgtest.Start(pgtest.Options{Durable: true, MaxConnections: 20, TCP: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := c.SocketDir()
	t.Cleanup(func() { // registered first, so it runs after the database cleanups
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("directory %s left behind: %v", dir, err)
		}
	})
	connString := c.NewDatabase(t)
	ctx := context.Background()
	setting := func(name string) string {
		conn := connect(t, connString)
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	if got := setting("fsync"); got != "on" {
		t.Errorf("fsync = %s, want on", got)
	}
	if got := setting("max_connections"); got != "20" {
		t.Errorf("max_connections = %s, want 20", got)
	}
	if c.TCPAddr() == "" || c.PgCtl() == "" || c.DataDir() == "" {
		t.Errorf("TCPAddr %q PgCtl %q DataDir %q", c.TCPAddr(), c.PgCtl(), c.DataDir())
	}
	pid := c.PID()
	if err := c.Restart("fast"); err != nil {
		t.Fatal(err)
	}
	if c.PID() == pid || c.PID() == 0 {
		t.Errorf("PID %d after restart, was %d", c.PID(), pid)
	}
	if err := c.StopServer("immediate"); err != nil {
		t.Fatal(err)
	}
	if c.PID() != 0 {
		t.Errorf("PID %d after stop", c.PID())
	}
	if err := c.StartServer(); err != nil {
		t.Fatal(err)
	}
	tcp := connect(t, fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable&connect_timeout=5", c.TCPAddr()))
	if err := tcp.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestNonDurableDefaults(t *testing.T) {
	if os.Getenv(pgtest.EnvDatabaseURL) != "" {
		t.Skip("external server")
	}
	t.Parallel()
	conn := connect(t, pgtest.NewDatabase(t))
	for name, want := range map[string]string{"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off", "autovacuum": "off", "listen_addresses": "", "max_connections": "50"} {
		var got string
		if err := conn.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}
