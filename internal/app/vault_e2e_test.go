package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nexus-mcp/nexus/internal/app"
)

// copyVault copies the test vault (internal/vault/testdata/vault) to a
// fresh folder, adds a symbolic link out of it ("Outside", to a folder
// holding secret.md), and returns the folder.
func copyVault(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "vault", "testdata", "vault")
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.md"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dst, "Outside")); err != nil {
		t.Fatal(err)
	}
	return dst
}

// vaultApp is Nexus with the test vault configured (and a read-only copy,
// "archive"), on SQLite or on PostgreSQL with a database URL.
func vaultApp(t *testing.T, dbURL ...string) (*app.App, string) {
	t.Helper()
	dir := copyVault(t)
	conf := filepath.Join(t.TempDir(), "nexus.yaml")
	body := "vaults:\n  notes: {path: " + strconvQuote(dir) + ", description: The test vault}\n  archive: {path: " + strconvQuote(copyVault(t)) + ", readOnly: true}\n"
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := app.Config{DataDir: t.TempDir(), ConfigPath: conf}
	if len(dbURL) > 0 {
		cfg.DBURL = dbURL[0]
	}
	a, err := app.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a, dir
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// modeCaller calls an agent's mode the way a surface takes it.
type modeCaller func(t *testing.T, agent, mode string, args map[string]any) (map[string]any, bool)

func connectClient(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "vault-e2e", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s %v: not JSON: %s", name, args, text)
	}
	return out, res.IsError
}

// surfaceCallers are the three MCP surfaces' ways to call a mode: flat by
// the mode's name, agents by the agent's name with mode (and the seed's
// sessionId and context), bounded by agent_mode after get_tools.
func surfaceCallers(t *testing.T, a *app.App) (map[string]modeCaller, *mcp.ClientSession) {
	flat := connectClient(t, a.Surfaces.Flat)
	agents := connectClient(t, a.Surfaces.Agents)
	bounded := connectClient(t, a.Surfaces.Bounded)
	return map[string]modeCaller{
		"flat": func(t *testing.T, agent, mode string, args map[string]any) (map[string]any, bool) {
			return callJSON(t, flat, mode, args)
		},
		"agents": func(t *testing.T, agent, mode string, args map[string]any) (map[string]any, bool) {
			full := map[string]any{"mode": mode, "sessionId": "s-20261127120000", "context": map[string]any{"sessionId": "s-20261127120000", "workspaceId": "default"}}
			for k, v := range args {
				full[k] = v
			}
			return callJSON(t, agents, agent, full)
		},
		"bounded": func(t *testing.T, agent, mode string, args map[string]any) (map[string]any, bool) {
			if _, err := bounded.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_tools", Arguments: map[string]any{"tools": []string{agent + "_" + mode}}}); err != nil {
				t.Fatal(err)
			}
			return callJSON(t, bounded, agent+"_"+mode, args)
		},
	}, agents
}

// TestVaultAgentsOnEverySurface: every non-Obsidian mode of contentManager
// and vaultManager, called with an SDK client on each MCP surface, does
// what the contract says in the original's result shape; path tricks,
// conflicts and the read-only vault are refused the same way everywhere.
func TestVaultAgentsOnEverySurface(t *testing.T) {
	for surface := range map[string]bool{"flat": true, "agents": true, "bounded": true} {
		t.Run(surface, func(t *testing.T) {
			a, dir := vaultApp(t)
			callers, agents := surfaceCallers(t, a)
			call := callers[surface]
			must := func(agent, mode string, args map[string]any) map[string]any {
				t.Helper()
				out, isErr := call(t, agent, mode, args)
				if isErr || out["success"] != true {
					t.Fatalf("%s %s %v: %v", agent, mode, args, out)
				}
				data, _ := out["data"].(map[string]any)
				return data
			}
			refuse := func(agent, mode string, args map[string]any, code, says string) {
				t.Helper()
				out, isErr := call(t, agent, mode, args)
				if !isErr || out["success"] != false || out["code"] != code || !strings.Contains(out["error"].(string), says) {
					t.Fatalf("%s %s %v: %v (isError %v), want %s saying %q", agent, mode, args, out, isErr, code, says)
				}
			}
			disk := func(p string) string {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
				if err != nil {
					return "<missing>"
				}
				return string(b)
			}

			// A search waits for the first index (a read does not: it has no
			// links until then).
			must("vaultLibrarian", "searchContent", map[string]any{"query": "calculus"})

			// contentManager.
			read := must("contentManager", "readContent", map[string]any{"filePath": "Courses/Math/MATH 100.md", "offset": 8, "limit": 2, "includeLineNumbers": true})
			if read["content"] != "8: # MATH 100: Differential Calculus\n9: " || read["startLine"] != 8.0 {
				t.Errorf("readContent range: %v", read)
			}
			full := must("contentManager", "readContent", map[string]any{"filePath": "/Café notes/Crème brûlée.md"})
			hash := full["hash"].(string)
			if links := full["links"].(map[string]any); len(links["outgoing"].([]any)) != 1 || links["outgoing"].([]any)[0] != "Home.md" || len(links["backlinks"].([]any)) != 1 || links["backlinks"].([]any)[0] != "Home.md" {
				t.Errorf("the links of a note: %v", full["links"])
			}
			math := must("contentManager", "readContent", map[string]any{"filePath": "Courses/Math/MATH 100.md"})["links"].(map[string]any)
			if fmt.Sprint(math["backlinks"]) != "[Courses/Math/MATH 101.md Daily/2026-11-27.md Home.md Transfer rules.md]" || fmt.Sprint(math["outgoing"]) != "[Courses/Math/MATH 101.md]" {
				t.Errorf("MATH 100's links: %v", math)
			}
			must("contentManager", "createContent", map[string]any{"filePath": "New/Idea.md", "content": "---\ntags: [new]\n---\nBody"})
			refuse("contentManager", "createContent", map[string]any{"filePath": "New/Idea.md", "content": "again"}, "CONFLICT", "File already exists: New/Idea.md")
			must("contentManager", "prependContent", map[string]any{"filePath": "New/Idea.md", "content": "First. "})
			if got := disk("New/Idea.md"); got != "---\ntags: [new]\n---\nFirst. Body" {
				t.Errorf("prepend kept the frontmatter first? %q", got)
			}
			app := must("contentManager", "appendContent", map[string]any{"filePath": "New/Idea.md", "content": " Last é."})
			if app["appendedLength"] != 8.0 {
				t.Errorf("appendContent: %v", app)
			}
			if r := must("contentManager", "replaceContent", map[string]any{"filePath": "New/Idea.md", "oldContent": "Body", "newContent": "Middle"}); r["replacements"] != 1.0 {
				t.Errorf("replaceContent: %v", r)
			}
			if r := must("contentManager", "replaceContent", map[string]any{"filePath": "New/Idea.md", "oldContent": "Midle", "newContent": "Centre", "similarityThreshold": 0.7}); r["replacements"] != 1.0 {
				t.Errorf("fuzzy replaceContent: %v", r)
			}
			refuse("contentManager", "replaceContent", map[string]any{"filePath": "New/Idea.md", "oldContent": "Midle", "newContent": "x", "similarityThreshold": 1.0}, "NOT_FOUND", "Content to replace not found in file")
			must("contentManager", "replaceByLine", map[string]any{"filePath": "New/Idea.md", "startLine": 1, "endLine": 3, "newContent": "---\ntags: [renewed]\n---"})
			must("contentManager", "deleteContent", map[string]any{"filePath": "New/Idea.md", "content": "First. "})
			fr := must("contentManager", "findReplaceContent", map[string]any{"filePath": "New/Idea.md", "findText": "centre", "replaceText": "$& ok", "caseSensitive": false})
			if fr["replacements"] != 1.0 || disk("New/Idea.md") != "---\ntags: [renewed]\n---\n$& ok Last é." {
				t.Errorf("findReplaceContent: %v, %q", fr, disk("New/Idea.md"))
			}
			batch := must("contentManager", "batchContent", map[string]any{"operations": []any{
				map[string]any{"type": "create", "params": map[string]any{"filePath": "New/B.md", "content": ""}},
				map[string]any{"type": "append", "params": map[string]any{"filePath": "New/B.md", "content": "b"}},
				map[string]any{"type": "read", "params": map[string]any{"filePath": "New/missing.md"}},
			}})
			results := batch["results"].([]any)
			if len(results) != 3 || results[1].(map[string]any)["success"] != true || results[2].(map[string]any)["success"] != false || disk("New/B.md") != "b" {
				t.Errorf("batchContent: %v", batch)
			}
			refuse("contentManager", "batchContent", map[string]any{"operations": []any{map[string]any{"type": "explode", "params": map[string]any{"filePath": "a.md"}}}}, "BAD_REQUEST", "explode does not equal any of")
			refuse("contentManager", "batchContent", map[string]any{"operations": []any{map[string]any{"type": "replace", "params": map[string]any{"filePath": "a.md", "oldContent": "x"}}}}, "BAD_REQUEST", "Missing 'newContent' property in replace operation at index 0")

			// A conflict: an edit against the hash read before another
			// edit.
			must("contentManager", "appendContent", map[string]any{"filePath": "Café notes/Crème brûlée.md", "content": "\nMore."})
			refuse("contentManager", "appendContent", map[string]any{"filePath": "Café notes/Crème brûlée.md", "content": "\nMine.", "expectedHash": hash}, "CONFLICT", hash)
			if got := disk("Café notes/Crème brûlée.md"); strings.Contains(got, "Mine.") || !strings.Contains(got, "More.") {
				t.Errorf("after the conflict: %q", got)
			}

			// Paths that leave the vault, on this surface too.
			refuse("contentManager", "readContent", map[string]any{"filePath": "../../etc/passwd"}, "BAD_REQUEST", "leaves the vault")
			refuse("contentManager", "readContent", map[string]any{"filePath": "Outside/secret.md"}, "FORBIDDEN", "leads out of the vault")
			refuse("contentManager", "readContent", map[string]any{"filePath": ".obsidian/app.json"}, "BAD_REQUEST", "hidden")
			refuse("contentManager", "createContent", map[string]any{"filePath": "a\u0000b.md", "content": "x"}, "BAD_REQUEST", "NUL")
			refuse("contentManager", "createContent", map[string]any{"filePath": "CON.md", "content": "x"}, "BAD_REQUEST", "reserves")
			refuse("contentManager", "readContent", map[string]any{"filePath": "Home.md", "vault": "nowhere"}, "NOT_FOUND", "Available vaults: notes, archive")
			refuse("contentManager", "appendContent", map[string]any{"filePath": "Home.md", "content": "x", "vault": "archive"}, "FORBIDDEN", "read-only")
			if r := must("contentManager", "readContent", map[string]any{"filePath": "Home.md", "vault": "archive"}); !strings.Contains(r["content"].(string), "Welcome") {
				t.Errorf("reading the read-only vault: %v", r)
			}

			if surface == "agents" {
				// Seed 000's legacy agentName_<vaultSuffix>: the suffix names
				// the vault.
				out, isErr := callJSON(t, agents, "contentManager_archive", map[string]any{"mode": "appendContent", "sessionId": "s-1", "filePath": "Home.md", "content": "x"})
				if !isErr || out["code"] != "FORBIDDEN" || !strings.Contains(out["error"].(string), "Vault 'archive' is read-only") {
					t.Errorf("contentManager_archive appendContent: %v", out)
				}
				if out, isErr := callJSON(t, agents, "contentManager_notes", map[string]any{"mode": "readContent", "sessionId": "s-1", "filePath": "Home.md"}); isErr || out["success"] != true {
					t.Errorf("contentManager_notes readContent: %v", out)
				}
			}

			// vaultLibrarian.
			sc := must("vaultLibrarian", "searchContent", map[string]any{"query": "integral calculus", "limit": 3})
			if hits := sc["results"].([]any); len(hits) == 0 || hits[0].(map[string]any)["filePath"] != "Courses/Math/MATH 101.md" {
				t.Errorf("searchContent: %v", sc)
			}
			if tagged := must("vaultLibrarian", "searchContent", map[string]any{"query": "#course/first-year"})["results"].([]any); len(tagged) != 2 {
				t.Errorf("searchContent by a nested tag: %v", tagged)
			}
			if hits := must("vaultLibrarian", "searchContent", map[string]any{"query": "credits:3 derivatives"})["results"].([]any); len(hits) != 1 || hits[0].(map[string]any)["filePath"] != "Courses/Math/MATH 100.md" {
				t.Errorf("searchContent with a property: %v", hits)
			}
			sd := must("vaultLibrarian", "searchDirectory", map[string]any{"query": "creme", "paths": []any{"/"}})
			if hits := sd["results"].([]any); len(hits) == 0 || hits[0].(map[string]any)["path"] != "Café notes/Crème brûlée.md" {
				t.Errorf("searchDirectory: %v", sd)
			}
			b := must("vaultLibrarian", "batch", map[string]any{"searches": []any{map[string]any{"query": "transfer"}, map[string]any{"query": "math"}}, "mergeResults": true})
			if b["merged"].(map[string]any)["totalResults"].(float64) < 3 {
				t.Errorf("batch: %v", b)
			}
			refuse("vaultLibrarian", "searchContent", map[string]any{"query": " "}, "BAD_REQUEST", "Query parameter is required and cannot be empty")
			refuse("vaultLibrarian", "searchDirectory", map[string]any{"query": "x", "paths": []any{"../.."}}, "BAD_REQUEST", "leaves the vault")

			// vaultManager.
			list := must("vaultManager", "listDirectory", map[string]any{"path": "/", "depth": 1})
			if s := list["summary"].(map[string]any); s["fileCount"] != 7.0 || s["folderCount"] != 6.0 {
				t.Errorf("listDirectory: %v", list["summary"])
			}
			if l := must("vaultManager", "listDirectory", map[string]any{"path": "Courses", "depth": 5, "filter": "*101*", "filesOnly": true}); l["summary"].(map[string]any)["fileCount"] != 1.0 {
				t.Errorf("listDirectory with a glob: %v", l)
			}
			refuse("vaultManager", "listDirectory", map[string]any{"path": "Nowhere"}, "NOT_FOUND", "Folder not found at path: Nowhere")
			if c := must("vaultManager", "createFolder", map[string]any{"path": "Courses"}); c["existed"] != true {
				t.Errorf("createFolder of an existing folder: %v", c)
			}
			must("vaultManager", "createFolder", map[string]any{"path": "Empty/Inner"})
			mv := must("vaultManager", "moveNote", map[string]any{"path": "Courses/Math/MATH 100.md", "newPath": "Courses/Calculus I.md"})
			if mv["linksRewritten"].(float64) < 4 {
				t.Errorf("moveNote: %v", mv)
			}
			if got := disk("Home.md"); !strings.Contains(got, "[[Courses/Calculus I|first-year calculus]]") {
				t.Errorf("Home after the move:\n%s", got)
			}
			if got := disk("Daily/2026-11-27.md"); !strings.Contains(got, "[[Courses/Calculus I.md|MATH 100]]") {
				t.Errorf("the daily note after the move:\n%s", got)
			}
			must("vaultManager", "editFolder", map[string]any{"path": "Courses", "newPath": "Classes"})
			if got := disk("Home.md"); !strings.Contains(got, "[[Classes/Calculus I|first-year calculus]]") {
				t.Errorf("Home after the folder rename:\n%s", got)
			}
			must("vaultManager", "moveFolder", map[string]any{"path": "Empty", "newPath": "Archive/Empty"})
			dup := must("vaultManager", "duplicateNote", map[string]any{"sourcePath": "Home.md", "targetPath": "Home.md", "autoIncrement": true})
			if dup["targetPath"] != "Home copy.md" || disk("Home copy.md") != disk("Home.md") {
				t.Errorf("duplicateNote: %v", dup)
			}
			must("vaultManager", "deleteNote", map[string]any{"path": "Home copy.md"})
			refuse("vaultManager", "deleteFolder", map[string]any{"path": "Archive"}, "CONFLICT", "Folder is not empty: Archive")
			del := must("vaultManager", "deleteFolder", map[string]any{"path": "Archive", "recursive": true})
			if !strings.HasPrefix(del["trashedTo"].(string), ".trash/") || disk("Home copy.md") != "<missing>" {
				t.Errorf("deleteFolder: %v", del)
			}
			refuse("vaultManager", "openNote", map[string]any{"path": "Home.md"}, "UNPROCESSABLE_ENTITY", "Obsidian")
			refuse("vaultManager", "moveNote", map[string]any{"path": "Home.md", "newPath": "../Home.md"}, "BAD_REQUEST", "leaves the vault")
			refuse("vaultManager", "deleteNote", map[string]any{"path": "Home.md", "vault": "archive"}, "FORBIDDEN", "read-only")
		})
	}
}
