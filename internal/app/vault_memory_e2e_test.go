package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/store/storetest"
)

// TestMemoryManager: memoryManager's 12 modes and vaultLibrarian's
// searchMemory, through the agents surface (the seed's MCP path, with its
// context block), on both stores: workspaces are Nexus workspaces with a
// root folder in the vault, sessions are conversations (the vkb sees the
// same record), states are snapshots of a session.
func TestMemoryManager(t *testing.T) {
	for _, run := range []struct{ dialect, surface string }{{"sqlite", "agents"}, {"postgres", "agents"}, {"sqlite", "flat"}, {"postgres", "bounded"}} {
		t.Run(run.dialect+"/"+run.surface, func(t *testing.T) {
			var urls []string
			if run.dialect == "postgres" {
				urls = append(urls, storetest.PostgresURL(t))
			}
			a, dir := vaultApp(t, urls...)
			agents := connectClient(t, a.Surfaces.Agents)
			flat := connectClient(t, a.Surfaces.Flat)
			bounded := connectClient(t, a.Surfaces.Bounded)
			ctxOf := func(ws, session string) map[string]any {
				return map[string]any{"sessionId": session, "workspaceId": ws}
			}
			// call calls a mode on the surface under test, with the seed's
			// context block (every surface takes it).
			call := func(agent, mode string, ctx map[string]any, args map[string]any) (map[string]any, bool) {
				t.Helper()
				full := map[string]any{"context": ctx}
				for k, v := range args {
					full[k] = v
				}
				switch run.surface {
				case "flat":
					return callJSON(t, flat, mode, full)
				case "bounded":
					if _, err := bounded.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": []string{agent + "_" + mode}}}); err != nil {
						t.Fatal(err)
					}
					return callJSON(t, bounded, agent+"_"+mode, full)
				}
				full["mode"], full["sessionId"] = mode, ctx["sessionId"]
				return callJSON(t, agents, agent, full)
			}
			must := func(agent, mode string, ctx map[string]any, args map[string]any) map[string]any {
				t.Helper()
				out, isErr := call(agent, mode, ctx, args)
				if isErr || out["success"] != true {
					t.Fatalf("%s %s %v: %v", agent, mode, args, out)
				}
				data, _ := out["data"].(map[string]any)
				return data
			}
			refuse := func(agent, mode string, ctx map[string]any, args map[string]any, says string) {
				t.Helper()
				out, isErr := call(agent, mode, ctx, args)
				if !isErr || out["success"] != false || !strings.Contains(fmt.Sprint(out["error"]), says) {
					t.Fatalf("%s %s %v: %v, want an error saying %q", agent, mode, args, out, says)
				}
			}
			boot := ctxOf("default", "s-20261127090000")
			// The index is ready once a search answers.
			must("vaultLibrarian", "searchContent", boot, map[string]any{"query": "calculus"})

			// Workspaces.
			created := must("memoryManager", "createWorkspace", boot, map[string]any{"name": "Calculus", "rootFolder": "Projects/Calc", "purpose": "Learn calculus",
				"currentGoal": "Finish MATH 100", "workflows": []any{map[string]any{"name": "Review", "when": "weekly", "steps": "Read notes\nDo exercises"}}, "preferences": "Short answers"})
			ws := created["workspaceId"].(string)
			if st, err := os.Stat(filepath.Join(dir, "Projects", "Calc")); err != nil || !st.IsDir() {
				t.Errorf("the root folder was not created: %v", err)
			}
			home := must("memoryManager", "createWorkspace", boot, map[string]any{"name": "Whole vault", "rootFolder": "/", "purpose": "Everything",
				"currentGoal": "Keep it tidy", "workflows": []any{map[string]any{"name": "Tidy", "when": "daily", "steps": "File notes"}}})
			if kf := fmt.Sprint(home["workspace"].(map[string]any)["context"].(map[string]any)["keyFiles"]); kf != "[Home.md]" {
				t.Errorf("key files of the root: %s (Home.md has key: true)", kf)
			}
			// A workspace bound to the read-only vault: its calls use that
			// vault when they name none.
			arch := must("memoryManager", "createWorkspace", boot, map[string]any{"vault": "archive", "name": "Archive", "rootFolder": "/", "purpose": "Old notes",
				"currentGoal": "Keep", "workflows": []any{map[string]any{"name": "Look", "when": "rarely", "steps": "Read"}}})["workspaceId"].(string)
			refuse("contentManager", "appendContent", ctxOf(arch, "s-20261127090002"), map[string]any{"filePath": "Home.md", "content": "x"}, "Vault 'archive' is read-only")
			must("contentManager", "appendContent", ctxOf(arch, "s-20261127090002"), map[string]any{"filePath": "Home.md", "content": "x", "vault": "notes"})
			refuse("memoryManager", "createWorkspace", boot, map[string]any{"name": " ", "rootFolder": "x", "purpose": "p", "currentGoal": "g", "workflows": []any{map[string]any{"name": "a", "when": "b", "steps": "c"}}}, "Validation failed: name")
			if list := must("memoryManager", "listWorkspaces", boot, map[string]any{"sortBy": "name", "order": "asc"})["workspaces"].([]any); len(list) != 3 || list[0].(map[string]any)["name"] != "Archive" || list[1].(map[string]any)["name"] != "Calculus" {
				t.Errorf("listWorkspaces: %v", list)
			}
			up := must("memoryManager", "updateWorkspace", boot, map[string]any{"workspaceId": "calculus", "fieldPath": "context.currentGoal", "newValue": "Finish MATH 101"})
			if up["updated"] != true || up["oldValue"] != "Finish MATH 100" {
				t.Errorf("updateWorkspace: %v", up)
			}
			if again := must("memoryManager", "updateWorkspace", boot, map[string]any{"workspaceId": ws, "fieldPath": "context.currentGoal", "newValue": "Finish MATH 101"}); again["updated"] != false {
				t.Errorf("an update to the same value: %v", again)
			}
			must("memoryManager", "updateWorkspace", boot, map[string]any{"workspaceId": ws, "fieldPath": "projectPlan", "newValue": map[string]any{"weeks": 12}})
			refuse("memoryManager", "updateWorkspace", boot, map[string]any{"workspaceId": ws, "fieldPath": "secrets.key", "newValue": 1}, "Invalid field path")
			refuse("memoryManager", "loadWorkspace", boot, map[string]any{"id": "nowhere"}, "Workspace 'nowhere' not found (searched by both name and ID)")

			// Sessions, in the workspace: the call's context names it.
			// The call's own session (context.sessionId) is a conversation of
			// the workspace too, made when first named.
			sess := must("memoryManager", "createSession", ctxOf(ws, "s-20261127090001"), map[string]any{"name": "Limits", "description": "Chapter 2", "sessionGoal": "Understand limits", "contextDepth": "comprehensive"})
			sid := sess["sessionId"].(string)
			if !strings.Contains(sess["sessionContext"].(map[string]any)["summary"].(string), "Learn calculus") {
				t.Errorf("a comprehensive summary: %v", sess)
			}
			in := ctxOf(ws, sid)
			// The one conversation model: the vkb reads the same record.
			got, isErr := callJSON(t, flat, "session_get", map[string]any{"session_id": sid, "context": map[string]any{"workspaceId": ws}})
			if gs, _ := got["session"].(map[string]any); isErr || gs["title"] != "Limits" || gs["platform"] != "vault" || gs["project_context"] != "Chapter 2" {
				t.Errorf("session_get of a memoryManager session: %v", got)
			}
			if l := must("memoryManager", "listSessions", in, nil); l["total"] != 2.0 {
				t.Errorf("listSessions: %v", l)
			}
			if u := must("memoryManager", "updateSession", in, map[string]any{"name": "Limits and continuity"}); u["name"] != "Limits and continuity" {
				t.Errorf("updateSession: %v", u)
			}
			refuse("memoryManager", "updateSession", in, map[string]any{}, "No updates provided for session")

			// States.
			st := must("memoryManager", "createState", in, map[string]any{"name": "Before the exam", "conversationContext": "We reviewed limits", "activeTask": "Practise epsilon-delta",
				"activeFiles": []any{"Courses/Math/MATH 100.md"}, "nextSteps": []any{"Do 10 exercises"}, "reasoning": "The exam is on Monday", "tags": []any{"exam"}})
			if st["stateId"] == nil || st["capturedContext"] == nil {
				t.Fatalf("createState: %v", st)
			}
			refuse("memoryManager", "createState", in, map[string]any{"name": "x", "conversationContext": "c", "activeTask": "t", "activeFiles": []any{}, "nextSteps": []any{"n"}, "reasoning": "r"}, "activeFiles")
			if l := must("memoryManager", "listStates", in, map[string]any{"tags": []any{"exam"}, "includeContext": true}); l["total"] != 1.0 {
				t.Errorf("listStates: %v", l)
			}
			if l := must("memoryManager", "listStates", in, map[string]any{"tags": []any{"other"}}); l["total"] != 0.0 {
				t.Errorf("listStates of another tag: %v", l)
			}
			ls := must("memoryManager", "loadState", in, map[string]any{"stateId": "before the exam", "continueExistingSession": false})
			if rc := ls["restoredContext"].(map[string]any); rc["activeTask"] != "Practise epsilon-delta" || ls["newSessionId"] == nil {
				t.Errorf("loadState: %v", ls)
			}
			if u := must("memoryManager", "updateState", in, map[string]any{"stateId": st["stateId"], "name": "Exam prep", "addTags": []any{"prep"}, "removeTags": []any{"exam"}}); fmt.Sprint(u["tags"]) != "[prep]" || u["name"] != "Exam prep" {
				t.Errorf("updateState: %v", u)
			}
			refuse("memoryManager", "loadState", in, map[string]any{"stateId": "nope"}, "State 'nope' not found (searched by both name and ID)")
			loaded := must("memoryManager", "loadSession", in, map[string]any{"targetSessionId": "limits and continuity"})
			if loaded["newSessionId"] == nil || fmt.Sprint(loaded["restoredContext"].(map[string]any)["states"]) != "[Exam prep]" {
				t.Errorf("loadSession: %v", loaded)
			}

			// The workspace now: its sessions and states, its files.
			lw := must("memoryManager", "loadWorkspace", in, map[string]any{"id": ws, "limit": 5})["data"].(map[string]any)
			if len(lw["sessions"].([]any)) != 4 || len(lw["states"].([]any)) != 1 || lw["preferences"] != "Short answers" || lw["context"].(map[string]any)["purpose"] != "Learn calculus" {
				t.Errorf("loadWorkspace: %v", lw)
			}

			// searchMemory.
			sm := must("vaultLibrarian", "searchMemory", in, map[string]any{"query": "exam", "memoryTypes": []any{"states"}})
			if sm["total"] != 1.0 {
				t.Errorf("searchMemory of states: %v", sm)
			}
			if sm := must("vaultLibrarian", "searchMemory", in, map[string]any{"query": "calculus", "memoryTypes": []any{"workspaces"}}); sm["total"] != 1.0 {
				t.Errorf("searchMemory of workspaces: %v", sm)
			}
		})
	}
}
