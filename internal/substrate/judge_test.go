package substrate_test

import (
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nexus-mcp/nexus/internal/llm"
	"github.com/nexus-mcp/nexus/internal/llm/llmtest"
	"github.com/nexus-mcp/nexus/internal/logtest"
	"github.com/nexus-mcp/nexus/internal/pipeline"
	"github.com/nexus-mcp/nexus/internal/pipeline/pipelinetest"
	"github.com/nexus-mcp/nexus/internal/registry"
	"github.com/nexus-mcp/nexus/internal/store"
	"github.com/nexus-mcp/nexus/internal/store/storetest"
	"github.com/nexus-mcp/nexus/internal/substrate"
)

// judgeHarness is a substrate whose tension judge is model (nil: none),
// with its log captured.
func judgeHarness(t *testing.T, st *store.Store, model llm.Provider, opts substrate.JudgeOptions) (pipelinetest.Valence, *logtest.Capture) {
	t.Helper()
	logs := &logtest.Capture{}
	sub := substrate.New(st, slog.New(logs))
	if model != nil {
		sub.UseJudge(model, opts)
	}
	t.Cleanup(sub.Close)
	reg := registry.New()
	if err := sub.Register(reg); err != nil {
		t.Fatal(err)
	}
	return pipelinetest.Valence{T: t, St: st, P: pipeline.New(pipeline.Options{Registry: reg})}, logs
}

func fakeOpenAI(t *testing.T, url string) llm.Provider {
	t.Helper()
	p, err := llm.NewOpenAI(llm.OpenAIOptions{BaseURL: url, APIKey: "test-key", Model: "judge-model"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// answer scripts the fake to answer text, in two chunks as a stream would.
func answer(text string) llmtest.Script {
	return func(int, *llmtest.Request) llmtest.Answer {
		half := len(text) / 2
		return llmtest.Answer{Chunks: []string{text[:half], text[half:]}}
	}
}

var portEntities = []map[string]any{{"name": "Nexus", "type": "project"}}

// createPorts creates two beliefs the rules flag as a contradiction and
// returns the second create's result.
func createPorts(h pipelinetest.Valence) map[string]any {
	h.T.Helper()
	first := h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 7777", "entities": portEntities})
	if n := len(arr(first["tensions"])); n != 0 {
		h.T.Fatalf("first belief: %d tensions", n)
	}
	return h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 8080", "entities": portEntities})
}

// logged reports whether a record at level or above has a message
// containing msg and an attribute whose value contains attr.
func logged(logs *logtest.Capture, level slog.Level, msg, attr string) bool {
	for _, r := range logs.Records() {
		if r.Level < level || !strings.Contains(r.Message, msg) {
			continue
		}
		found := attr == ""
		r.Attrs(func(a slog.Attr) bool {
			if strings.Contains(a.Value.String(), attr) {
				found = true
			}
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// TestJudgeConfirms: the model says the pair conflicts: the tension is kept
// with the model's reason, in belief_create's result and in the store.
func TestJudgeConfirms(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := llmtest.NewOpenAI(t, answer(`{"conflict": true, "type": "contradiction", "reason": "A service has one default port."}`))
		h, _ := judgeHarness(t, st, fakeOpenAI(t, fake.URL), substrate.JudgeOptions{})
		res := createPorts(h)
		ts := arr(res["tensions"])
		if len(ts) != 1 {
			t.Fatalf("tensions: %v", res["tensions"])
		}
		want := map[string]any{"verdict": "conflict", "type": "contradiction", "reason": "A service has one default port.", "model": "openai judge-model"}
		if got, _ := obj(ts[0])["judge"].(map[string]any); !equalMaps(got, want) {
			t.Fatalf("judge: %v, want %v", got, want)
		}
		listed := arr(h.Call("tension_list", nil)["tensions"])
		if len(listed) != 1 {
			t.Fatalf("tension_list: %v", listed)
		}
		if got, _ := obj(listed[0])["judge"].(map[string]any); !equalMaps(got, want) {
			t.Fatalf("tension_list judge: %v, want %v", got, want)
		}
		reqs := fake.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d model requests, want 1", len(reqs))
		}
		r := reqs[0]
		if len(r.Tools) != 0 || r.Model != "judge-model" {
			t.Fatalf("request: tools %v, model %q", r.ToolNames(), r.Model)
		}
		var prompt strings.Builder
		for _, m := range r.Messages {
			s, _ := m["content"].(string)
			prompt.WriteString(s + "\n")
		}
		for _, s := range []string{`"conflict"`, "A: The default port of Nexus is 7777", "B: The default port of Nexus is 8080"} {
			if !strings.Contains(prompt.String(), s) {
				t.Fatalf("prompt lacks %q:\n%s", s, prompt.String())
			}
		}
	})
}

func equalMaps(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestJudgeDismisses: the model says both can be true: the tension is
// dropped (not returned, not stored) and the dismissal logged.
func TestJudgeDismisses(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := llmtest.NewOpenAI(t, answer("```json\n{\"conflict\": false, \"type\": null, \"reason\": \"Different releases.\"}\n```"))
		h, logs := judgeHarness(t, st, fakeOpenAI(t, fake.URL), substrate.JudgeOptions{})
		res := createPorts(h)
		if n := len(arr(res["tensions"])); n != 0 {
			t.Fatalf("dismissed tension returned: %v", res["tensions"])
		}
		if n := h.Count("tensions"); n != 0 {
			t.Fatalf("%d tensions stored after the judge dismissed the only one", n)
		}
		if len(fake.Requests()) != 1 {
			t.Fatalf("%d model requests, want 1", len(fake.Requests()))
		}
		if !logged(logs, slog.LevelDebug, "dismissed", "Different releases.") {
			t.Fatal("the dismissal was not logged")
		}
	})
}

// TestJudgeFallsBack: when the model fails, is too slow or answers
// something else than the JSON asked for, the rules' verdict stays (the
// tension is kept, without a judgment) and the failure is logged.
func TestJudgeFallsBack(t *testing.T) {
	down := httptest.NewServer(nil)
	downURL := down.URL + "/v1"
	down.Close()
	cases := []struct {
		name   string
		script llmtest.Script // nil: the provider is unreachable
		opts   substrate.JudgeOptions
		want   string // in the logged error
	}{
		{"timeout", func(int, *llmtest.Request) llmtest.Answer {
			return llmtest.Answer{Chunks: []string{`{"conflict": false, "reason": "late"}`}, Delay: 30 * time.Second}
		}, substrate.JudgeOptions{Timeout: 100 * time.Millisecond}, "no answer within"},
		{"malformed", answer(`Yes, they conflict: {"conflict": true}`), substrate.JudgeOptions{}, "malformed answer"},
		{"no conflict field", answer(`{"verdict": "no"}`), substrate.JudgeOptions{}, "no conflict field"},
		{"unavailable", func(int, *llmtest.Request) llmtest.Answer { return llmtest.Answer{Fail: 503} }, substrate.JudgeOptions{}, "openai judge-model"},
		{"unreachable", nil, substrate.JudgeOptions{}, "openai judge-model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
				url := downURL
				var fake *llmtest.OpenAI
				if c.script != nil {
					fake = llmtest.NewOpenAI(t, c.script)
					url = fake.URL
				}
				h, logs := judgeHarness(t, st, fakeOpenAI(t, url), c.opts)
				res := createPorts(h)
				ts := arr(res["tensions"])
				if len(ts) != 1 {
					t.Fatalf("the rules' tension was not kept: %v", res["tensions"])
				}
				if j, ok := obj(ts[0])["judge"]; ok {
					t.Fatalf("a judgment without an answer: %v", j)
				}
				if h.Count("tensions") != 1 {
					t.Fatalf("%d tensions stored, want 1", h.Count("tensions"))
				}
				if fake != nil && len(fake.Requests()) != 1 {
					t.Fatalf("%d model requests, want 1", len(fake.Requests()))
				}
				if !logged(logs, slog.LevelWarn, "tension judge failed", c.want) {
					t.Fatalf("no warning with %q; logged: %v", c.want, logs.Records())
				}
			})
		})
	}
}

// TestJudgeOffByDefault: without a judge the model is never asked; with
// one, batches (belief_create_batch, nexus import beliefs) are not judged
// either, and at most MaxPairs tensions of one write are.
func TestJudgeOffByDefault(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := llmtest.NewOpenAI(t, answer(`{"conflict": false, "reason": "never asked"}`))
		h, _ := judgeHarness(t, st, nil, substrate.JudgeOptions{})
		if n := len(arr(createPorts(h)["tensions"])); n != 1 {
			t.Fatalf("rules alone: %d tensions, want 1", n)
		}
		if n := len(fake.Requests()); n != 0 {
			t.Fatalf("no judge configured, but the model got %d requests", n)
		}
	})
}

func TestJudgeSkipsBatchesAndBoundsPairs(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := llmtest.NewOpenAI(t, answer(`{"conflict": true, "type": "contradiction", "reason": "One default port."}`))
		h, _ := judgeHarness(t, st, fakeOpenAI(t, fake.URL), substrate.JudgeOptions{MaxPairs: 2})
		items := []any{}
		for _, port := range []int{7777, 8080, 9090} {
			items = append(items, map[string]any{"content": "The default port of Nexus is " + strconv.Itoa(port), "entities": portEntities})
		}
		res := h.Call("belief_create_batch", map[string]any{"beliefs": items})
		if h.Count("tensions") != 3 {
			t.Fatalf("batch: %d tensions, want 3: %v", h.Count("tensions"), res)
		}
		if n := len(fake.Requests()); n != 0 {
			t.Fatalf("a batch asked the model %d times", n)
		}
		// A fourth port contradicts all three: three tensions, two judged.
		c := h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 4000", "entities": portEntities})
		ts := arr(c["tensions"])
		judged := 0
		for _, x := range ts {
			if _, ok := obj(x)["judge"]; ok {
				judged++
			}
		}
		if len(ts) != 3 || judged != 2 || len(fake.Requests()) != 2 {
			t.Fatalf("%d tensions, %d judged, %d requests; want 3, 2, 2", len(ts), judged, len(fake.Requests()))
		}
	})
}

// TestJudgeSupersedeAnthropic: belief_supersede is judged too, here by a
// model on Anthropic's wire.
func TestJudgeSupersedeAnthropic(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		fake := llmtest.NewAnthropic(t, func(int, *llmtest.AnthropicRequest) llmtest.Answer {
			return llmtest.Answer{Chunks: []string{`{"conflict": false, `, `"type": null, "reason": "The old port was replaced."}`}}
		})
		model, err := llm.NewAnthropic(llm.AnthropicOptions{BaseURL: fake.URL, APIKey: "test-key", Model: "claude-judge"})
		if err != nil {
			t.Fatal(err)
		}
		h, _ := judgeHarness(t, st, model, substrate.JudgeOptions{})
		h.Call("belief_create", map[string]any{"content": "The default port of Nexus is 7777", "entities": portEntities})
		old := h.Call("belief_create", map[string]any{"content": "Nexus is written in Go", "entities": portEntities})
		res := h.Call("belief_supersede", map[string]any{"old_belief_id": obj(old["belief"])["id"],
			"new_content": "The default port of Nexus is 8080", "reason": "port change"})
		if n := len(arr(res["tensions"])); n != 0 || h.Count("tensions") != 0 {
			t.Fatalf("dismissed tension kept: %v (%d stored)", res["tensions"], h.Count("tensions"))
		}
		reqs := fake.Requests()
		if len(reqs) != 1 || len(reqs[0].Tools) != 0 || len(reqs[0].System) == 0 {
			t.Fatalf("requests: %+v", reqs)
		}
	})
}
