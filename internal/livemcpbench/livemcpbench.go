// Package livemcpbench reads LiveMCPBench (icip-cas/LiveMCPBench, Apache
// 2.0), the tool-search benchmark of issue 27: a catalog of 70 real MCP
// servers with the tools/list of each (527 tools, some described in
// Chinese), and 95 tasks, each a request in natural language with the
// tools a person used to do it. It scores a ranking of the catalog's tools
// for each task: recall at k (the share of a task's tools among the first
// k) and the reciprocal rank of its first tool.
package livemcpbench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Server is one server of the catalog.
type Server struct {
	// Name is the catalog entry's name (the project), Key the name of its
	// server in its configuration (under mcpServers).
	Name, Key   string
	Description string
	Category    string
	Tools       []Tool
}

// Tool is one tool of a server, as its tools/list gives it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Task is one task: its request and the names of the tools its annotator
// used (as the annotation spells them).
type Task struct {
	ID, Question, Category string
	Tools                  []string
}

// Load reads the catalog (tools.json) and the tasks (all_annotations.json)
// of dir.
func Load(dir string) ([]Server, []Task, error) {
	var entries []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Category    string `json:"category"`
		Tools       map[string]struct {
			Tools []Tool `json:"tools"`
		} `json:"tools"`
	}
	if err := readJSON(filepath.Join(dir, "tools.json"), &entries); err != nil {
		return nil, nil, err
	}
	var servers []Server
	for _, e := range entries {
		for key, t := range e.Tools {
			servers = append(servers, Server{Name: e.Name, Key: key, Description: e.Description, Category: e.Category, Tools: t.Tools})
		}
	}
	var ann []struct {
		ID       string `json:"task_id"`
		Question string `json:"Question"`
		Category string `json:"category"`
		Meta     struct {
			Tools string `json:"Tools"`
		} `json:"Annotator Metadata"`
	}
	if err := readJSON(filepath.Join(dir, "all_annotations.json"), &ann); err != nil {
		return nil, nil, err
	}
	tasks := make([]Task, 0, len(ann))
	for _, a := range ann {
		t := Task{ID: a.ID, Question: a.Question, Category: a.Category}
		for _, line := range strings.Split(a.Meta.Tools, "\n") {
			if name := strings.TrimSpace(numbering.ReplaceAllString(line, "")); name != "" {
				t.Tools = append(t.Tools, name)
			}
		}
		tasks = append(tasks, t)
	}
	return servers, tasks, nil
}

// numbering is the "1. " before each tool of an annotation.
var numbering = regexp.MustCompile(`^\s*\d+\.\s*`)

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Gold is the tools of a task that the catalog has (by name): what a search
// of the catalog can find. Missing are the others.
func (t Task) Gold(catalog map[string]bool) (gold, missing []string) {
	seen := map[string]bool{}
	for _, name := range t.Tools {
		if seen[name] {
			continue
		}
		seen[name] = true
		if catalog[name] {
			gold = append(gold, name)
		} else {
			missing = append(missing, name)
		}
	}
	return gold, missing
}

// Recall is the share of gold found among the first k names of ranked (a
// tool's name may be several tools', so a name counts once).
func Recall(ranked, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	top := map[string]bool{}
	for i, name := range ranked {
		if i == k {
			break
		}
		top[name] = true
	}
	found := 0
	for _, g := range gold {
		if top[g] {
			found++
		}
	}
	return float64(found) / float64(len(gold))
}

// ReciprocalRank is 1 over the rank of the first gold name in ranked, 0 if
// none is there.
func ReciprocalRank(ranked, gold []string) float64 {
	for i, name := range ranked {
		for _, g := range gold {
			if name == g {
				return 1 / float64(i+1)
			}
		}
	}
	return 0
}
