package ids

import (
	"sync"
	"testing"
)

// TestMCPSessionsHold: a held id goes to the holder's request alone, even
// with other sessions starting at the same moment; fresh ids never repeat.
func TestMCPSessionsHold(t *testing.T) {
	m := NewMCPSessions()
	var wg sync.WaitGroup
	got := make(chan string, 200)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := ""
			if i%10 == 0 {
				want = "adopted-" + string(rune('a'+i/10))
			}
			release := m.Hold(want)
			id := m.New()
			release()
			release() // idempotent
			if want != "" && id != want {
				t.Errorf("holder of %q got %q", want, id)
			}
			got <- id
		}()
	}
	// Requests that end before the SDK asks release their hold.
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Hold("never-asked")()
		}()
	}
	wg.Wait()
	close(got)
	seen := map[string]bool{}
	for id := range got {
		if seen[id] {
			t.Errorf("id %q handed out twice", id)
		}
		seen[id] = true
		if id == "never-asked" {
			t.Error("an id whose holder released it was handed out")
		}
	}
	if id := m.New(); id == "" || len(id) < 20 {
		t.Errorf("fresh id %q", id)
	}
}
