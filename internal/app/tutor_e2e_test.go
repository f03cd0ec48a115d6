package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/app"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestTutorToolsOverMCP calls every tn_* tool with an MCP SDK client on the
// flat surface, on both stores, against the demo data a new database gets.
func TestTutorToolsOverMCP(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			cfg := app.Config{DataDir: t.TempDir(), Demo: true}
			if dialect == "postgres" {
				cfg.DBURL = storetest.PostgresURL(t)
			}
			a, err := app.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(a.Close)
			ct, st := mcp.NewInMemoryTransports()
			ctx := context.Background()
			if _, err := a.Surfaces.Flat.Connect(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })

			called := map[string]bool{}
			call := func(tool string, args map[string]any, wantErr bool) map[string]any {
				t.Helper()
				called[tool] = true
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				var out map[string]any
				if err := json.Unmarshal([]byte(text), &out); err != nil {
					t.Fatalf("%s: not JSON: %s", tool, text)
				}
				if res.IsError != wantErr {
					t.Fatalf("%s %v: isError %v: %s", tool, args, res.IsError, text)
				}
				if wantErr && (out["code"] == nil || out["requestId"] == nil) {
					t.Fatalf("%s: not an ADR-012 ErrorResponse: %s", tool, text)
				}
				return out
			}

			// Sessions.
			sid := call("tn_session_start", map[string]any{}, false)["sessionId"].(string)
			call("tn_session_ask", map[string]any{"sessionId": sid, "message": "Does CPSC 1050 transfer?"}, true)
			call("tn_session_ask", map[string]any{"sessionId": sid, "message": "a draft", "draft": true}, false)
			call("tn_session_history", map[string]any{"sessionId": sid}, false)
			call("tn_session_resume", map[string]any{"sessionId": sid}, false)
			call("tn_session_export", map[string]any{"sessionId": sid}, false)
			if ss := call("tn_session_sync_status", map[string]any{"sessionId": sid}, false); ss["pendingCount"] != 1.0 {
				t.Fatalf("sync status: %v", ss)
			}
			call("tn_session_cancel_pending", map[string]any{"sessionId": sid}, false)
			call("tn_session_end", map[string]any{"sessionId": sid}, false)

			// Courses, on the demo catalogue.
			if s := call("tn_course_search", map[string]any{"query": "programming", "institution": "Langara College"}, false); s["totalCount"].(float64) < 1 {
				t.Fatalf("search: %v", s)
			}
			const course = "LANG:cpsc 1050"
			for _, tool := range []string{"tn_course_get", "tn_course_prereqs", "tn_course_requisites", "tn_course_outline", "tn_course_instructor",
				"tn_course_schedule", "tn_course_similar", "tn_course_equivalent_elsewhere", "tn_course_materials", "tn_course_grades"} {
				call(tool, map[string]any{"course": course}, false)
			}
			if eq := call("tn_course_equivalent_elsewhere", map[string]any{"course": course}, false); !strings.Contains(fmt.Sprint(eq["source"]), "Nexus demo data") {
				t.Fatalf("equivalents of demo rules credited to %v", eq["source"])
			}
			call("tn_course_get", map[string]any{"course": "langara:NOPE 1000"}, true)
			call("tn_course_institutions", map[string]any{}, false)
			call("tn_course_section_list", map[string]any{"term": "Fall 2025"}, false)
			call("tn_course_section_get", map[string]any{"term": "202530", "crn": "30101"}, false)

			// Transfers, on the demo rules.
			r := call("tn_transfer_resolve", map[string]any{"sourceInstitution": "langara", "targetInstitution": "UBC Vancouver",
				"sourceCourses": []string{"CPSC 1160"}}, false)
			// The demo rules are not BC Transfer Guide agreements, and the answer says so.
			if len(r["partialMatches"].([]any)) != 1 || !strings.Contains(r["attribution"].(string), "Nexus demo data") ||
				strings.Contains(r["attribution"].(string), "BC Transfer Guide (https") {
				t.Fatalf("resolve CPSC 1160 -> UBCV (needs CPSC 1050 too): %v", r)
			}
			s := call("tn_transfer_search", map[string]any{"course": "langara:CPSC 1050"}, false)
			id := s["items"].([]any)[0].(map[string]any)["ruleId"].(string)
			call("tn_transfer_details", map[string]any{"ruleId": id}, false)

			// Users: the local user (no token on this in-memory transport).
			if q := call("tn_user_quota", map[string]any{}, false); q["user"] != "local" || q["max"] != 500.0 {
				t.Fatalf("quota of the local user: %v", q)
			}
			call("tn_user_subscription", map[string]any{}, false)
			call("tn_user_preferences_set", map[string]any{"targetInstitution": "sfu"}, false)
			if p := call("tn_user_preferences_get", map[string]any{}, false); p["preferences"].(map[string]any)["targetInstitution"] != "sfu" {
				t.Fatalf("preferences: %v", p)
			}
			call("tn_user_preferences_set", map[string]any{"theme": "neon"}, true)
			cr := call("tn_user_byok_add", map[string]any{"provider": "anthropic", "label": "e2e", "apiKey": "sk-ant-e2e-0123456789abcdefXYZ"}, false)
			if l := call("tn_user_byok_list", map[string]any{}, false); l["totalCount"] != 1.0 || strings.Contains(fmt.Sprint(l), "0123456789abcdef") {
				t.Fatalf("byok list: %v", l)
			}
			call("tn_user_byok_delete", map[string]any{"id": cr["id"]}, false)

			for _, tool := range a.Registry.List() {
				if n := tool.ID.Name(); strings.HasPrefix(n, "tn_") && !called[n] {
					t.Errorf("%s was not called", n)
				}
			}
		})
	}
}
