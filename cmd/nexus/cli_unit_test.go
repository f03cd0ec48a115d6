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

// TestServeAcceptsWellFormedAddrHostsAndOrigins: the checks of
// TestServeRefusesMalformedAddrHostsAndOrigins let the usual forms through.
func TestServeAcceptsWellFormedAddrHostsAndOrigins(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:7777", ":0", "0.0.0.0:65535", "[::1]:7777", "localhost:80", "nexus.example.com:443"} {
		if err := checkAddr(addr); err != nil {
			t.Errorf("--addr %s: %v", addr, err)
		}
	}
	if err := checkHosts([]string{"nexus.example.com", "nexus.example.com:7777", "[::1]", "10.0.0.5", "Nexus.Example.COM."}); err != nil {
		t.Errorf("--allow-hosts: %v", err)
	}
	if err := checkOrigins([]string{"https://app.example/", "https://app.example", "http://localhost:5173", "HTTPS://App.Example.com", "http://[::1]:8080", "https://app.example:443/"}); err != nil {
		t.Errorf("--allow-origins: %v", err)
	}
}
