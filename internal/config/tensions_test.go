package config

import (
	"strings"
	"testing"
	"time"
)

func TestTensionsSection(t *testing.T) {
	cfg, err := Parse("c.yaml", []byte("toolboxes: {}\ntensions:\n  judge: model\n  timeout: 3s\n  maxPairs: 2\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tensions; got == nil || got.Judge != JudgeModel || got.Timeout != 3*time.Second || got.MaxPairs != 2 {
		t.Fatalf("tensions: %+v", got)
	}
	cfg, err = Parse("c.yaml", []byte("toolboxes: {}\ntensions: {judge: rules}\n"), envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tensions; got == nil || got.Judge != JudgeRules || got.Timeout != DefaultJudgeTimeout || got.MaxPairs != DefaultJudgeMaxPairs {
		t.Fatalf("defaults: %+v", got)
	}
	for _, c := range []struct{ yaml, want string }{
		{"tensions: {judge: llm}", `tensions.judge: "llm" is not a tension judge: rules`},
		{"tensions: {judge: model, timeout: soon}", "tensions.timeout"},
		{"tensions: {judge: model, maxPairs: 0}", "tensions.maxPairs: must be a whole number from 1 to 100"},
		{"tensions: {judge: model, pairs: 3}", `unknown key "pairs"`},
		{"tensions: model", "tensions"},
	} {
		_, err := Parse("c.yaml", []byte("toolboxes: {}\n"+c.yaml+"\n"), envOf(nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err = Parse("c.yaml", []byte("toolboxes: {}\n"), envOf(nil))
	if err != nil || cfg.Tensions != nil {
		t.Errorf("no section: %+v %v", cfg.Tensions, err)
	}
}
