package main

import (
	"path/filepath"
	"testing"
)

// TestDatabaseLocationRedactsPasswords: the database location serve and
// stdio log never shows a password.
func TestDatabaseLocationRedactsPasswords(t *testing.T) {
	for db, want := range map[string]string{
		"postgres://nexus:s3cret@db.example.com:5432/nexus?sslmode=require": "postgres://nexus:xxxxx@db.example.com:5432/nexus?sslmode=require",
		"postgresql://db.example.com/nexus?password=s3cret&sslmode=disable": "postgresql://db.example.com/nexus?password=xxxxx&sslmode=disable",
		"postgres://%zz:s3cret@h/db":                                        "postgres://(a URL that does not parse)",
		"sqlite:/var/lib/nexus/n.db":                                        "/var/lib/nexus/n.db",
		"/var/lib/nexus/n.db":                                               "/var/lib/nexus/n.db",
	} {
		c := common{db: db}
		if got := c.databaseLocation(); got != want {
			t.Errorf("%s: %s, want %s", db, got, want)
		}
	}
	c := common{dataDir: "/data"}
	if got := c.databaseLocation(); got != filepath.Join("/data", "nexus.db") {
		t.Errorf("data dir: %s", got)
	}
}
