package livemcpbench

import (
	"slices"
	"testing"
)

// TestLoad reads an excerpt of the benchmark (testdata: two servers of the
// catalog, three tools each at most, and its first two tasks).
func TestLoad(t *testing.T) {
	servers, tasks, err := Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 2 || len(servers[0].Tools) == 0 || servers[0].Tools[0].Name == "" || servers[0].Key == "" || servers[0].Category == "" {
		t.Fatalf("servers %+v", servers)
	}
	if len(tasks) != 2 || tasks[0].Question == "" {
		t.Fatalf("tasks %+v", tasks)
	}
	if want := []string{"get-weread-rank", "generate_word_cloud_chart", "create_document", "add_paragraph", "add_picture", "convert_to_pdf"}; !slices.Equal(tasks[0].Tools, want) {
		t.Errorf("the first task's tools %q, want %q", tasks[0].Tools, want)
	}
}

func TestScores(t *testing.T) {
	ranked := []string{"a", "x", "b", "a", "y"}
	if r := Recall(ranked, []string{"a", "b", "c", "d"}, 2); r != 0.25 {
		t.Errorf("recall@2 = %v, want 0.25", r)
	}
	if r := Recall(ranked, []string{"a", "b", "c", "d"}, 5); r != 0.5 {
		t.Errorf("recall@5 = %v, want 0.5", r)
	}
	if rr := ReciprocalRank(ranked, []string{"b", "z"}); rr != 1.0/3 {
		t.Errorf("reciprocal rank = %v, want 1/3", rr)
	}
	if rr := ReciprocalRank(ranked, []string{"z"}); rr != 0 {
		t.Errorf("reciprocal rank of nothing found = %v", rr)
	}
	gold, missing := Task{Tools: []string{"a", "a", "q"}}.Gold(map[string]bool{"a": true})
	if !slices.Equal(gold, []string{"a"}) || !slices.Equal(missing, []string{"q"}) {
		t.Errorf("gold %v, missing %v", gold, missing)
	}
}
