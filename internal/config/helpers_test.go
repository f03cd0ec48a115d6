package config

// Helpers of the tests: expected configurations, parsing a file, comparing.

import (
	"os"
	"reflect"
	"testing"
)

// envOf returns a lookup function over m.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// testEnv is the environment of the files under testdata/valid.
var testEnv = map[string]string{
	"GITHUB_TOKEN":      "ghp_desktop",
	"HOME":              "/home/alice",
	"SENTRY_TOKEN":      "sntrys_1",
	"GITHUB_DEV_TOKEN":  "ghp_dev",
	"GITHUB_PROD_TOKEN": "ghp_prod",
	"FETCH_TOKEN":       "fetch-secret",
}

// stdio and http build expected servers with the defaults.
func stdio(name, command string, args ...string) *Server {
	return &Server{Name: name, Transport: Stdio, Command: command, Args: args,
		Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
}

func http(name, transport, u string) *Server {
	return &Server{Name: name, Transport: transport, URL: u,
		Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
}

func with(s *Server, f func(*Server)) *Server { f(s); return s }

func toolbox(name, description string, servers ...*Server) *Toolbox {
	tb := &Toolbox{Name: name, Description: description, Servers: map[string]*Server{}}
	for _, s := range servers {
		tb.Servers[s.Name] = s
		tb.Order = append(tb.Order, s.Name)
	}
	return tb
}

func config(path string, toolboxes ...*Toolbox) *Config {
	c := &Config{Path: path, Toolboxes: map[string]*Toolbox{}}
	for _, tb := range toolboxes {
		c.Toolboxes[tb.Name] = tb
		c.Order = append(c.Order, tb.Name)
	}
	return c
}

func parseFile(t *testing.T, path string, env map[string]string) (*Config, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, data, envOf(env))
}

// diffConfig fails with the first difference between got and want.
func diffConfig(t *testing.T, got, want *Config) {
	t.Helper()
	if got.Path != want.Path {
		t.Errorf("Path = %q, want %q", got.Path, want.Path)
	}
	if !reflect.DeepEqual(got.Order, want.Order) {
		t.Errorf("Order = %q, want %q", got.Order, want.Order)
	}
	if len(got.Toolboxes) != len(want.Toolboxes) {
		t.Errorf("%d toolboxes, want %d", len(got.Toolboxes), len(want.Toolboxes))
	}
	for name, wtb := range want.Toolboxes {
		gtb := got.Toolboxes[name]
		if gtb == nil {
			t.Errorf("toolbox %s missing", name)
			continue
		}
		if gtb.Name != wtb.Name || gtb.Description != wtb.Description {
			t.Errorf("toolbox %s: name, description = %q, %q; want %q, %q", name, gtb.Name, gtb.Description, wtb.Name, wtb.Description)
		}
		if !reflect.DeepEqual(gtb.Order, wtb.Order) {
			t.Errorf("toolbox %s: Order = %q, want %q", name, gtb.Order, wtb.Order)
		}
		if len(gtb.Servers) != len(wtb.Servers) {
			t.Errorf("toolbox %s: %d servers, want %d", name, len(gtb.Servers), len(wtb.Servers))
		}
		for sname, ws := range wtb.Servers {
			if gs := gtb.Servers[sname]; !reflect.DeepEqual(gs, ws) {
				t.Errorf("toolbox %s, server %s:\n got %+v\nwant %+v", name, sname, gs, ws)
			}
		}
	}
}
