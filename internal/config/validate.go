package config

// Checks of names and values.

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"sync"
)

// Names of toolboxes and servers.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`) })

// BuiltinToolbox is the name of Nexus's own toolbox (its local servers),
// reserved: a configured toolbox cannot take it. It equals
// registry.BuiltinToolbox.
const BuiltinToolbox = "nexus"

// checkName checks a toolbox or server name. Together with the registry's
// rules for tool names, the rules make every flat name toolbox__server__tool
// name exactly one tool: a name holds no "__" and neither starts nor ends
// with "_", so the first "__" of a flat name ends the toolbox and the next
// one the server.
func (l *loader) checkName(f field, p, what string) bool {
	switch {
	case strings.Contains(f.name, "__"):
		l.fail(f.key, p, "%s name %q contains \"__\": Nexus names flat tools toolbox__server__tool, so \"__\" inside a toolbox or server name would make tool names ambiguous", what, f.name)
		return false
	case !nameRE().MatchString(f.name):
		l.fail(f.key, p, "%s name %q is not valid: use 1 to 63 letters, digits, '_', '.' or '-', starting with a letter or digit", what, f.name)
		return false
	case strings.HasSuffix(f.name, "_"):
		l.fail(f.key, p, "%s name %q ends with \"_\": Nexus names flat tools toolbox__server__tool, and a name ending with \"_\" would make tool names ambiguous "+
			"(server \"b_\" with tool \"c\" and server \"b\" with tool \"_c\" would both be a__b___c)", what, f.name)
		return false
	case what == "toolbox" && f.name == BuiltinToolbox:
		l.fail(f.key, p, "toolbox name %q is reserved: it is the built-in toolbox of Nexus's own servers (substrate, vkb); choose another name", f.name)
		return false
	}
	return true
}

// The checks below return why a value is not usable, or "". None repeats
// the value: it may come from the environment and be a secret.

// checkNoNUL rejects a value with a NUL byte.
func checkNoNUL(v string) string {
	if strings.ContainsRune(v, 0) {
		return "contains a NUL byte"
	}
	return ""
}

// checkEnvName checks the name of an environment variable of env.
func checkEnvName(k string) string {
	if k == "" || strings.ContainsAny(k, "=\x00") {
		return fmt.Sprintf("%q is not a valid environment variable name", k)
	}
	return ""
}

// checkHeaderName checks an HTTP header name (a token).
func checkHeaderName(k string) string {
	if k == "" {
		return "a header name is empty"
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c > 0x7e || c <= ' ' || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return fmt.Sprintf("%q is not a valid HTTP header name", k)
		}
	}
	return ""
}

// checkHeaderValue checks an HTTP header value.
func checkHeaderValue(v string) string {
	if strings.ContainsAny(v, "\r\n\x00") {
		return "an HTTP header value cannot contain a line break or NUL byte"
	}
	return ""
}

// checkFilter checks a tool filter: a name or a glob, perhaps after "!".
func checkFilter(v string) string {
	pat := strings.TrimPrefix(v, "!")
	if pat == "" {
		return "a tool filter is empty: give a tool name or glob (get_*), or !name to exclude"
	}
	if _, err := path.Match(pat, ""); err != nil {
		return fmt.Sprintf("tool filter %q is not a valid glob", v)
	}
	return ""
}

// checkURL returns why u is not usable, or "". It never repeats the URL: it
// may carry a secret from the environment.
func checkURL(u string) string {
	if u == "" {
		return "is empty"
	}
	parsed, err := url.Parse(u)
	if err != nil {
		return "is not a valid URL"
	}
	if s := strings.ToLower(parsed.Scheme); s != "http" && s != "https" {
		return "must be an absolute http:// or https:// URL"
	}
	if parsed.Host == "" {
		return "has no host"
	}
	return ""
}
