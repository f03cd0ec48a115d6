package config

// One server: its keys, its defaults, and its transport, given or inferred
// from command or url.

import (
	"strings"
	"time"
)

// Defaults applied to servers that do not set them.
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 30 * time.Second
	// DefaultMaxIdleConnections is how many idle keep-alive connections to
	// an HTTP server are kept.
	DefaultMaxIdleConnections = 64
)

// server reads one server; nil when it is disabled or invalid.
func (l *loader) server(f field, p string) *Server {
	fields, ok := l.mapping(f.val, p, "a server (a mapping with command or url)")
	if !ok {
		return nil
	}
	by := map[string]field{}
	for _, sf := range fields {
		by[sf.name] = sf
	}
	// A disabled server is skipped before anything else is checked, as
	// desktop clients do: its variables need not be set.
	if df, ok := by["disabled"]; ok {
		if disabled, ok := l.boolean(df, join(p, "disabled")); ok && disabled {
			return nil
		}
	}
	valid := l.checkName(f, p, "server")
	nerr := len(l.errs) + l.dropped

	s := &Server{Name: f.name, Timeout: DefaultTimeout, ConnectTimeout: DefaultConnectTimeout}
	// command and url count as given when present and not null, even if
	// their value has an error (reported on its own).
	var command, rawURL, transport, typ *string
	var commandF, urlF, transportF, typF field
	hasCommand, hasURL := l.given(by, "command"), l.given(by, "url")
	for _, sf := range fields {
		fp := join(p, sf.name)
		switch sf.name {
		case "command":
			if v, ok := l.str(sf, fp); ok {
				command, commandF = &v, sf
			}
		case "url":
			if v, ok := l.str(sf, fp); ok {
				rawURL, urlF = &v, sf
			}
		case "transport":
			if v, ok := l.str(sf, fp); ok {
				transport, transportF = &v, sf
			}
		case "type":
			if v, ok := l.str(sf, fp); ok {
				typ, typF = &v, sf
			}
		case "args":
			s.Args = l.strList(sf, fp, checkNoNUL)
		case "env":
			s.Env = l.strMap(sf, fp, "environment variable", checkEnvName, checkNoNUL)
		case "cwd":
			if v, ok := l.str(sf, fp); ok {
				if v == "" {
					l.fail(l.node(sf.val), fp, "is empty")
				} else if strings.ContainsRune(v, 0) {
					l.fail(l.node(sf.val), fp, "contains a NUL byte")
				}
				s.Cwd = v
			}
		case "headers":
			s.Headers = l.strMap(sf, fp, "header", checkHeaderName, checkHeaderValue)
		case "toolFilters":
			s.ToolFilters = l.strList(sf, fp, checkFilter)
		case "eager":
			s.Eager, _ = l.boolean(sf, fp)
		case "maxIdleConnections":
			if n, ok := l.count(sf, fp, 1, 10000); ok {
				s.MaxIdleConnections = n
			}
		case "timeout":
			if d, ok := l.duration(sf, fp); ok {
				s.Timeout = d
			}
		case "breakerFailures":
			if n, ok := l.count(sf, fp, 1, 1000); ok {
				s.BreakerFailures = n
			}
		case "breakerCooldown":
			if d, ok := l.duration(sf, fp); ok {
				s.BreakerCooldown = d
			}
		case "retries":
			if n, ok := l.count(sf, fp, 0, 10); ok {
				s.Retries = &n
			}
		case "connectTimeout":
			if d, ok := l.duration(sf, fp); ok {
				s.ConnectTimeout = d
			}
		case "description":
			s.Description, _ = l.str(sf, fp)
		case "disabled", "alwaysAllow", "autoApprove":
			// disabled was read above; the others are desktop-client
			// settings that Nexus ignores.
		default:
			l.unknownKey(sf, p, serverKeys, "")
		}
	}

	// The transport.
	want := ""
	conflict := false
	if transport != nil && typ != nil {
		t1, ok1 := transportOf(*transport)
		t2, ok2 := transportOf(*typ)
		if ok1 && ok2 && t1 != t2 {
			l.fail(l.node(typF.val), join(p, "type"), "says %q but transport says %q: give one", *typ, *transport)
			conflict = true
		}
	}
	for _, t := range []struct {
		v *string
		f field
	}{{transport, transportF}, {typ, typF}} {
		if t.v == nil {
			continue
		}
		kind, ok := transportOf(*t.v)
		if !ok {
			l.fail(l.node(t.f.val), join(p, t.f.name), "unknown transport %q: use stdio, http (or streamable-http, streamableHttp) or sse", *t.v)
			continue
		}
		if want == "" && !conflict {
			want = kind
		}
	}
	switch {
	case hasCommand && hasURL:
		l.fail(l.node(f.val), p, "give either command or url, not both")
	case !hasCommand && !hasURL:
		l.fail(l.node(f.val), p, "give command (to start a stdio server) or url (to reach an HTTP server)")
	case hasCommand:
		s.Transport = Stdio
		if command != nil {
			s.Command = *command
			if *command == "" {
				l.fail(l.node(commandF.val), join(p, "command"), "is empty")
			} else if strings.ContainsRune(*command, 0) {
				l.fail(l.node(commandF.val), join(p, "command"), "contains a NUL byte")
			}
		}
		if want != "" && want != Stdio {
			l.fail(l.node(f.val), p, "transport %s needs a url, and this server gives a command", want)
		}
		if _, ok := by["headers"]; ok && s.Headers != nil {
			l.fail(by["headers"].key, join(p, "headers"), "headers are for HTTP servers (url), and this server gives a command")
		}
	default:
		s.Transport = StreamableHTTP
		if want == SSE {
			s.Transport = SSE
		}
		if want == Stdio {
			l.fail(l.node(f.val), p, "transport stdio needs a command, and this server gives a url")
		}
		if rawURL != nil {
			s.URL = *rawURL
			if reason := checkURL(*rawURL); reason != "" {
				l.fail(l.node(urlF.val), join(p, "url"), "%s", reason)
			}
		}
		for _, k := range []string{"args", "env", "cwd"} {
			if kf, ok := by[k]; ok && !isNull(l.nodeOrNull(kf.val)) {
				l.fail(kf.key, join(p, k), "%s is for stdio servers (command), and this server gives a url", k)
			}
		}
	}
	if !valid || len(l.errs)+l.dropped != nerr {
		return nil
	}
	return s
}

// transportOf returns the transport kind a transport or type value names
// (case, '-' and '_' ignored), and whether it names one.
func transportOf(v string) (string, bool) {
	switch strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(v)) {
	case "stdio":
		return Stdio, true
	case "http", "streamablehttp":
		return StreamableHTTP, true
	case "sse":
		return SSE, true
	}
	return "", false
}
