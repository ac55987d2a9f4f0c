// Command ferretdb runs an embedded FerretDB 1.24.2 (MongoDB wire protocol on SQLite)
// for TreeRAG's local development and integration tests.
//
// -postgresql-url (FERRETDB_POSTGRESQL_URL) stores in PostgreSQL instead of SQLite.
//
// It exists because `go install .../cmd/ferretdb@v1.24.2` panics at start (missing
// version.txt in the module zip); the embeddable package works.
//
// Flags (each falls back to an environment variable):
//
//	-listen-addr  FERRETDB_LISTEN_ADDR  TCP address, default 127.0.0.1:27017
//	-data-dir     FERRETDB_DATA_DIR     SQLite data directory (created if missing), default ./ferretdb-data
//	-log-level    FERRETDB_LOG_LEVEL    debug|info|warn|error, default error
//
// The default is error because FerretDB logs every error reply it sends (duplicate key,
// ns not found, pymongo's unsupported endSessions, ...) with a full message dump at warn.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func main() {
	addr := flag.String("listen-addr", envOr("FERRETDB_LISTEN_ADDR", "127.0.0.1:27017"), "TCP listen address")
	dataDir := flag.String("data-dir", envOr("FERRETDB_DATA_DIR", "ferretdb-data"), "SQLite data directory")
	logLevel := flag.String("log-level", envOr("FERRETDB_LOG_LEVEL", "error"), "log level: debug, info, warn, error")
	postgresqlURL := flag.String("postgresql-url", envOr("FERRETDB_POSTGRESQL_URL", ""),
		"store in PostgreSQL at this URL (postgres://...) instead of SQLite files under -data-dir")
	flag.Parse()

	var level slog.Level
	if err := level.UnmarshalText([]byte(strings.ToUpper(*logLevel))); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: bad -log-level %q: %v\n", *logLevel, err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: bad -data-dir %q: %v\n", *dataDir, err)
		os.Exit(2)
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: cannot create data dir %s: %v\n", dir, err)
		os.Exit(1)
	}

	config := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *addr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/", // must be file:, absolute, and end in "/"
	}
	if *postgresqlURL != "" {
		config.Handler = "postgresql"
		config.SQLiteURL = ""
		config.PostgreSQLURL = *postgresqlURL
	}
	f, err := ferretdb.New(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Lifecycle lines go straight to stderr, whatever the log level.
	fmt.Fprintf(os.Stderr, "%s FerretDB started addr=%s handler=%s data_dir=%s pid=%d\n",
		time.Now().UTC().Format(time.RFC3339), *addr, config.Handler, dir, os.Getpid())

	if err = f.Run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ferretdb: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "%s FerretDB stopped\n", time.Now().UTC().Format(time.RFC3339))
}
